// What start() opens before anything follows the chain: the deployment's store, taken under its lock,
// and the query service that serves the graph-node dialect from that store's file. A store that
// cannot be opened gives its lock back at once, so that a refused start() leaves nothing held.
import { createQueryService, type QueryService } from './query/create-query-service.ts';
import { deploymentFeatures } from './query/index-node-api.ts';
import type { Deployment } from './deployment.ts';
import type { IndexerConfig } from './indexer.ts';
import { openStore, type IndexerStore } from './store/sqlite-store.ts';
import { lockStore } from './store/store-lock.ts';

/** The name the query API serves the subgraph under unless INDEXER_SUBGRAPH_NAME says otherwise. */
export const DEFAULT_SUBGRAPH_NAME = 'fund-protocol';

export interface LockedStore {
  store: IndexerStore;
  /** closes the store, then releases its lock (store-lock.ts) */
  close(): void;
}

/** The deployment's store under its lock; `log` hears what the store reports (failed checkpoints). */
export function openLockedStore(deployment: Deployment, log: (line: string) => void): LockedStore {
  const unlock = lockStore(deployment.storePath);
  try {
    const store = openStore({
      path: deployment.storePath,
      schema: deployment.schema,
      startBlock: deployment.startBlock,
      deployment: deployment.id,
      fileEntityTypes: deployment.subgraph.fileEntityTypes,
      historyBlocks: deployment.historyBlocks,
      log,
    });
    return {
      store,
      close: () => {
        store.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}

/**
 * The query service of the deployment's store; `transientFailure` says what holds indexing up
 * meanwhile, for the index-node status API.
 */
export function createStoreQueryService(
  config: Pick<
    IndexerConfig,
    'subgraphName' | 'network' | 'queryMaxResultBytes' | 'queryTimeoutMs' | 'keepAliveTimeoutMs'
  >,
  deployment: Deployment,
  transientFailure: () => string | null,
): QueryService {
  return createQueryService({
    storePath: deployment.storePath,
    schema: deployment.schema,
    deployment: deployment.id,
    subgraphName: config.subgraphName ?? DEFAULT_SUBGRAPH_NAME,
    network: config.network,
    startBlock: deployment.startBlock,
    historyBlocks: deployment.historyBlocks,
    transientFailure,
    features: deploymentFeatures(deployment.subgraph, deployment.schema),
    maxResultBytes: config.queryMaxResultBytes,
    timeoutMs: config.queryTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
  });
}
