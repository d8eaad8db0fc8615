// What GET /v1/health and the GraphQL `health` field answer, and the rules that make its status
// `degraded`: the one place SPEC's health record is computed (types/health.ts holds only its shape).
import type { GatewayContext } from './context.ts';
import { GatewayError } from './errors.ts';
import { isoFromSeconds } from './format.ts';
import type { FundRow } from './sources/subgraph.ts';
import type { HealthShape } from './types/health.ts';

const MODULES = ['subscriptions', 'redemptions', 'claims'] as const;
const SINGLETON_KINDS = new Set(['FundRegistry', 'NavOracle', 'DividendDistributor']);

/** The registry's funds' paused modules as the index holds them, "<fund slug>:<module>". */
function indexedPausedModules(ctx: GatewayContext, indexed: FundRow[]): string[] {
  const byVault = new Map(indexed.map((row) => [row.id.toLowerCase(), row]));
  return ctx.registry.registry.funds.flatMap((f) =>
    (byVault.get(f.vault.toLowerCase())?.pausedModules ?? []).map((m) => `${f.slug}:${m}`),
  );
}

/** Paused modules per fund, read live; the indexed ones when no RPC is configured. */
async function pausedModules(ctx: GatewayContext, indexed: FundRow[]): Promise<string[]> {
  const chain = ctx.chain;
  if (!chain) return indexedPausedModules(ctx, indexed);
  const funds = ctx.registry.registry.funds;
  const flags = await Promise.all(funds.map((f) => chain.pausedModules(f.vault as `0x${string}`)));
  return funds.flatMap((f, i) => MODULES.filter((_m, j) => flags[i]?.[j]).map((m) => `${f.slug}:${m}`));
}

/**
 * The health record: how far the index reaches and whether to trust it (indexing errors, lag behind
 * the chain head, the indexer's own verdict, live reads failing), the latest NAV publication and
 * the paused modules.
 */
export async function health(ctx: GatewayContext): Promise<HealthShape> {
  const indexed = await ctx.subgraph.allFunds();
  const { freshness } = ctx.subgraph;
  let degraded = freshness.hasIndexingErrors;
  let paused: string[];
  let head: number | null = null;
  // the chain the RPC actually serves when one is configured; the registry's claim otherwise
  let chainId = ctx.registry.registry.chain.id;
  // asked beside the live reads; it answers null rather than failing
  const indexing =
    ctx.indexingStatus && freshness.deployment !== null
      ? ctx.indexingStatus.status(freshness.deployment)
      : Promise.resolve(null);
  try {
    [paused, head, chainId] = await Promise.all([
      pausedModules(ctx, indexed),
      ctx.chain ? ctx.chain.headBlock().then(Number) : Promise.resolve(null),
      ctx.chain ? ctx.chain.chainId() : Promise.resolve(chainId),
    ]);
  } catch (error) {
    if (!(error instanceof GatewayError) || error.code !== 'UPSTREAM_UNAVAILABLE') throw error;
    // live reads failed: report the indexed view and say so
    degraded = true;
    paused = indexedPausedModules(ctx, indexed);
  }
  let latest: { epoch: number; publishedAt: string } | null = null;
  for (const row of indexed) {
    const nav = row.latestNav;
    if (nav?.publishedAt && (!latest || BigInt(nav.publishedAt) > BigInt(latest.publishedAt))) {
      latest = { epoch: nav.epoch, publishedAt: nav.publishedAt };
    }
  }
  const maxIndexedBlock = freshness.indexedBlock ?? 0;
  const lagBlocks = head === null ? null : Math.max(0, head - maxIndexedBlock);
  if (lagBlocks !== null && lagBlocks > ctx.healthMaxLagBlocks) degraded = true;
  const status = await indexing;
  if (status !== null && status.health !== 'healthy') degraded = true;
  const singletons = ctx.registry.registry.contracts.filter((c) => SINGLETON_KINDS.has(c.kind)).length;
  return {
    status: degraded ? 'degraded' : 'ok',
    api: { version: ctx.apiVersion },
    indexer: {
      chainId,
      contractsTracked: singletons + indexed.length,
      deployment: freshness.deployment,
      maxIndexedBlock,
      lastUpdatedAt: freshness.indexedAt === null ? null : isoFromSeconds(freshness.indexedAt),
      hasIndexingErrors: freshness.hasIndexingErrors,
      chainHeadBlock: head,
      lagBlocks,
      indexingHealth: status?.health ?? null,
      fatalError: status?.fatalError ?? null,
    },
    nav: latest ? { latestEpoch: latest.epoch, publishedAt: isoFromSeconds(latest.publishedAt) } : null,
    pausedModules: paused,
    now: new Date().toISOString(),
  };
}
