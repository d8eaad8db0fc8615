// Follows the chain for one createIndexer: each start() gets a stop signal, a ChainSource and a chain
// reader, and a follower that reads the chain through them into the store. A store that cannot be written (a
// full disk, an I/O error) is no reason to stop indexing: the follower's open transaction is dropped
// and, after a doubling wait, a new follower goes on from the last commit, as a restarted process
// would (graph-node restarts a subgraph after such errors too). Meanwhile the failure is what
// status() and the index-node API report, until progress past it clears it. Each follower gets file
// fetchers of its own, closed with it.
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { isTransientStoreError, type IndexerStore } from './store/sqlite-store.ts';

/** first and longest wait before writing to a store that could not be written is tried again */
const STORE_RETRY_MIN_MS = 1_000;
const STORE_RETRY_MAX_MS = 60_000;

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
  /** why the store could not be written, while the indexer waits to try again */
  private storeFailure: { message: string; committed: number } | null = null;
  private fileFetchers = new Map<string, FileFetcher>();

  constructor(
    private readonly config: IndexerConfig,
    private readonly deployment: Deployment,
    private readonly log: (line: string) => void,
    /** called on every progress report and store failure, for those waiting on either */
    private readonly notify: () => void,
  ) {}

  get storeError(): string | null {
    return this.storeFailure?.message ?? null;
  }

  /** The indexer's status, read from `store` and the follower; throws unless both are there. */
  status(store: IndexerStore | null): IndexerStatus {
    if (!store || !this.follower) throw new Error('indexer not started');
    const cp = store.committed();
    return {
      ...this.follower.progress(),
      fatalError: cp.fatalError,
      storeError: this.storeError,
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
   * the handler failure that stopped it, if any. The first follower is there once this returns, so
   * status() has one at once.
   */
  follow(store: IndexerStore): Promise<Error | null> {
    this.abortController = new AbortController();
    const { signal } = this.abortController;
    // every request retrying or waiting out a rate limit at once listens for the stop: ranges
    // ahead, their batches and receipts may well be more than Node's default of 10 listeners
    setMaxListeners(0, signal);
    const chain = createChainSource(this.config, signal, this.log);
    const reader = createHandlerChainReader(this.config.rpcUrl, this.log);
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
   * Runs followers until one stops for good (see follow()): after a store failure, a new one from the
   * last commit.
   */
  private async run(inputs: FollowerInputs): Promise<Error | null> {
    const { store, signal } = inputs;
    const { log, notify } = this;
    let wait = STORE_RETRY_MIN_MS;
    for (;;) {
      const f = this.startFollower(inputs);
      const from = store.committed().number;
      try {
        await f.run();
        return f.failure;
      } catch (error) {
        if (signal.aborted || !isTransientStoreError(error)) throw error;
        if (store.committed().number > from) wait = STORE_RETRY_MIN_MS;
        store.rollback();
        this.closeFileFetchers();
        const committed = store.committed().number;
        this.storeFailure = { message: (error as Error).message, committed };
        log(
          `store: ${this.deployment.storePath} could not be written (${this.storeFailure.message}); nothing after block ${committed} was kept, and indexing goes on from there in ${wait / 1000} s`,
        );
        notify();
        await sleep(wait, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return null;
        wait = Math.min(wait * 2, STORE_RETRY_MAX_MS);
      }
    }
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
      pollIntervalMs: config.pollIntervalMs ?? 1000,
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
    const { log, notify } = this;
    // past the failed commit, or at the head with nothing to commit (the failed write was the
    // head's number alone)
    const recovered =
      this.storeFailure !== null &&
      (p.checkpoint > this.storeFailure.committed || (p.caughtUp && p.checkpoint >= p.head));
    if (recovered) {
      this.storeFailure = null;
      log(`store: ${this.deployment.storePath} is written again; indexing went on from where it stopped`);
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
    timeoutMs: files.timeoutMs ?? 60_000,
    maxFileBytes: files.maxFileBytes ?? 25 * 1024 * 1024,
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
