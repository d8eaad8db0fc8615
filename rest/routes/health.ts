// The health route on its own: it is what monitors and clients poll to tell stale data from
// fresh, and it is read live rather than from the registry or the index alone.
import { API_VERSION } from '../../gateway/server.ts';
import type { DocumentExamples } from '../examples.ts';
import type { RouteSpec } from '../routes.ts';

/** a deployment id as graph-node names one (the embedded indexer's are an L and 45 hex digits) */
const EXAMPLE_DEPLOYMENT = 'QmTVqahxEPumHx4y1dUKpH9SAtP5ZqREhDm6JfRDkcWSwn';

export function getHealthRoute({ registry, scenario }: DocumentExamples): RouteSpec {
  return {
    operationId: 'getHealth',
    path: '/v1/health',
    summary: 'Service and indexer health',
    description:
      'Liveness, indexer progress (poll it to detect stale data) and the subgraph deployment serving it, the latest NAV publication, and paused modules read live.',
    tier: 'live',
    params: [],
    document: `query { health { status api { version }
      indexer { chainId contractsTracked deployment maxIndexedBlock lastUpdatedAt hasIndexingErrors chainHeadBlock lagBlocks
        indexingHealth fatalError { message blockNumber deterministic } }
      nav { latestEpoch publishedAt } pausedModules now } }`,
    toBody: (d) => d.health,
    responseSchema: 'HealthRecord',
    example: scenario && {
      status: 'ok',
      api: { version: API_VERSION },
      indexer: {
        chainId: registry.chain.id,
        contractsTracked: scenario.health.contractsTracked,
        deployment: EXAMPLE_DEPLOYMENT,
        maxIndexedBlock: scenario.health.maxIndexedBlock,
        lastUpdatedAt: scenario.latestNav.publishedAt,
        hasIndexingErrors: false,
        chainHeadBlock: scenario.health.maxIndexedBlock,
        lagBlocks: 0,
        indexingHealth: 'healthy',
        fatalError: null,
      },
      nav: { latestEpoch: scenario.latestNav.epoch, publishedAt: scenario.latestNav.publishedAt },
      pausedModules: scenario.health.pausedModules,
      now: scenario.health.now,
    },
  };
}
