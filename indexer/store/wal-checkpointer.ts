// Moves SQLite's WAL checkpoints (copying committed pages into the database file, then fsync) off
// the indexing thread: a worker thread with its own connection checkpoints passively every few
// hundred milliseconds while the writer, whose automatic checkpoints are off, keeps committing.
// A passive checkpoint never blocks the writer or readers; it copies what it can.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Plain CommonJS so the worker needs no TypeScript loader.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let db = null;
let timer = null;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 1000');
  timer = setInterval(() => {
    try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (error) { parentPort.postMessage(String(error)); }
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

export interface WalCheckpointer {
  /** asks the worker to close its connection and exit */
  stop(): void;
}

export function startWalCheckpointer(
  path: string,
  intervalMs = 250,
  onError?: (message: string) => void,
): WalCheckpointer {
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: { path, intervalMs, module: createRequire(import.meta.url).resolve('better-sqlite3') },
    // nothing of the parent's flags (a TypeScript loader such as `--import tsx` among them) and a
    // small heap: the thread holds one connection and a timer
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
  });
  worker.on('message', (message: string) => onError?.(message));
  worker.on('error', (error) => onError?.(String(error)));
  worker.unref();
  return { stop: () => worker.postMessage('stop') };
}
