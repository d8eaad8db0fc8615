// Follows the chain for one createIndexer: each start() gets a stop signal, a ChainSource and a chain
// reader, and a follower that reads the chain through them into the store. A handler's failure (or
// the pause it causes) stops indexing for good, and so does a damaged store (SQLITE_CORRUPT,
// SQLITE_NOTADB), which no retry mends: the failure says to delete the store. Any other error is
// non-deterministic: a store that cannot be written (a full disk, an I/O error), another SQLite
// error, a bug. The follower's open transaction is dropped and, after a doubling wait, a new follower
// goes on from the last commit, as a restarted process would (graph-node restarts a subgraph after
// such errors too), while the query API keeps serving what was committed. Meanwhile the failure is
// what status() and the index-node API report (health failed, a non-deterministic fatalError), until
// progress past it clears it; so is a node whose head is more than the reorg threshold below the last
// block indexed, which indexing waits for. Each follower gets file fetchers of its own, closed with it.
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffMs, type Backoff } from '../common/backoff.ts';
import { createChainSource, createHandlerChainReader } from './chain-node.ts';
import { ARWEAVE_GATEWAY, createArweaveClient } from './follower/arweave-client.ts';
import type { ClosableChainReader } from './follower/chain-reader.ts';
import type { ChainSource } from './follower/chain-source.ts';
import { FileFetcher } from './follower/file-fetcher.ts';
import { ChainFollower, type FollowerProgress } from './follower/follower.ts';
import { createIpfsClient } from './follower/ipfs-client.ts';
import { REORG_THRESHOLD, type Deployment } from './deployment.ts';
import type { IndexerConfig, IndexerStatus } from './indexer.ts';
import { createBlockProcessor } from './runtime/block-processor.ts';
import type { TemplateSpec } from './runtime/manifest.ts';
import { damagedStoreMessage, isStoreDamage, type IndexerStore } from './store/sqlite-store.ts';
import { isTransientStoreError } from './store/store-errors.ts';

/** first and longest wait before indexing starts again after a failure (a store that could not be written) */
const RESTART: Backoff = { minMs: 1_000, maxMs: 60_000 };

/** How often the head is polled unless INDEXER_POLL_INTERVAL_MS says otherwise. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;

/** How long one file request may take unless INDEXER_FILE_TIMEOUT_MS says otherwise. */
export const DEFAULT_FILE_TIMEOUT_MS = 60_000;

/** The largest file a file data source may read unless INDEXER_FILE_MAX_BYTES says otherwise (25 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 25 * 1024 * 1024;

/** Most error messages whose stack recordFailure remembers having printed (oldest forgotten first). */
const STACKS_REMEMBERED = 32;

/** What the followers of one follow() read from and write to. */
interface FollowerInputs {
  store: IndexerStore;
  chain: ChainSource;
  reader: ClosableChainReader;
  /** abort() aborts it */
  signal: AbortSignal;
}

export class FollowerSupervisor {
  /** the follower running, or the last one until forget() */
  private follower: ChainFollower | null = null;
  private abortController: AbortController | null = null;
  private chainReader: ClosableChainReader | null = null;
  /** why indexing failed, while the indexer waits to start it again (`store`: the store could not be written) */
  private failure: { message: string; committed: number; store: boolean } | null = null;
  /** why indexing stopped for good on a damaged store, with the remedy; null while it has not */
  private damage: string | null = null;
  /** messages of the failures since indexing last went on whose stack was printed */
  private stacksPrinted = new Set<string>();
  private fileFetchers = new Map<string, FileFetcher>();

  constructor(
    private readonly config: IndexerConfig,
    private readonly deployment: Deployment,
    private readonly log: (line: string) => void,
    /** called on every progress report and store failure, for those waiting on either */
    private readonly notify: () => void,
  ) {}

  get storeError(): string | null {
    return this.failure?.store ? this.failure.message : null;
  }

  /**
   * Why indexing is held up otherwise: an error it starts again after, or a node whose head is more
   * than the reorg threshold below the last block indexed (within it, a lagging node is normal).
   */
  get indexingError(): string | null {
    if (this.failure && !this.failure.store) return this.failure.message;
    const p = this.follower?.progress();
    if (!p || p.head < 0) return null;
    const behind = p.checkpoint - p.head;
    if (behind <= (this.config.reorgThreshold ?? REORG_THRESHOLD)) return null;
    return `the node's head is block ${p.head}, ${behind} blocks below block ${p.checkpoint}, the last one indexed: indexing waits for the node to reach it (is the node still syncing, or behind a load balancer with one that is?)`;
  }

  /** What holds indexing up, if anything does: a damaged store, the store's failure, else indexingError. */
  get heldUpBy(): string | null {
    return this.damage ?? this.storeError ?? this.indexingError;
  }

  /** The indexer's status, read from `store` and the follower; throws unless both are there. */
  status(store: IndexerStore | null): IndexerStatus {
    if (!store || !this.follower) throw new Error('indexer not started');
    const cp = store.committed();
    return {
      ...this.follower.progress(),
      fatalError: cp.fatalError ?? this.damage,
      storeError: this.storeError,
      indexingError: this.indexingError,
      lastCommitAt: cp.updatedAt,
    };
  }

  /** Whether the follower has reached the chain head it last saw. */
  atHead(): boolean {
    const p = this.follower?.progress();
    return p !== undefined && p.caughtUp && p.checkpoint >= p.head;
  }

  /**
   * Follows the chain into `store` until abort(), or until a follower stops for good: resolves with
   * the failure that stopped it (a handler's, or a damaged store), if any. The first follower is
   * there once this returns, so status() has one at once.
   */
  follow(store: IndexerStore): Promise<Error | null> {
    this.abortController = new AbortController();
    this.damage = null;
    const { signal } = this.abortController;
    // every request retrying or waiting out a rate limit at once listens for the stop: ranges
    // ahead, their batches and receipts may well be more than Node's default of 10 listeners
    setMaxListeners(0, signal);
    const chain = createChainSource(this.config, signal, this.log);
    const reader = createHandlerChainReader(this.config, this.log);
    this.chainReader = reader;
    return this.run({ store, chain, reader, signal });
  }

  abort(): void {
    this.abortController?.abort();
  }

  /** Closes the chain reader and the file fetchers, once what follow() started has ended. */
  async close(): Promise<void> {
    await this.chainReader?.close();
    this.closeFileFetchers();
  }

  /** Drops the last follower and chain reader, closed: status() throws until the next follow(). */
  forget(): void {
    this.chainReader = null;
    this.follower = null;
  }

  /**
   * Runs followers until one stops for good (see follow()): after any other failure, a new one from
   * the last commit.
   */
  private async run(inputs: FollowerInputs): Promise<Error | null> {
    const { store, signal } = inputs;
    const { notify } = this;
    // failures in a row since indexing last made progress
    let failures = 0;
    for (;;) {
      const from = store.committed().number;
      try {
        const f = this.startFollower(inputs);
        await f.run();
        return f.failure;
      } catch (error) {
        if (signal.aborted) throw error;
        if (isStoreDamage(error)) return this.stopOnDamage(error, store);
        if (store.committed().number > from) failures = 0;
        const wait = backoffMs(failures++, RESTART);
        store.rollback();
        this.closeFileFetchers();
        this.recordFailure(error, store.committed().number, wait);
        notify();
        await sleep(wait, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return null;
      }
    }
  }

  /**
   * Stops indexing on a damaged store, saying what to do: the failure follow() resolves with, and
   * what status() and the index-node API report from then on.
   */
  private stopOnDamage(error: unknown, store: IndexerStore): Error {
    const { message, code } = error as Error & { code: string };
    this.damage = damagedStoreMessage(this.deployment.storePath, `${message}, ${code}`);
    // the damage is what holds indexing up now, for good
    this.failure = null;
    try {
      store.rollback();
    } catch {
      // the rollback met the damage too: closing the store drops the transaction all the same
    }
    this.closeFileFetchers();
    this.log(`indexing stopped: ${this.damage}`);
    this.notify();
    return new Error(this.damage);
  }

  /**
   * Records and logs the failure indexing starts again after, in `wait` ms from block `committed`;
   * with the stack of an error that is not the store's (a bug's) the first time its message is seen
   * since indexing last went on. Restarts go on for as long as the error does, up to one a minute:
   * a stack each time would bury the rest of the log, while each distinct error's stack once is
   * what finding the bug needs, also when two errors take turns. After a recovery a recurrence is
   * news, and prints its stack again.
   */
  private recordFailure(error: unknown, committed: number, wait: number): void {
    const message = error instanceof Error ? error.message : String(error);
    const store = isTransientStoreError(error);
    const again = `nothing after block ${committed} was kept, and indexing goes on from there in ${wait / 1000} s`;
    if (store) {
      this.log(`store: ${this.deployment.storePath} could not be written (${message}); ${again}`);
    } else {
      const stack = error instanceof Error && this.firstStackOf(message) ? error.stack : undefined;
      this.log(`indexer failed: ${message}; ${again}${stack ? `\n${stack}` : ''}`);
    }
    this.failure = { message, committed, store };
  }

  /** Whether the stack of the failure `message` is to be printed, remembering that it was. */
  private firstStackOf(message: string): boolean {
    if (this.stacksPrinted.has(message)) return false;
    this.stacksPrinted.add(message);
    if (this.stacksPrinted.size > STACKS_REMEMBERED) {
      this.stacksPrinted.delete(this.stacksPrinted.values().next().value!);
    }
    return true;
  }

  private closeFileFetchers(): void {
    for (const fetcher of new Set(this.fileFetchers.values())) fetcher.close();
    this.fileFetchers = new Map();
  }

  private startFollower(inputs: FollowerInputs): ChainFollower {
    const { config, log } = this;
    const { subgraph, schema } = this.deployment;
    this.fileFetchers = createFileFetchers(this.deployment.fileTemplates, config.files ?? {}, log);
    this.follower = new ChainFollower({
      store: inputs.store,
      subgraph,
      processor: createBlockProcessor(subgraph, schema, {
        chain: inputs.reader,
        maxInstanceMemoryBytes: 2 * 1024 * 1024,
        logger: (level, message) => {
          if (level !== 'debug' && level !== 'info') log(`mapping ${level}: ${message}`);
        },
      }),
      chain: inputs.chain,
      pollIntervalMs: config.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      commitIntervalMs: config.commitIntervalMs,
      maxRangesAhead: config.maxRangesAhead,
      transactions: config.transactions,
      fileFetchers: this.fileFetchers,
      staticFiltersAbove: config.staticFiltersAbove,
      disableFailFast: config.disableFailFast,
      reorgThreshold: config.reorgThreshold ?? REORG_THRESHOLD,
      signal: inputs.signal,
      log,
      onProgress: (p) => this.progressed(p),
    });
    return this.follower;
  }

  private progressed(p: FollowerProgress): void {
    const { log, notify, failure } = this;
    // past the failed commit, or at the head with nothing to commit (the failed write was the
    // head's number alone)
    const recovered =
      failure !== null && (p.checkpoint > failure.committed || (p.caughtUp && p.checkpoint >= p.head));
    if (recovered) {
      this.failure = null;
      this.stacksPrinted.clear();
      log(
        failure.store
          ? `store: ${this.deployment.storePath} is written again; indexing went on from where it stopped`
          : `indexer: indexing went on past the failure (${failure.message})`,
      );
    }
    this.config.onProgress?.(p);
    notify();
  }
}

/**
 * What fetches the files of each file template's data sources, by template name: one fetcher per
 * kind, none for file/ipfs templates without an IPFS server.
 */
function createFileFetchers(
  templates: readonly TemplateSpec[],
  files: NonNullable<IndexerConfig['files']>,
  log: (line: string) => void,
): Map<string, FileFetcher> {
  const bounds = {
    timeoutMs: files.timeoutMs ?? DEFAULT_FILE_TIMEOUT_MS,
    maxFileBytes: files.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
  };
  const retries = { minRetryMs: files.minRetryMs, maxRetryMs: files.maxRetryMs };
  const byKind = new Map<TemplateSpec['kind'], FileFetcher>();
  const fetcherOf = (kind: TemplateSpec['kind']): FileFetcher | undefined => {
    if (byKind.has(kind)) return byKind.get(kind);
    let fetcher: FileFetcher | undefined;
    if (kind === 'file/ipfs' && files.ipfsUrl) {
      const client = createIpfsClient({ url: files.ipfsUrl, ...bounds });
      fetcher = new FileFetcher({ client, ...retries, log: (line) => log(`ipfs: ${line}`) });
    } else if (kind === 'file/arweave') {
      const client = createArweaveClient({ url: files.arweaveUrl ?? ARWEAVE_GATEWAY, ...bounds });
      fetcher = new FileFetcher({ client, ...retries, log: (line) => log(`arweave: ${line}`) });
    }
    if (fetcher) byKind.set(kind, fetcher);
    return fetcher;
  };
  const byTemplate = new Map<string, FileFetcher>();
  for (const template of templates) {
    const fetcher = fetcherOf(template.kind);
    if (fetcher) byTemplate.set(template.name, fetcher);
  }
  return byTemplate;
}
