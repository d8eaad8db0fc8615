// Progress of the indexer behind the service, from the subgraph's _meta, and its health from the
// index-node status API when one is configured.
import { builder } from '../builder.ts';
import type { GatewayError } from '../errors.ts';
import type { IndexingFailure, IndexingHealth } from '../sources/indexing-status.ts';
import { IndexingFailureRef } from './indexing-failure.ts';

export interface IndexerStatusShape {
  chainId: number;
  contractsTracked: number | null;
  deployment: string | null;
  maxIndexedBlock: number | null;
  lastUpdatedAt: string | null;
  hasIndexingErrors: boolean | null;
  chainHeadBlock: number | null;
  lagBlocks: number | null;
  indexingHealth: IndexingHealth | null;
  fatalError: IndexingFailure | null;
  /** why the subgraph could not be read: the fields read from it are null beside this error */
  subgraphFailure: GatewayError | null;
}

/** `value`, or the subgraph's failure thrown, so that the field is null beside its error. */
export function readFromIndex<T>(status: { subgraphFailure: GatewayError | null }, value: T): T {
  if (status.subgraphFailure) throw status.subgraphFailure;
  return value;
}

export const IndexerStatusRef = builder.objectRef<IndexerStatusShape>('IndexerStatus').implement({
  description: 'How far the indexer has come.',
  fields: (t) => ({
    chainId: t.exposeInt('chainId', { description: 'chain id of the indexed network (Chain.id)' }),
    contractsTracked: t.int({
      nullable: true,
      description:
        "contracts whose events are indexed: the registry's FundRegistry, NavOracle and DividendDistributor, and every fund vault indexed so far; null beside an UPSTREAM_UNAVAILABLE error when the subgraph cannot be read",
      resolve: (status) => readFromIndex(status, status.contractsTracked),
    }),
    deployment: t.exposeString('deployment', {
      nullable: true,
      description:
        "id of the subgraph deployment serving the indexed data (the subgraph's _meta.deployment: graph-node's Qm... IPFS hash, the embedded indexer's an L and 45 hex digits); it changes when a new version of the subgraph is deployed under the same name. null when the subgraph does not say or cannot be read",
    }),
    maxIndexedBlock: t.int({
      nullable: true,
      description:
        "latest block the indexed data reflects (the subgraph's _meta); null beside an UPSTREAM_UNAVAILABLE error when the subgraph cannot be read",
      resolve: (status) => readFromIndex(status, status.maxIndexedBlock),
    }),
    lastUpdatedAt: t.string({
      nullable: true,
      description:
        'block time of maxIndexedBlock, ISO 8601 UTC with milliseconds; null when the subgraph reports no time, and beside an UPSTREAM_UNAVAILABLE error when it cannot be read',
      resolve: (status) => readFromIndex(status, status.lastUpdatedAt),
    }),
    hasIndexingErrors: t.boolean({
      nullable: true,
      description:
        'the subgraph reports indexing errors; its data is still served and status is degraded. null beside an UPSTREAM_UNAVAILABLE error when the subgraph cannot be read',
      resolve: (status) => readFromIndex(status, status.hasIndexingErrors),
    }),
    chainHeadBlock: t.exposeInt('chainHeadBlock', {
      nullable: true,
      description: 'latest block of the chain, read live; null when no chain RPC is configured or it fails',
    }),
    lagBlocks: t.exposeInt('lagBlocks', {
      nullable: true,
      description:
        'chainHeadBlock - maxIndexedBlock; negative when the index is ahead of the head the chain RPC reports (the RPC lags the indexer, or the indexed tip left the chain in a reorg); null when either is. status is degraded when it is further from 0 than HEALTH_MAX_LAG_BLOCKS',
    }),
    indexingHealth: t.exposeString('indexingHealth', {
      nullable: true,
      description:
        "the indexer's own verdict, from its status API (graph-node's indexingStatuses): healthy; unhealthy (indexing goes on past handler errors); failed (indexing has halted, fatalError says why: a failure it retries, like an RPC outage, or a block that fails every time). Only this shows a halted indexer on a chain without new blocks. null when the service has no status API configured (SUBGRAPH_STATUS_URL), or it does not answer or does not know the deployment",
    }),
    fatalError: t.field({
      type: IndexingFailureRef,
      nullable: true,
      description: 'why indexing halted, when indexingHealth is failed; null otherwise',
      resolve: (status) => status.fatalError,
    }),
  }),
});
