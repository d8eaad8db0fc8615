// The embedded indexer as one object: createIndexer(config) loads the built subgraph, opens (or
// resumes) its SQLite store, and returns something to start and stop: the chain follower and the
// graph-node-dialect query server. `npm run indexer`, `npm start` and the test harness all build it
// here; none of them listens or loops on its own. createIndexer keeps the lifecycle (what start()
// takes, in which order, and stop() gives back) and assembles parts that each read on their own:
//   what is indexed, and where   deployment.ts           build, networks.json, store path, history
//   the node                     chain-node.ts           start-up chain check, the ChainSource's log lines
//   the store and its queries    store-and-query.ts      the store under its lock, the query service
//   following the chain          follower-supervisor.ts  restarts after failures, file fetchers
import { checkChain } from './chain-node.ts';
import { loadDeployment } from './deployment.ts';
import type { FollowerProgress } from './follower/follower.ts';
import type { TransactionFetch } from './follower/range-fetcher.ts';
import { FollowerSupervisor } from './follower-supervisor.ts';
import type { QueryService } from './query/create-query-service.ts';
import type { NetworkContract } from './runtime/manifest.ts';
import { createStoreQueryService, openLockedStore, type LockedStore } from './store-and-query.ts';

export interface IndexerConfig {
  rpcUrl: string;
  /** a network of networks.json; its entries' keys (address, start and end block) replace the build's */
  network: string;
  /** the store lives in <dataDir>/indexer/ */
  dataDir: string;
  /** query server port; 0 picks a free one */
  port: number;
  /** directory `graph build` wrote (default DEFAULT_BUILD_DIR, subgraph/build) */
  buildDir?: string;
  /** per data source name; overrides networks.json (used for chains deployed at other addresses) */
  contracts?: Record<string, NetworkContract>;
  /** served at /subgraphs/name/<subgraphName> (default DEFAULT_SUBGRAPH_NAME) */
  subgraphName?: string;
  /** the most one query may read, in bytes of entities (default DEFAULT_MAX_RESULT_BYTES) */
  queryMaxResultBytes?: number;
  /** the most one query may take, from its arrival to its answer (default DEFAULT_QUERY_TIMEOUT_MS) */
  queryTimeoutMs?: number;
  /**
   * how long one JSON-RPC request, the follower's or a handler's chain read, may take before it
   * fails and is retried (default DEFAULT_RPC_TIMEOUT_MS)
   */
  rpcTimeoutMs?: number;
  /**
   * how long the query server keeps an idle keep-alive connection (default
   * DEFAULT_KEEP_ALIVE_TIMEOUT_MS, Node's)
   */
  keepAliveTimeoutMs?: number;
  pollIntervalMs?: number;
  /** how often catch-up commits (default DEFAULT_COMMIT_INTERVAL_MS; 0: every range) */
  commitIntervalMs?: number;
  /** the widest eth_getLogs span, in blocks (default DEFAULT_MAX_RANGE) */
  maxRange?: number;
  /**
   * most ranges fetched at once over sparse stretches (default MAX_RANGES_AHEAD; 1: only the next
   * one)
   */
  maxRangesAhead?: number;
  /**
   * most addresses one eth_getLogs names (default DEFAULT_MAX_ADDRESSES_PER_REQUEST); longer lists
   * are split
   */
  maxAddressesPerRequest?: number;
  /**
   * past this many data sources, eth_getLogs names only the static data sources' addresses and asks
   * for the templates' events from any address (default STATIC_FILTERS_ABOVE, graph-node's static
   * filters)
   */
  staticFiltersAbove?: number;
  /**
   * what handlers get in event.transaction (default 'full', as graph-node; 'hash-only' skips
   * reading transactions, for subgraphs that read only the hash). Part of the store's identity:
   * the two index different data for a subgraph that reads the other fields.
   */
  transactions?: TransactionFetch;
  /**
   * where file data sources read their files: `ipfsUrl`, a path gateway or a kubo RPC API, for
   * file/ipfs templates (without it their data sources are recorded and wait); `arweaveUrl`, a
   * gateway, for file/arweave ones (default ARWEAVE_GATEWAY, graph-node's)
   */
  files?: {
    ipfsUrl?: string;
    arweaveUrl?: string;
    /** bound on one request (default DEFAULT_FILE_TIMEOUT_MS, graph-node's GRAPH_IPFS_TIMEOUT) */
    timeoutMs?: number;
    /**
     * larger files are refused and tried again later (default DEFAULT_MAX_FILE_BYTES, graph-node's
     * GRAPH_MAX_IPFS_FILE_BYTES)
     */
    maxFileBytes?: number;
    /**
     * first and longest wait before a file is tried again (default DEFAULT_FILE_MIN_RETRY_MS and
     * DEFAULT_FILE_MAX_RETRY_MS, as graph-node)
     */
    minRetryMs?: number;
    maxRetryMs?: number;
  };
  /**
   * blocks of history the store keeps, in place of the manifest's `indexerHints.prune`
   * (graph-node's GRAPH_HISTORY_BLOCKS_OVERRIDE)
   */
  historyBlocks?: number;
  /**
   * the deepest reorg a store keeping limited history must still revert (default REORG_THRESHOLD,
   * graph-node's ETHEREUM_REORG_THRESHOLD): such a store keeps at least one block more, and
   * `prune: auto` twice it
   */
  reorgThreshold?: number;
  /** see FollowerOptions.disableFailFast (graph-node's GRAPH_DISABLE_FAIL_FAST) */
  disableFailFast?: boolean;
  onProgress?: (progress: FollowerProgress) => void;
  log?: (line: string) => void;
}

export interface IndexerStatus extends FollowerProgress {
  fatalError: string | null;
  /** why the store cannot be written (a full disk, say) while indexing waits to try again */
  storeError: string | null;
  /**
   * why indexing is held up otherwise: an error it starts again after (a SQLite error, a bug), or a
   * node whose head is more than the reorg threshold below the last block indexed
   */
  indexingError: string | null;
  lastCommitAt: number | null;
}

export interface Indexer {
  /** content hash of the build and its network addresses: graph-node's deployment id role */
  readonly deployment: string;
  readonly storePath: string;
  /** the /subgraphs/name/<name> URL; set once start() resolved */
  queryUrl: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): IndexerStatus;
  /** resolves once block `number` is indexed; rejects if indexing fails or stops first */
  waitForBlock(number: number): Promise<void>;
  /** resolves once the indexer has reached the chain head it last saw */
  waitForHead(): Promise<void>;
}

/**
 * What waitForBlock and waitForHead wait on: `waitUntil(reached)` resolves once `reached()` holds,
 * asked again at every notify() (each progress report and store failure), and rejects with
 * `stopped()` once indexing has stopped short of it.
 */
function progressWaits(stopped: () => Error | null) {
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const waitUntil = (reached: () => boolean) =>
    new Promise<void>((resolvePromise, reject) => {
      const check = () => {
        if (reached()) {
          waiters.delete(check);
          resolvePromise();
          return;
        }
        const stoppedError = stopped();
        if (stoppedError) {
          waiters.delete(check);
          reject(stoppedError);
        }
      };
      waiters.add(check);
      check();
    });
  return { notify, waitUntil };
}

export async function createIndexer(config: IndexerConfig): Promise<Indexer> {
  const log = config.log ?? ((line: string) => console.log(line));
  const deployment = await loadDeployment(config, log);
  let stoppedError: Error | null = null;
  const { notify, waitUntil } = progressWaits(() => stoppedError);
  const followers = new FollowerSupervisor(config, deployment, log, notify);
  let opened: LockedStore | null = null;
  let query: QueryService | null = null;
  let running: Promise<void> | null = null;

  const indexer: Indexer = {
    deployment: deployment.id,
    storePath: deployment.storePath,
    queryUrl: '',
    async start() {
      if (opened) throw new Error('indexer already started');
      stoppedError = null;
      await checkChain(config.rpcUrl, config.network);
      opened = openLockedStore(deployment, log);
      const { store } = opened;
      query = createStoreQueryService(config, deployment, () => followers.heldUpBy);
      try {
        indexer.queryUrl = await query.listen(config.port);
      } catch (error) {
        // nothing runs yet: what start() took is given back, so start() may be called again
        await indexer.stop();
        throw error;
      }
      running = followers.follow(store).then(
        (failure) => {
          stoppedError = failure ?? stoppedError ?? new Error('indexer stopped');
          notify();
        },
        // the supervisor starts indexing again after any failure but a handler's: this is one met
        // while stopping
        (error: Error) => {
          stoppedError = error;
          log(`indexer failed while stopping: ${error.stack ?? error.message}`);
          notify();
        },
      );
    },
    async stop() {
      followers.abort();
      await running;
      await query?.close();
      await followers.close();
      opened?.close();
      opened = null;
      query = null;
      followers.forget();
      running = null;
      stoppedError ??= new Error('indexer stopped');
      notify();
    },
    status() {
      return followers.status(opened?.store ?? null);
    },
    waitForBlock(number) {
      return waitUntil(() => opened !== null && opened.store.committed().number >= number);
    },
    waitForHead() {
      return waitUntil(() => followers.atHead());
    },
  };
  return indexer;
}
