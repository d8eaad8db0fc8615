// Progress of the indexer behind the service, from the subgraph's _meta.
import { builder } from '../builder.ts';

export interface IndexerStatusShape {
  chainId: number;
  contractsTracked: number;
  maxIndexedBlock: number;
  lastUpdatedAt: string | null;
  hasIndexingErrors: boolean;
  chainHeadBlock: number | null;
  lagBlocks: number | null;
}

export const IndexerStatusRef = builder.objectRef<IndexerStatusShape>('IndexerStatus').implement({
  description: 'How far the indexer has come.',
  fields: (t) => ({
    chainId: t.exposeInt('chainId'),
    contractsTracked: t.exposeInt('contractsTracked', {
      description: 'FundRegistry, NavOracle, DividendDistributor and every indexed fund vault',
    }),
    maxIndexedBlock: t.exposeInt('maxIndexedBlock'),
    lastUpdatedAt: t.exposeString('lastUpdatedAt', {
      nullable: true,
      description: 'time of the last indexed block, ISO 8601',
    }),
    hasIndexingErrors: t.exposeBoolean('hasIndexingErrors'),
    chainHeadBlock: t.exposeInt('chainHeadBlock', {
      nullable: true,
      description: 'null without a chain RPC',
    }),
    lagBlocks: t.exposeInt('lagBlocks', { nullable: true, description: 'chainHeadBlock - maxIndexedBlock' }),
  }),
});
