// `npm run indexer`: indexes the chain at RPC_URL for a network of subgraph/networks.json into
// DATA_DIR and serves the graph-node query dialect on PORT, with a progress display during sync.
//
// Exit codes: 2 when a variable is refused as read ("configuration error: ..."), 1 when start-up
// fails on what the values name ("start-up error: ...": DATA_DIR not a writable directory or on a
// full disk, a store file this user may not write, a damaged store, PORT in use, the subgraph not
// built, the node refusing), each in one line naming what to fix; an error that is no such message
// (a bug) adds its stack after that line. 0 after SIGINT/SIGTERM, during start-up too.
// Once indexing, it says where it starts, and names the stores earlier builds of the subgraph left.
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { redactUrl } from '../common/url.ts';
import { indexerConfigFromEnv, shownPath, type IndexerEnvConfig } from './config.ts';
import { DEFAULT_BUILD_DIR, otherStores, type OtherStore } from './deployment.ts';
import { createIndexer, type Indexer } from './indexer.ts';
import { createProgressDisplay } from './progress.ts';
import { damagedStoreMessage, isStoreDamage } from './store/sqlite-store.ts';

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

/** `name (uid N)` as /etc/passwd names the user, or `uid N` where it does not. */
function account(uid: number): string {
  try {
    const entry = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((line) => line.split(':')[2] === String(uid));
    if (entry) return `${entry.split(':')[0]} (uid ${uid})`;
  } catch {
    // no /etc/passwd here: the number alone
  }
  return `uid ${uid}`;
}

/**
 * Which of the files SQLite writes for the store this process may not write, and why: the file
 * system read-only, or the first of the store's directory, the store, its -wal and -shm files and
 * its lock file that this user may not write (owner and mode). SQLite says only that it cannot
 * open or write "the database". Null where each looks writable (or is not there to be written).
 */
function unwritableStoreFile(storePath: string): string | null {
  const dir = dirname(storePath);
  const files = [
    {
      path: dir,
      mode: constants.W_OK | constants.X_OK,
      named: 'the directory ',
      refused: 'create files in it',
    },
    ...['', '-wal', '-shm', '.lock'].map((suffix) => ({
      path: storePath + suffix,
      mode: constants.R_OK | constants.W_OK,
      named: '',
      refused: 'write it',
    })),
  ];
  for (const { path, mode, named, refused } of files) {
    try {
      accessSync(path, mode);
    } catch (error) {
      const { code } = error as SystemError;
      if (code === 'ENOENT') continue;
      if (code === 'EROFS') {
        return `the file system holding ${shownPath(dir)} is mounted read-only; mount it read-write, or set DATA_DIR to a directory on a writable one, now ${shownPath(config.dataDir)}`;
      }
      const owner = statSync(path);
      const user = process.getuid ? account(process.getuid()) : 'this process';
      const permissions = (owner.mode & 0o7777).toString(8).padStart(4, '0');
      return `${named}${shownPath(path)} is owned by ${account(owner.uid)}, group ${owner.gid}, mode ${permissions}, and the indexer runs as ${user}, who may not ${refused}; give it to that user (chown), or run the indexer as its owner`;
    }
  }
  return null;
}

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
  if (isStoreDamage(error)) return damagedStoreMessage(store, `${error.message}, ${code}`);
  const accessRefused = /^(SQLITE_(READONLY|CANTOPEN|PERM)|EROFS$|EACCES$|EPERM$)/.test(code ?? '');
  const unwritable = storePath && accessRefused ? unwritableStoreFile(storePath) : null;
  if (unwritable) return `DATA_DIR: cannot write the store ${store} (${error.message}): ${unwritable}`;
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

/**
 * The stores `others` named with their size and last block, and that they may go once the store in
 * use has caught up: nothing deletes them, since going back to the build that made one resumes it.
 */
function otherStoresLeft(others: readonly OtherStore[]): string {
  const shown = others.map(({ path, bytes, indexedTo }) => {
    const indexed = indexedTo === null ? '' : `, indexed to block ${indexedTo}`;
    return `${path} (${(bytes / 1e6).toFixed(1)} MB${indexed})`;
  });
  return others.length === 1
    ? `the previous store ${shown[0]} is left: delete it and its -wal and -shm files once the new one has caught up`
    : `the previous stores ${shown.join(', ')} are left: delete them and their -wal and -shm files once the new one has caught up`;
}

log(`indexer: ${config.network} via ${rpcShown}; store ${indexer.storePath}`);
const started = statusNow();
const others = otherStores(indexer.storePath, config.network);
if (started && started.checkpoint >= started.startBlock) {
  log(
    `indexer: resuming after block ${started.checkpoint}, the last one in the store (${indexer.storePath})`,
  );
  if (others.length > 0) log(`indexer: ${otherStoresLeft(others)}`);
} else if (started && others.length > 0) {
  log(
    `indexer: the subgraph build changed: indexing from block ${started.startBlock} into a new store ${indexer.storePath}; ${otherStoresLeft(others)}`,
  );
} else if (started) {
  log(`indexer: new store, indexing from block ${started.startBlock}`);
}
log(`query endpoint: ${indexer.queryUrl}`);
