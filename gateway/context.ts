// The per-request context: the registry (shared, immutable) and fresh per-request loaders
// for the subgraph and the chain, so batching and caching never leak between requests.
import type { ChainLoaders, ChainSource } from './sources/chain.ts';
import { createChainLoaders } from './sources/chain.ts';
import type { DistributionSource } from './sources/distributions.ts';
import type { IndexingStatusSource } from './sources/indexing-status.ts';
import type { RegistryIndex } from './sources/registry.ts';
import type { SubgraphClient, SubgraphLoaders } from './sources/subgraph.ts';
import { createSubgraphLoaders } from './sources/subgraph.ts';

export interface GatewayContext {
  registry: RegistryIndex;
  subgraph: SubgraphLoaders;
  /** undefined when no RPC is configured: live records then answer `available: false` */
  chain: ChainLoaders | undefined;
  distributions: DistributionSource;
  /** undefined when no status API is configured: health's indexingHealth is then null */
  indexingStatus: IndexingStatusSource | undefined;
  apiVersion: string;
  healthMaxLagBlocks: number;
}

/** about ten minutes of blocks on a 12-second chain: past it, health says the data is stale */
export const DEFAULT_HEALTH_MAX_LAG_BLOCKS = 50;

export interface GatewaySources {
  registry: RegistryIndex;
  subgraph: SubgraphClient;
  chain: ChainSource | undefined;
  distributions: DistributionSource;
  indexingStatus: IndexingStatusSource | undefined;
  apiVersion: string;
  healthMaxLagBlocks: number;
}

export function createContext(sources: GatewaySources): GatewayContext {
  return {
    registry: sources.registry,
    subgraph: createSubgraphLoaders(sources.subgraph),
    chain: sources.chain ? createChainLoaders(sources.chain) : undefined,
    distributions: sources.distributions,
    indexingStatus: sources.indexingStatus,
    apiVersion: sources.apiVersion,
    healthMaxLagBlocks: sources.healthMaxLagBlocks,
  };
}
