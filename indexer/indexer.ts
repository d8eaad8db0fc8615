// The embedded indexer as one object: createIndexer(config) loads the built subgraph, opens (or
// resumes) its SQLite store, and returns something to start and stop: the chain follower and the
// graph-node-dialect query server. `npm run indexer`, `npm start` and the test harness all build it
// here; none of them listens or loops on its own.
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBlockProcessor } from './runtime/block-processor.ts';
import { loadSubgraph, type NetworkContract, type Subgraph, type TemplateSpec } from './runtime/manifest.ts';
import { ChainFollower, type FollowerProgress, type TransactionFetch } from './follower/follower.ts';
import { createChainReader, type ClosableChainReader } from './follower/chain-reader.ts';
import { FileFetcher } from './follower/file-fetcher.ts';
import { createIpfsClient } from './follower/ipfs-client.ts';
import { ARWEAVE_GATEWAY, createArweaveClient } from './follower/arweave-client.ts';
import { ChainSource, describeRpcError, isNodeRefusal } from './follower/chain-source.ts';
import { lockStore } from './store/store-lock.ts';
import { NETWORK_CHAIN_IDS } from './network-chains.ts';
import { createQueryService, type QueryService } from './query/create-query-service.ts';
import { deploymentFeatures } from './query/index-node-api.ts';
import {
  isTransientStoreError,
  openStore,
  type Checkpoint,
  type IndexerStore,
} from './store/sqlite-store.ts';
import { parseSubgraphSchema } from './subgraph-schema.ts';

export interface IndexerConfig {
  rpcUrl: string;
  /** a network of networks.json; its entries' keys (address, start and end block) replace the build's */
  network: string;
  /** the store lives in <dataDir>/indexer/ */
  dataDir: string;
  /** query server port; 0 picks a free one */
  port: number;
  host?: string;
  /** directory `graph build` wrote (default subgraph/build) */
  buildDir?: string;
  /** networks.json to read (default subgraph/networks.json) */
  networksFile?: string;
  /** per data source name; overrides networks.json (used for chains deployed at other addresses) */
  contracts?: Record<string, NetworkContract>;
  /** served at /subgraphs/name/<subgraphName> (default fund-protocol) */
  subgraphName?: string;
  /** the most one query may read, in bytes of entities (default DEFAULT_MAX_RESULT_BYTES) */
  queryMaxResultBytes?: number;
  pollIntervalMs?: number;
  /** how often catch-up commits (default 1000 ms; 0: every range) */
  commitIntervalMs?: number;
  /** eth_getLogs span bounds */
  initialRange?: number;
  maxRange?: number;
  /** most ranges fetched at once over sparse stretches (default 4; 1: only the next one) */
  maxRangesAhead?: number;
  /** most addresses one eth_getLogs names (default 2,000); longer lists are split */
  maxAddressesPerRequest?: number;
  /**
   * past this many data sources, eth_getLogs names only the static data sources' addresses and asks
   * for the templates' events from any address (default 10,000, graph-node's static filters)
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
   * gateway, for file/arweave ones (default https://arweave.net, graph-node's)
   */
  files?: {
    ipfsUrl?: string;
    arweaveUrl?: string;
    /** bound on one request (default 60 s, graph-node's GRAPH_IPFS_TIMEOUT) */
    timeoutMs?: number;
    /** larger files are refused and tried again later (default 25 MiB, GRAPH_MAX_IPFS_FILE_BYTES) */
    maxFileBytes?: number;
    /** first and longest wait before a file is tried again (default 5 s and 600 s, as graph-node) */
    minRetryMs?: number;
    maxRetryMs?: number;
  };
  /**
   * blocks of history the store keeps, in place of the manifest's `indexerHints.prune`
   * (graph-node's GRAPH_HISTORY_BLOCKS_OVERRIDE)
   */
  historyBlocks?: number;
  /**
   * the deepest reorg a store keeping limited history must still revert (default 250, graph-node's
   * ETHEREUM_REORG_THRESHOLD): such a store keeps at least one block more, and `prune: auto` twice it
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

/** graph-node's ETHEREUM_REORG_THRESHOLD default */
export const REORG_THRESHOLD = 250;

/** first and longest wait before writing to a store that could not be written is tried again */
const STORE_RETRY_MIN_MS = 1_000;
const STORE_RETRY_MAX_MS = 60_000;

// one level below the repository, as are the bundles of `npm run build` in build/ that include this
const repoRoot = resolve(import.meta.dirname, '..');
/** the subgraph build and networks.json the indexer reads unless told otherwise */
export const DEFAULT_BUILD_DIR = join(repoRoot, 'subgraph', 'build');
export const DEFAULT_NETWORKS_FILE = join(repoRoot, 'subgraph', 'networks.json');

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

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name);
      return statSync(full).isDirectory() ? filesUnder(full) : [full];
    });
}

/**
 * The node at `rpcUrl` answers, and is on the chain `network` names (when its chain id is known):
 * a node that cannot be reached at start-up, or one of another chain, is a misconfiguration to
 * report at once, not an outage to retry forever nor a chain to index on the wrong addresses.
 */
async function checkChain(rpcUrl: string, network: string): Promise<void> {
  let chainId: number;
  try {
    chainId = await new ChainSource({ rpcUrl }).chainId();
  } catch (error) {
    throw new Error(`the node at RPC_URL does not answer eth_chainId: ${describeRpcError(error)}`, {
      cause: error,
    });
  }
  const expected = NETWORK_CHAIN_IDS[network];
  if (expected !== undefined && chainId !== expected)
    throw new Error(
      `the node at RPC_URL is on chain ${chainId}, but network ${network} is chain ${expected}: point RPC_URL at a ${network} node, or set NETWORK to the network it serves`,
    );
}

function deploymentId(
  buildDir: string,
  network: string,
  subgraph: Subgraph,
  transactions: TransactionFetch,
): string {
  const hash = createHash('sha256');
  for (const file of filesUnder(buildDir)) {
    if (relative(buildDir, file).startsWith('.')) continue;
    hash.update(relative(buildDir, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  hash.update(network);
  for (const ds of subgraph.dataSources) {
    // an end block (which networks.json may set) only when there is one, keeping the ids of stores without
    hash.update(
      `${ds.name}:${ds.address}:${ds.startBlock}${ds.endBlock === null ? '' : `:${ds.endBlock}`}\n`,
    );
  }
  // graph-node's behaviour, 'full', keeps the id stores made before the choice existed had
  if (transactions !== 'full') hash.update(`transactions:${transactions}`);
  return 'L' + hash.digest('hex').slice(0, 45);
}

/**
 * The blocks of history the store keeps: INDEXER_HISTORY_BLOCKS, else the manifest's, and never as
 * few as the reorg threshold, which would leave a reorg that deep nothing to revert to (graph-node
 * refuses to prune such a deployment at all; here it keeps what is safe and says so).
 */
export function historyToKeep(
  config: IndexerConfig,
  subgraph: Subgraph,
  log: (line: string) => void,
): number {
  const reorgThreshold = config.reorgThreshold ?? REORG_THRESHOLD;
  const asked = config.historyBlocks ?? subgraph.historyBlocks;
  const wanted = asked === 'auto' ? 2 * reorgThreshold : asked;
  const kept = Math.max(wanted, reorgThreshold + 1);
  if (kept > wanted) {
    log(
      `history: ${wanted} blocks asked for (${config.historyBlocks === undefined ? 'indexerHints.prune' : 'INDEXER_HISTORY_BLOCKS'}); keeping ${kept}, one more than the reorg threshold (${reorgThreshold}, INDEXER_REORG_THRESHOLD), so that a reorg that deep can be reverted`,
    );
  }
  return kept;
}

export async function createIndexer(config: IndexerConfig): Promise<Indexer> {
  const buildDir = resolve(config.buildDir ?? DEFAULT_BUILD_DIR);
  let contracts = config.contracts;
  if (!contracts) {
    const networks = JSON.parse(readFileSync(config.networksFile ?? DEFAULT_NETWORKS_FILE, 'utf8')) as Record<
      string,
      Record<string, NetworkContract>
    >;
    contracts = networks[config.network];
    if (!contracts) throw new Error(`network ${config.network} is not in networks.json`);
  }
  const subgraph = await loadSubgraph({ buildDir, network: { name: config.network, contracts } });
  const schema = parseSubgraphSchema(readFileSync(subgraph.schemaFile, 'utf8'), subgraph.specVersion);
  const fileTemplates = [...subgraph.templates.values()].filter((t) => t.kind !== 'ethereum');
  const ipfsTemplates = fileTemplates.filter((t) => t.kind === 'file/ipfs');
  const deployment = deploymentId(buildDir, config.network, subgraph, config.transactions ?? 'full');
  const startBlock = Math.min(...subgraph.dataSources.map((d) => Number(d.startBlock)));
  const storeDir = join(resolve(config.dataDir), 'indexer');
  mkdirSync(storeDir, { recursive: true });
  const storePath = join(storeDir, `${config.network}-${deployment}.sqlite`);
  const log = config.log ?? ((line: string) => console.log(line));
  const historyBlocks = historyToKeep(config, subgraph, log);
  if (ipfsTemplates.length > 0 && !config.files?.ipfsUrl) {
    // the chain is indexed all the same, and the file data sources are kept: none is lost
    log(
      `the subgraph has file data source templates (${ipfsTemplates.map((t) => t.name).join(', ')}) but no IPFS server is set (IPFS_URL): their data sources are recorded, and run once the indexer restarts with one`,
    );
  }
  for (const t of fileTemplates) {
    const unknown = t.mapping.entities.filter((name) => !schema.entities.has(name));
    // graph-node ignores them with a warning rather than refuse a deployed subgraph
    if (unknown.length > 0)
      log(`template ${t.name}: entity types ${unknown.join(', ')} are not in the schema; ignored`);
  }

  let store: IndexerStore | null = null;
  /** releases the store's lock (store-lock.ts) while started */
  let unlockStore: (() => void) | null = null;
  let query: QueryService | null = null;
  let follower: ChainFollower | null = null;
  let chainReader: ClosableChainReader | null = null;
  let fileFetchers = new Map<string, FileFetcher>();
  let running: Promise<void> | null = null;
  let abort: AbortController | null = null;
  let stoppedError: Error | null = null;
  /** why the store could not be written, while the indexer waits to try again */
  let storeFailure: { message: string; committed: number } | null = null;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  /** Resolves once `reached()` holds after a commit; rejects if indexing stops first. */
  const waitUntil = (reached: () => boolean) =>
    new Promise<void>((resolvePromise, reject) => {
      const check = () => {
        if (reached()) {
          waiters.delete(check);
          resolvePromise();
        } else if (stoppedError) {
          waiters.delete(check);
          reject(stoppedError);
        }
      };
      waiters.add(check);
      check();
    });

  /**
   * Runs followers until one stops for good, and resolves with the handler failure that stopped it,
   * if any. A store that cannot be written (a full disk, an I/O error) does not stop indexing: the
   * open transaction is dropped and, after a doubling wait, a new follower starts from the last
   * commit, as a restarted process would; graph-node restarts a subgraph after such errors too.
   */
  const followUntilStopped = async (
    written: IndexerStore,
    startFollower: () => ChainFollower,
    signal: AbortSignal,
  ): Promise<Error | null> => {
    let wait = STORE_RETRY_MIN_MS;
    for (;;) {
      const f = startFollower();
      const from = written.committed().number;
      try {
        await f.run();
        return f.failure;
      } catch (error) {
        if (signal.aborted || !isTransientStoreError(error)) throw error;
        if (written.committed().number > from) wait = STORE_RETRY_MIN_MS;
        written.rollback();
        closeFileFetchers();
        const committed = written.committed().number;
        storeFailure = { message: (error as Error).message, committed };
        log(
          `store: ${storePath} could not be written (${storeFailure.message}); nothing after block ${committed} was kept, and indexing goes on from there in ${wait / 1000} s`,
        );
        notify();
        await sleep(wait, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return null;
        wait = Math.min(wait * 2, STORE_RETRY_MAX_MS);
      }
    }
  };
  const closeFileFetchers = () => {
    for (const fetcher of new Set(fileFetchers.values())) fetcher.close();
    fileFetchers = new Map();
  };

  const indexer: Indexer = {
    deployment,
    storePath,
    queryUrl: '',
    async start() {
      if (store) throw new Error('indexer already started');
      stoppedError = null;
      await checkChain(config.rpcUrl, config.network);
      unlockStore = lockStore(storePath);
      let opened: IndexerStore;
      try {
        opened = openStore({
          path: storePath,
          schema,
          startBlock,
          deployment,
          fileEntityTypes: subgraph.fileEntityTypes,
          historyBlocks,
        });
      } catch (error) {
        unlockStore();
        unlockStore = null;
        throw error;
      }
      store = opened;
      query = createQueryService({
        storePath,
        schema,
        deployment,
        subgraphName: config.subgraphName ?? 'fund-protocol',
        network: config.network,
        startBlock,
        historyBlocks,
        transientFailure: () => storeFailure?.message ?? null,
        features: deploymentFeatures(subgraph, schema),
        maxResultBytes: config.queryMaxResultBytes,
      });
      try {
        indexer.queryUrl = await query.listen(config.port, config.host);
      } catch (error) {
        // nothing runs yet: what start() took is given back, so start() may be called again
        await indexer.stop();
        throw error;
      }
      abort = new AbortController();
      // every request retrying or waiting out a rate limit at once listens for the stop: ranges
      // ahead, their batches and receipts may well be more than Node's default of 10 listeners
      setMaxListeners(0, abort.signal);
      const chain = new ChainSource({
        rpcUrl: config.rpcUrl,
        initialRange: config.initialRange,
        maxRange: config.maxRange,
        maxAddressesPerRequest: config.maxAddressesPerRequest,
        signal: abort.signal,
        onRetry: (what, error, delay) =>
          log(
            `rpc ${what} failed (${describeRpcError(error)}); retrying in ${delay} ms${
              // a range limit worded in a way the refusal parser does not know is retried as it
              // stands: the operator can state the limit
              what === 'eth_getLogs' && isNodeRefusal(error)
                ? '; if the node limits the blocks an eth_getLogs range spans, INDEXER_MAX_BLOCK_RANGE can set that limit'
                : ''
            }`,
          ),
        onRangeLimit: (blocks, reason) =>
          log(
            `rpc eth_getLogs: the node refused a range ("${reason}"); ranges hold at most ${blocks} blocks from now on`,
          ),
        onBatchLimit: (limit, words) =>
          log(
            `rpc: the node refused a JSON-RPC batch ("${words}"); requests go out ${limit === 0 ? 'one call at a time' : `in batches of at most ${limit} calls (fewer while the node refuses those too)`} from now on`,
          ),
        onLogLimit: (logs, reason) =>
          log(
            `rpc eth_getLogs: the node refused an answer that large ("${reason}"); ranges aim at ${logs} logs from now on`,
          ),
      });
      const reader = createChainReader({ rpcUrl: config.rpcUrl });
      chainReader = reader;
      const { signal } = abort;
      const startFollower = (): ChainFollower => {
        fileFetchers = createFileFetchers(fileTemplates, config.files ?? {}, log);
        follower = new ChainFollower({
          store: opened,
          subgraph,
          processor: createBlockProcessor(subgraph, schema, {
            chain: reader,
            maxInstanceMemoryBytes: 2 * 1024 * 1024,
            logger: (level, message) => {
              if (level !== 'debug' && level !== 'info') log(`mapping ${level}: ${message}`);
            },
          }),
          chain,
          pollIntervalMs: config.pollIntervalMs ?? 1000,
          commitIntervalMs: config.commitIntervalMs,
          maxRangesAhead: config.maxRangesAhead,
          transactions: config.transactions,
          fileFetchers,
          staticFiltersAbove: config.staticFiltersAbove,
          disableFailFast: config.disableFailFast,
          reorgThreshold: config.reorgThreshold ?? REORG_THRESHOLD,
          signal,
          log,
          onProgress: (p) => {
            // past the failed commit, or at the head with nothing to commit (the failed write was
            // the head's number alone)
            const recovered =
              storeFailure !== null &&
              (p.checkpoint > storeFailure.committed || (p.caughtUp && p.checkpoint >= p.head));
            if (recovered) {
              storeFailure = null;
              log(`store: ${storePath} is written again; indexing went on from where it stopped`);
            }
            config.onProgress?.(p);
            notify();
          },
        });
        return follower;
      };
      running = followUntilStopped(opened, startFollower, signal).then(
        (failure) => {
          stoppedError = failure ?? stoppedError ?? new Error('indexer stopped');
          notify();
        },
        (error: Error) => {
          stoppedError = error;
          log(`indexer failed: ${error.stack ?? error.message}`);
          notify();
        },
      );
    },
    async stop() {
      abort?.abort();
      await running;
      await query?.close();
      await chainReader?.close();
      closeFileFetchers();
      store?.close();
      unlockStore?.();
      unlockStore = null;
      store = null;
      chainReader = null;
      query = null;
      follower = null;
      running = null;
      stoppedError ??= new Error('indexer stopped');
      notify();
    },
    status() {
      if (!store || !follower) throw new Error('indexer not started');
      const cp: Checkpoint = store.committed();
      return {
        ...follower.progress(),
        fatalError: cp.fatalError,
        storeError: storeFailure?.message ?? null,
        lastCommitAt: cp.updatedAt,
      };
    },
    waitForBlock(number) {
      return waitUntil(() => store !== null && store.committed().number >= number);
    },
    waitForHead() {
      return waitUntil(() => {
        const p = follower?.progress();
        return p !== undefined && p.caughtUp && p.checkpoint >= p.head;
      });
    },
  };
  return indexer;
}
