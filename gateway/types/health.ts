// Service and indexer health: what a client polls to detect stale data.
import { builder } from '../builder.ts';
import { DEFAULT_HEALTH_MAX_LAG_BLOCKS } from '../context.ts';
import { ApiInfoRef } from './api-info.ts';
import { HealthNavRef } from './health-nav.ts';
import { IndexerStatusRef, readFromIndex, type IndexerStatusShape } from './indexer-status.ts';

export interface HealthShape {
  status: 'ok' | 'degraded';
  api: { version: string };
  indexer: IndexerStatusShape;
  nav: { latestEpoch: number; publishedAt: string } | null;
  pausedModules: string[] | null;
  now: string;
}

export const HealthRef = builder.objectRef<HealthShape>('Health').implement({
  description: 'Liveness and data freshness.',
  fields: (t) => ({
    status: t.exposeString('status', {
      description: `ok; degraded when the subgraph cannot be read (then indexer.contractsTracked, maxIndexedBlock, lastUpdatedAt and hasIndexingErrors, and nav, are null beside UPSTREAM_UNAVAILABLE errors, while status and the live fields are answered), the indexer reports indexing errors, lags the chain head by more than the configured number of blocks (HEALTH_MAX_LAG_BLOCKS, default ${DEFAULT_HEALTH_MAX_LAG_BLOCKS}) or is that far ahead of the head the chain RPC reports, says it is not healthy (indexer.indexingHealth), or live reads fail`,
    }),
    api: t.field({ type: ApiInfoRef, description: 'the API itself', resolve: (h) => h.api }),
    indexer: t.field({
      type: IndexerStatusRef,
      description: 'how far the indexed data reaches',
      resolve: (h) => h.indexer,
    }),
    nav: t.field({
      type: HealthNavRef,
      nullable: true,
      description:
        "the most recent NAV publication of the registry's funds; null before any, and beside an UPSTREAM_UNAVAILABLE error when the subgraph cannot be read",
      resolve: (h) => readFromIndex(h.indexer, h.nav),
    }),
    pausedModules: t.stringList({
      nullable: true,
      description:
        'paused modules as "<fund slug>:<module>" (module: subscriptions, redemptions, claims), read live from each vault (the indexed state without a chain RPC or when live reads fail); empty when none; null beside an UPSTREAM_UNAVAILABLE error when neither can be read (the subgraph failing without a working chain RPC)',
      resolve: (h) => h.pausedModules ?? readFromIndex(h.indexer, null),
    }),
    now: t.exposeString('now', {
      description:
        'server time when this record was built, ISO 8601 UTC with milliseconds (GET /v1/health may answer a record built up to 15 s before, its Age header says how long)',
    }),
  }),
});
