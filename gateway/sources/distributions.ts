// The dividend distribution source. A round's on-chain event carries a Merkle root, a total, a leaf
// count and the URI of its distribution (an OpenZeppelin StandardMerkleTree dump with leaves
// [address, uint256]). Before any proof is computed the file is read within limits (its size, the
// time allowed, how many are read at once) and checked against the round: its root, leaf count and
// leaf sum must be the on-chain ones and each address must have one leaf, since a proof from any
// other tree would fail on-chain or pay someone else's share. The checks and the hashing of every
// leaf and node take a core for seconds on a large file (15-30 s for 200,000 leaves), so they run
// on a thread of their own (distribution-verifier.ts), one per file being checked, within a heap
// limit and a time limit, while this thread goes on answering other requests. A file failing a
// check is refused with the check it failed; that verdict is kept a short time, so a client
// retrying in a loop does not make the service read the file again each time. Verified trees are
// kept, as the flat tables the verifier packs them in, up to a count and a byte budget.
import { constants, open, realpath } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { readAtMost } from '../../common/bounded-fetch.ts';
import { checkThreadBundle } from '../../common/thread-bundle.ts';
import { GatewayError, notFound, upstreamRefused, upstreamUnavailable } from '../errors.ts';
import { ADDRESS_PATTERN } from '../inputs.ts';
import {
  findLeaf,
  rootOf,
  type DistributionLeaf,
  type DistributionTables,
  type VerifierData,
  type VerifierInput,
  type VerifierOutcome,
} from './distribution-verifier.ts';

/**
 * Whether a DISTRIBUTIONS_BASE is a base URL, rather than a directory: it starts with a scheme and
 * "//". The service's configuration (rest/service-config.ts) refuses one that is not http(s), so
 * that one mistyped or of another scheme (s3://, ftp://) is not taken for a relative directory.
 */
export const isUrlBase = (base: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(base);

export interface DistributionsConfig {
  /** a local directory or an http(s) base URL; undefined when proofs are not served */
  base: string | undefined;
  /** how long one distribution may take to arrive once its read starts, and a request may wait for its read to start */
  timeoutMs: number;
  /** how many verified trees are kept (at most CACHED_DISTRIBUTION_BYTES of tables in all) */
  cacheSize: number;
  /** how long a refused file's verdict is kept before the file is read again (REFUSAL_TTL_MS) */
  refusalTtlMs?: number;
  /** how long checking a file that arrived may take (VERIFICATION_TIMEOUT_MS) */
  verificationTimeoutMs?: number;
  /** the heap of the thread checking a file, MiB (VERIFIER_HEAP_MB) */
  verifierHeapMb?: number;
}

/** What the chain says of a round's distribution: the file must agree with all of it. */
export interface DistributionRound {
  uri: string;
  merkleRoot: string;
  /** sum of the leaves, base units, decimal */
  total: string;
  leafCount: number;
}

interface VerifiedDistribution {
  /** the tree's root as its file writes it */
  root: string;
  /** the leaf of `account` (lowercase 0x address) with its proof, undefined when it has none */
  leafOf(account: string): DistributionLeaf | undefined;
}

export interface DistributionSource {
  /**
   * Reads and verifies the distribution of a round; throws UPSTREAM_UNAVAILABLE naming the reason,
   * `lasting` when the file itself is at fault.
   */
  load(round: DistributionRound): Promise<VerifiedDistribution>;
}

/**
 * The largest distribution file read, in bytes (decoded, for a compressed HTTP answer). A
 * standard-v1 dump takes ~240 bytes per leaf as `JSON.stringify(tree.dump())` writes it (18-decimal
 * amounts; ~300 pretty-printed, ~355 with 78-digit amounts): 64 MiB holds 200,000 recipients with room
 * to spare. Anything larger is refused before it is read whole.
 */
export const MAX_DISTRIBUTION_BYTES = 64 * 1024 * 1024;

/**
 * How many distributions are read and checked at once; the others wait in line. A
 * file read holds one of libuv's four threadpool threads until the file system answers (a hung
 * network mount never does), so a reader's place is freed only when its read ends, not when its
 * request gives up; then the file's check holds it until its thread has exited. At most this many
 * verifier threads run, each with its file and its heap (VERIFIER_HEAP_MB).
 */
const DISTRIBUTION_READERS = 2;

/**
 * The verified trees kept, in bytes of their tables: all the memory a kept tree holds, ~224 bytes
 * per leaf (45 MB for 200,000 leaves).
 */
const CACHED_DISTRIBUTION_BYTES = 2 * MAX_DISTRIBUTION_BYTES;

/**
 * How long checking a file that arrived may take before its thread is stopped and the request
 * answered 503 (retry later). Measured: 15-30 s for 200,000 leaves, 40-50 s on a busy machine for
 * the largest file that can pass (64 MiB written as tightly as JSON allows, ~305,000 leaves).
 */
const VERIFICATION_TIMEOUT_MS = 120_000;

/**
 * The heap of a verifier thread, MiB. Checking the largest file that can pass (~305,000 leaves)
 * needs between 128 and 192 MiB; a file needing more (JSON built to take memory) ends its thread,
 * and is refused, before it can take the service's memory.
 */
const VERIFIER_HEAP_MB = 384;

/** How long a refusal (a file failing a check, a uri that cannot be read) is answered without reading again. */
const REFUSAL_TTL_MS = 30_000;

const UPSTREAM = 'dividend distribution';

/** A uri as the client may see it: it comes from the chain, so it is quoted and kept short. */
function quoted(uri: string): string {
  return JSON.stringify(uri.length > 200 ? `${uri.slice(0, 200)}…` : uri);
}

function refused(uri: string, reason: string, cause?: unknown): GatewayError {
  return upstreamRefused(UPSTREAM, `${quoted(uri)} ${reason}`, cause);
}

function unavailable(uri: string, reason: string, cause?: unknown): GatewayError {
  return upstreamUnavailable(UPSTREAM, cause, `${quoted(uri)} ${reason}`);
}

/**
 * A slot for each reader. A job waiting for one keeps its place however long: a request that stops
 * waiting for it leaves it queued, so that its retry finds the file checked or being checked.
 */
function createReaderSlots(slots: number) {
  let taken = 0;
  const waiting: (() => void)[] = [];
  // a freed slot goes straight to the next waiter, so no newcomer can take it in between
  const give = () => {
    const next = waiting.shift();
    if (next) next();
    else taken--;
  };
  return {
    /**
     * Runs `job` in a slot, held until `job` ends; `granted` is called as it starts (at once when a
     * slot is free).
     */
    async run<T>(job: () => Promise<T>, granted: () => void): Promise<T> {
      if (taken < slots) taken++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      granted();
      const running = job();
      running.then(give, give);
      return running;
    },
  };
}

/** `work`, or a rejection with `signal.reason` as soon as `signal` aborts (work may go on). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

async function fetchDump(base: string, uri: string, signal: AbortSignal): Promise<Buffer> {
  const scheme = SCHEME.exec(uri)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') {
    throw refused(uri, `uses the ${scheme}: scheme; the service fetches http(s) URLs only`);
  }
  let url: URL;
  try {
    url = new URL(uri, base.endsWith('/') ? base : `${base}/`);
  } catch (error) {
    throw refused(uri, 'is not a valid URL', error);
  }
  let response: Response;
  try {
    response = await fetch(url, { signal });
  } catch (error) {
    throw unavailable(uri, 'could not be fetched from the distribution server', error);
  }
  if (!response.ok) {
    await response.body?.cancel();
    const status = response.status;
    const cause = new Error(`GET ${url.href} answered ${status}`);
    if (status === 404 || status === 410) throw refused(uri, `does not exist (HTTP ${status})`, cause);
    if (status >= 500 || status === 408 || status === 429) {
      throw unavailable(uri, `could not be fetched: the distribution server answered HTTP ${status}`, cause);
    }
    throw refused(uri, `was refused by the distribution server (HTTP ${status})`, cause);
  }
  try {
    // fetch decodes a compressed answer: the count is of what it inflates to
    const bytes = await readAtMost(response, {
      maxBytes: MAX_DISTRIBUTION_BYTES,
      tooLarge: (seen) => tooLarge(uri, seen),
      signal,
    });
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw unavailable(uri, 'was cut off by the distribution server', error);
  }
}

function tooLarge(uri: string, seen: string): GatewayError {
  return refused(
    uri,
    `is larger than ${MAX_DISTRIBUTION_BYTES} bytes (64 MiB), the most this service reads of one distribution`,
    new Error(seen),
  );
}

function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** A file system error of reading `uri` as the client may see it; its code and path stay in `cause`. */
function fileError(uri: string, error: unknown): GatewayError {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
    case 'ENOTDIR':
    case 'ENAMETOOLONG':
      return refused(uri, 'does not exist in the distribution directory', error);
    case 'EACCES':
    case 'EPERM':
      return refused(uri, 'may not be read by the service (file permissions)', error);
    case 'ELOOP':
      return refused(uri, 'is a loop of symbolic links', error);
    case 'ERR_INVALID_ARG_VALUE':
      return refused(uri, 'is not a file path (it holds a NUL character)', error);
    default:
      return unavailable(uri, 'could not be read from the distribution directory', error);
  }
}

async function readDumpFile(base: string, uri: string): Promise<Buffer> {
  const scheme = SCHEME.exec(uri)?.[1];
  if (scheme !== undefined) {
    throw refused(uri, `uses the ${scheme}: scheme; a distribution directory is read by relative paths only`);
  }
  const leaves = (from: string, to: string) => {
    const relative = path.relative(from, to);
    return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
  };
  // The uri comes from the chain: it may name no file outside the base directory, by its path
  // (../, an absolute path) or through a symbolic link.
  if (leaves(path.resolve(base), path.resolve(base, uri))) {
    throw refused(uri, 'leaves the distribution directory');
  }
  let file: string;
  try {
    const root = await realpath(base);
    file = await realpath(path.resolve(root, uri));
    if (leaves(root, file)) throw refused(uri, 'leaves the distribution directory through a symbolic link');
  } catch (error) {
    throw error instanceof GatewayError ? error : fileError(uri, error);
  }
  let handle;
  try {
    // non-blocking, so that opening a named pipe does not wait for a writer, holding a thread;
    // no symbolic link is followed, so the file opened is the one whose path was checked
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    throw fileError(uri, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw refused(uri, `is ${fileKind(stats)}, not a regular file`);
    if (stats.size > MAX_DISTRIBUTION_BYTES) throw tooLarge(uri, `${stats.size} bytes on disk`);
    const buffer = Buffer.allocUnsafe(stats.size);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } catch (error) {
    throw error instanceof GatewayError ? error : fileError(uri, error);
  } finally {
    await handle.close();
  }
}

/** The verifier thread runs the bundle of distribution-verifier.ts (see common/thread-bundle.ts). */
const VERIFIER = new URL('../../build/gateway-distribution-verifier.mjs', import.meta.url);

/**
 * The tables of the distribution `file` of `round`, checked on a thread of its own within `limits`;
 * else its refusal, or unavailability when the thread fails or takes too long. Settles once the
 * thread has exited: no check goes on after its request is answered.
 */
function verifyApart(
  round: DistributionRound,
  file: Buffer,
  limits: { timeoutMs: number; heapMb: number },
): Promise<DistributionTables> {
  const { uri } = round;
  // a Buffer owning its whole memory (a file's, read whole) moves to the thread; a small one, a
  // slice of Node's shared pool, is copied: moving the pool would empty every Buffer in it
  const owned = file.byteOffset === 0 && file.byteLength === file.buffer.byteLength;
  const moved = owned ? new Uint8Array(file.buffer as ArrayBuffer) : new Uint8Array(file);
  const input: VerifierInput = {
    file: moved,
    round: { merkleRoot: round.merkleRoot, total: round.total, leafCount: round.leafCount },
    addressPattern: ADDRESS_PATTERN,
  };
  return new Promise((resolve, reject) => {
    const worker = new Worker(VERIFIER, {
      workerData: { verifier: true, input } satisfies VerifierData,
      transferList: [moved.buffer],
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: limits.heapMb },
    });
    let outcome: DistributionTables | GatewayError | undefined;
    const timer = setTimeout(() => {
      outcome ??= unavailable(uri, `could not be checked within ${limits.timeoutMs} ms`);
      void worker.terminate();
    }, limits.timeoutMs);
    worker.once('message', (answer: VerifierOutcome) => {
      if ('tables' in answer) outcome = answer.tables;
      else {
        const cause =
          answer.cause && Object.assign(new Error(answer.cause.message), { name: answer.cause.name });
        outcome = refused(uri, answer.refusal, cause);
      }
      void worker.terminate();
    });
    worker.once('error', (error: NodeJS.ErrnoException) => {
      outcome ??=
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? refused(
              uri,
              `needs more than ${limits.heapMb} MiB of memory to be checked, the most the service gives one distribution`,
              error,
            )
          : unavailable(uri, 'could not be checked: the thread checking it failed', error);
    });
    worker.once('exit', (code) => {
      clearTimeout(timer);
      outcome ??= unavailable(
        uri,
        'could not be checked: the thread checking it failed',
        new Error(`the verifier thread exited with code ${code} before it answered`),
      );
      if (outcome instanceof GatewayError) reject(outcome);
      else resolve(outcome);
    });
    // neither keeps the process alive: a service stopping while a file is checked stops. (After the
    // listeners: adding a 'message' listener refs the worker again.)
    worker.unref();
    timer.unref();
  });
}

interface CachedTree {
  loading: Promise<VerifiedDistribution>;
  /** resolves when its file starts being read: until then it waits for a reader */
  started: Promise<void>;
  /** the size of its tables once read and verified, 0 until then */
  bytes: number;
}

export function createDistributionSource(config: DistributionsConfig): DistributionSource {
  if (config.base !== undefined) {
    checkThreadBundle(VERIFIER, "the distribution verifier's bundle", 'npm start and npm test');
  }
  const refusalTtlMs = config.refusalTtlMs ?? REFUSAL_TTL_MS;
  const verifierLimits = {
    timeoutMs: config.verificationTimeoutMs ?? VERIFICATION_TIMEOUT_MS,
    heapMb: config.verifierHeapMb ?? VERIFIER_HEAP_MB,
  };
  const readers = createReaderSlots(DISTRIBUTION_READERS);
  // least recently used first
  const verified = new Map<string, CachedTree>();
  const refusals = new Map<string, { error: GatewayError; until: number }>();

  /** Drops the least recently used trees over the count or the byte budget, never `kept`. */
  function evict(kept: CachedTree): void {
    let bytes = 0;
    for (const cached of verified.values()) bytes += cached.bytes;
    for (const [key, cached] of verified) {
      if (verified.size <= config.cacheSize && bytes <= CACHED_DISTRIBUTION_BYTES) return;
      if (cached === kept) continue;
      verified.delete(key);
      bytes -= cached.bytes;
    }
  }

  function remember(key: string, error: GatewayError): void {
    // the monotonic clock: a step of the wall clock neither keeps a refusal nor ends it early
    const now = performance.now();
    for (const [refusedKey, refusal] of refusals) {
      if (refusal.until <= now || refusals.size >= config.cacheSize) refusals.delete(refusedKey);
    }
    refusals.set(key, { error, until: now + refusalTtlMs });
  }

  /**
   * The file's tables: its bytes read within the timeout once a reader is free, then checked apart
   * within the verifier's limits, in the same reader's place. `started` is called as the read
   * starts.
   */
  function readAndVerify(
    base: string,
    round: DistributionRound,
    started: () => void,
  ): Promise<DistributionTables> {
    const { uri } = round;
    const controller = new AbortController();
    const { signal } = controller;
    const reading = isUrlBase(base) ? () => fetchDump(base, uri, signal) : () => readDumpFile(base, uri);
    const checking = readers.run(async () => {
      const timer = setTimeout(
        () => controller.abort(unavailable(uri, `did not arrive within ${config.timeoutMs} ms`)),
        config.timeoutMs,
      );
      let file: Buffer;
      try {
        file = await reading();
      } finally {
        clearTimeout(timer);
      }
      // arrived after its read gave up: nobody waits for its check
      signal.throwIfAborted();
      return verifyApart(round, file, verifierLimits);
    }, started);
    return untilAborted(checking, signal);
  }

  /**
   * What a request waits for of `entry`: its outcome, but no longer than the timeout while it waits
   * for a reader; it keeps its place then, so the request's retry finds it read or being read.
   */
  function answerOf(entry: CachedTree, uri: string): Promise<VerifiedDistribution> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            unavailable(
              uri,
              `is still waiting its turn to be read and checked (the service checks ${DISTRIBUTION_READERS} files at once) and keeps its place in line, so a retry soon finds it ready or nearer`,
            ),
          ),
        config.timeoutMs,
      );
      void entry.started.then(() => clearTimeout(timer));
      entry.loading.then(resolve, reject).finally(() => clearTimeout(timer));
    });
  }

  return {
    load(round) {
      const base = config.base;
      // a deployment without distributions never serves proofs: a 404, not a 503 to retry later
      if (base === undefined) {
        return Promise.reject(
          notFound(
            'Dividend proofs are not served by this deployment (it has no distribution files); the round, its Merkle root and its distribution uri are at GET /v1/funds/{slug}/dividends/{epoch}.',
          ),
        );
      }
      const key = JSON.stringify([round.uri, round.merkleRoot.toLowerCase(), round.total, round.leafCount]);
      const refusal = refusals.get(key);
      if (refusal && refusal.until > performance.now()) return Promise.reject(refusal.error);
      const cached = verified.get(key);
      if (cached) {
        verified.delete(key);
        verified.set(key, cached);
        return answerOf(cached, round.uri);
      }
      let started!: () => void;
      const startedReading = new Promise<void>((resolve) => (started = resolve));
      const loading = readAndVerify(base, round, started);
      const entry: CachedTree = {
        loading: loading.then((tables) => ({
          root: rootOf(tables),
          leafOf: (account) => findLeaf(tables, account),
        })),
        started: startedReading,
        bytes: 0,
      };
      verified.set(key, entry);
      evict(entry);
      loading.then(
        (tables) => {
          entry.bytes = tables.nodes.byteLength + tables.leaves.byteLength;
          evict(entry);
        },
        (error: unknown) => {
          // a failure is not kept: the file may be fixed or the upstream come back, and a refusal
          // is answered from `refusals` until its time is up
          if (verified.get(key) === entry) verified.delete(key);
          if (error instanceof GatewayError && error.lasting) remember(key, error);
        },
      );
      return answerOf(entry, round.uri);
    },
  };
}
