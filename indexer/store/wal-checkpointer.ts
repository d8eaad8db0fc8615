// Moves SQLite's WAL checkpoints (copying committed pages into the database file, then fsync) off
// the indexing thread: a worker thread with its own connection checkpoints passively every few
// hundred milliseconds while the writer, whose automatic checkpoints are off, keeps committing.
// A passive checkpoint never blocks the writer or readers; it copies what it can. The writer's own
// checkpoints (the WAL truncated, on close and when it grew too large) take turns with the
// worker's, since SQLite refuses a checkpoint while another runs rather than waiting for it.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** A checkpoint that failed: SQLite's code (SQLITE_FULL, SQLITE_IOERR_WRITE...) and message. */
export interface CheckpointFailure {
  code: string;
  message: string;
}

/**
 * Takes the turn `turn` holds (0: free, 1: taken), waiting at most `waitMs`; false if that was not
 * enough. The worker runs it too, from its source.
 */
function takeTurn(turn: Int32Array, waitMs: number): boolean {
  const deadline = performance.now() + waitMs;
  while (Atomics.compareExchange(turn, 0, 0, 1) !== 0) {
    const left = deadline - performance.now();
    if (left <= 0) return false;
    Atomics.wait(turn, 0, 1, left);
  }
  return true;
}

function giveTurn(turn: Int32Array): void {
  Atomics.store(turn, 0, 0);
  Atomics.notify(turn, 0);
}

// Plain CommonJS so the worker needs no TypeScript loader.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const takeTurn = ${takeTurn.toString()};
const giveTurn = ${giveTurn.toString()};
let db = null;
let timer = null;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 1000');
  timer = setInterval(() => {
    takeTurn(workerData.turn, Infinity);
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      parentPort.postMessage({ code: String(error.code ?? error.name), message: String(error.message) });
    } finally {
      giveTurn(workerData.turn);
    }
  }, workerData.intervalMs);
} catch (error) {
  // the store was closed (and maybe deleted) before this thread started: nothing to checkpoint
}
parentPort.on('message', () => {
  if (timer) clearInterval(timer);
  if (db) db.close();
  parentPort.close();
});
`;

/**
 * How long the writer waits for the worker's checkpoint to end; a worker that died in one (out of
 * memory) holds the turn forever, and the writer's checkpoint is then tried without it.
 */
const TURN_WAIT_MS = 10_000;

export interface WalCheckpointer {
  /** runs `checkpoint` between two of the worker's checkpoints, which wait for it */
  between<T>(checkpoint: () => T): T;
  /** asks the worker to close its connection and exit */
  stop(): void;
}

export function startWalCheckpointer(
  path: string,
  onFailure: (failure: CheckpointFailure) => void,
  intervalMs = 250,
): WalCheckpointer {
  const turn = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: { path, intervalMs, turn, module: createRequire(import.meta.url).resolve('better-sqlite3') },
    // nothing of the parent's flags (a TypeScript loader such as `--import tsx` among them) and a
    // small heap: the thread holds one connection and a timer
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
  });
  worker.on('message', onFailure);
  worker.on('error', (error: NodeJS.ErrnoException) =>
    onFailure({ code: error.code ?? error.name, message: error.message }),
  );
  worker.unref();
  return {
    between(checkpoint) {
      const taken = takeTurn(turn, TURN_WAIT_MS);
      try {
        return checkpoint();
      } finally {
        if (taken) giveTurn(turn);
      }
    },
    stop: () => worker.postMessage('stop'),
  };
}
