// `npm run indexer`: indexes the chain at RPC_URL for a network of subgraph/networks.json into
// DATA_DIR and serves the graph-node query dialect on PORT, with a progress display during sync.
//
// Exit codes: 2 when a variable is refused as read ("configuration error: ..."), 1 when start-up
// fails on what the values name ("start-up error: ...": DATA_DIR not a writable directory or on a
// full disk, a damaged store, PORT in use, the subgraph not built, the node refusing), each in one
// line naming what to fix; an error that is no such message (a bug) adds its stack after that line.
// 0 after SIGINT/SIGTERM, during start-up too.
import { resolve, sep } from 'node:path';
import { redactUrl } from '../common/url.ts';
import { indexerConfigFromEnv, shownPath, type IndexerEnvConfig } from './config.ts';
import { DEFAULT_BUILD_DIR } from './deployment.ts';
import { createIndexer, type Indexer } from './indexer.ts';
import { createProgressDisplay } from './progress.ts';

let config: IndexerEnvConfig;
try {
  config = indexerConfigFromEnv(process.env);
} catch (error) {
  console.error(`configuration error: ${(error as Error).message}`);
  process.exit(2);
}

const rpcShown = redactUrl(config.rpcUrl);
/**
 * `text` with the RPC URL, which may carry an API key or a password, as redactUrl shows it. Only
 * that URL: the lines this process prints name its own query endpoint, which a reader needs whole.
 */
const redacted = (text: string): string => {
  let out = text.replaceAll(config.rpcUrl, rpcShown);
  try {
    out = out.replaceAll(new URL(config.rpcUrl).href, rpcShown);
  } catch {
    // validated as a URL already
  }
  return out;
};
const within = (path: string, dir: string): boolean => path === dir || path.startsWith(dir + sep);

type SystemError = Error & {
  code?: string;
  path?: string;
  syscall?: string;
  address?: string;
  port?: number;
};

/** One line saying what failed at start-up and what to change, or null for an error not foreseen. */
function startupProblem(error: SystemError, storePath: string | null): string | null {
  const { code, path } = error;
  const port = `${error.address ?? '127.0.0.1'}:${error.port ?? config.port}`;
  if (error.syscall === 'listen' || code === 'EADDRINUSE') {
    const why =
      code === 'EADDRINUSE'
        ? 'is already in use (another indexer still running?)'
        : `cannot be listened on (${code})`;
    return `PORT: ${port} ${why}; set PORT to a free port (decimal, 1-65535), or 0 to pick one`;
  }
  if (code === 'ENOENT' && path && within(resolve(path), DEFAULT_BUILD_DIR)) {
    return `the subgraph build is missing ${shownPath(path)}: run \`npm run build:subgraph\` (or \`npm run build\`)`;
  }
  const dataDir = shownPath(config.dataDir);
  const store = storePath ? shownPath(storePath) : `in ${dataDir}`;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') {
    return `DATA_DIR: the disk is full: the store ${store} cannot be written (${code}); free space on it, or set DATA_DIR to a directory on a disk with room, now ${dataDir}`;
  }
  if (code?.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return `the store ${store} is damaged (${error.message}, ${code}): delete it and its -wal and -shm files to index again from the start block`;
  }
  const dataDirProblem = (what: string) =>
    `DATA_DIR: ${what}; DATA_DIR must name a writable directory (the store lives in <DATA_DIR>/indexer), now ${dataDir}`;
  const inDataDir = path !== undefined && within(resolve(path), config.dataDir);
  const fileSystem = ['ENOTDIR', 'EEXIST', 'EACCES', 'EPERM', 'EROFS'];
  if (code && (inDataDir || (path === undefined && fileSystem.includes(code)))) {
    const target = path ? shownPath(path) : dataDir;
    const why = {
      ENOTDIR: 'a part of the path is a file, not a directory',
      EEXIST: 'it exists and is not a directory',
      EROFS: 'the file system is read-only',
      SQLITE_CANTOPEN: 'it cannot be created or opened',
      SQLITE_READONLY: 'it is read-only',
      // what mkdir answers where the file system makes no directories (procfs), the parent being there
      ENOENT: error.syscall === 'mkdir' ? 'the file system there makes no directories' : undefined,
    }[code];
    return dataDirProblem(`cannot create or write ${target} (${why ?? code})`);
  }
  if (
    code?.startsWith('SQLITE_CANTOPEN') ||
    code?.startsWith('SQLITE_READONLY') ||
    code?.startsWith('SQLITE_PERM')
  ) {
    return dataDirProblem(`cannot open the store ${store} (${error.message})`);
  }
  // messages written for the user (a plain Error); TypeErrors and the like are bugs
  if (error.constructor === Error && !code) return error.message;
  if (code) return `${error.message} (${code})`;
  return null;
}

function failStartup(error: unknown, storePath: string | null): never {
  const e = (error instanceof Error ? error : new Error(String(error))) as SystemError;
  const problem = startupProblem(e, storePath);
  console.error(`start-up error: ${redacted(problem ?? e.message)}`);
  // an error nobody foresaw is a bug: its stack, after the line that says what happened
  if (problem === null && e.stack) console.error(redacted(e.stack));
  process.exit(1);
}

const tty = Boolean(process.stdout.isTTY);
const log = (line: string): void => {
  process.stdout.write(`${tty ? '\r\x1b[K' : ''}${redacted(line)}\n`);
};
/** the last block committed, as the progress reports tell it */
let committed: number | null = null;
const display = createProgressDisplay({ write: (text) => process.stdout.write(text), tty });
let indexer: Indexer;
/** set once start() has resolved: a signal before then ends the start-up */
let indexing = false;
/** The indexer's status, or null when it cannot say (not started, or stopped). */
const statusNow = (): ReturnType<Indexer['status']> | null => {
  try {
    return indexer.status();
  } catch {
    return null;
  }
};
// stopping is handled before anything is said, so a signal right after a start-up line is not fatal
let stopping = false;
const stop = (signal: NodeJS.Signals): void => {
  if (stopping) return;
  stopping = true;
  if (!indexing) {
    // start() cannot be cut short (it may wait some 20 s for a node that does not answer), and
    // nothing is written before it has resolved: ending the process loses nothing, and the
    // kernel gives the store's lock back
    log(`indexer: stopped (${signal}) before indexing began`);
    process.exit(0);
  }
  const atSignal = statusNow()?.checkpoint ?? null;
  indexer.stop().then(
    () => {
      const at = Math.max(atSignal ?? -1, committed ?? -1);
      // ends a status line drawn in place
      display.stop();
      log(at >= 0 ? `indexer: stopped (${signal}) at block ${at}` : `indexer: stopped (${signal})`);
      process.exit(0);
    },
    (error: Error) => {
      console.error(`indexer: stopping failed: ${redacted(error.message)}`);
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

try {
  indexer = await createIndexer({
    rpcUrl: config.rpcUrl,
    network: config.network,
    dataDir: config.dataDir,
    port: config.port,
    pollIntervalMs: config.pollIntervalMs,
    maxRange: config.maxBlockRange,
    maxRangesAhead: config.rangesAhead,
    maxAddressesPerRequest: config.getLogsMaxAddresses,
    staticFiltersAbove: config.staticFiltersThreshold,
    transactions: config.transactions,
    files: config.files,
    commitIntervalMs: config.commitIntervalMs,
    historyBlocks: config.historyBlocks,
    reorgThreshold: config.reorgThreshold,
    disableFailFast: config.disableFailFast,
    subgraphName: config.subgraphName,
    queryMaxResultBytes: config.queryMaxResultBytes,
    queryTimeoutMs: config.queryTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    rpcTimeoutMs: config.rpcTimeoutMs,
    onProgress: (progress) => {
      committed = progress.checkpoint;
      display(progress);
    },
    log,
  });
} catch (error) {
  failStartup(error, null);
}
try {
  await indexer.start();
  indexing = true;
} catch (error) {
  failStartup(error, indexer.storePath);
}

log(`indexer: ${config.network} via ${rpcShown}; store ${indexer.storePath}`);
const started = statusNow();
if (started && started.checkpoint >= started.startBlock) {
  log(
    `indexer: resuming after block ${started.checkpoint}, the last one in the store (${indexer.storePath})`,
  );
} else if (started) {
  log(`indexer: new store, indexing from block ${started.startBlock}`);
}
log(`query endpoint: ${indexer.queryUrl}`);
