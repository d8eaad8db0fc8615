// What GET /v1/health and the GraphQL `health` field answer, and the rules that make its status
// `degraded`: the one place SPEC's health record is computed (types/health.ts holds only its shape).
import type { GatewayContext } from './context.ts';
import { GatewayError } from './errors.ts';
import { isoFromSeconds } from './format.ts';
import type { FundRow } from './sources/subgraph.ts';
import type { HealthShape } from './types/health.ts';

const MODULES = ['subscriptions', 'redemptions', 'claims'] as const;
const SINGLETON_KINDS = new Set(['FundRegistry', 'NavOracle', 'DividendDistributor']);

/** The registry's funds with their indexed rows (undefined for a vault not indexed yet). */
function registryRows(ctx: GatewayContext, indexed: FundRow[]): { slug: string; row: FundRow | undefined }[] {
  const byVault = new Map(indexed.map((row) => [row.id.toLowerCase(), row]));
  return ctx.registry.document.funds.map((f) => ({ slug: f.slug, row: byVault.get(f.vault.toLowerCase()) }));
}

/**
 * The registry's funds' paused modules as the index holds them, "<fund slug>:<module>"; null when
 * the subgraph could not be read.
 */
function indexedPausedModules(ctx: GatewayContext, indexed: FundRow[] | null): string[] | null {
  if (indexed === null) return null;
  return registryRows(ctx, indexed).flatMap(({ slug, row }) =>
    (row?.pausedModules ?? []).map((m) => `${slug}:${m}`),
  );
}

/** Paused modules per fund, read live; the indexed ones when no RPC is configured. */
async function pausedModules(ctx: GatewayContext, indexed: FundRow[] | null): Promise<string[] | null> {
  const chain = ctx.chain;
  if (!chain) return indexedPausedModules(ctx, indexed);
  const funds = ctx.registry.document.funds;
  const flags = await Promise.all(funds.map((f) => chain.pausedModules(f.vault as `0x${string}`)));
  return funds.flatMap((f, i) => MODULES.filter((_m, j) => flags[i]?.[j]).map((m) => `${f.slug}:${m}`));
}

/**
 * The most recent NAV publication of the registry's funds (a vault the index holds but the
 * registry does not list is no fund of this service's), or null before any.
 */
function latestPublication(ctx: GatewayContext, indexed: FundRow[]): HealthShape['nav'] {
  let latest: { epoch: number; publishedAt: string } | null = null;
  for (const { row } of registryRows(ctx, indexed)) {
    const nav = row?.latestNav;
    if (nav?.publishedAt && (!latest || BigInt(nav.publishedAt) > BigInt(latest.publishedAt))) {
      latest = { epoch: nav.epoch, publishedAt: nav.publishedAt };
    }
  }
  return latest && { latestEpoch: latest.epoch, publishedAt: isoFromSeconds(latest.publishedAt) };
}

const isUpstreamFailure = (error: unknown) =>
  error instanceof GatewayError && error.code === 'UPSTREAM_UNAVAILABLE';

/**
 * Every indexed fund, or the subgraph's failure: health reports that outage (degraded, the fields
 * read from the index null beside this error) rather than failing with it, so that a client
 * polling it still learns the status and the live fields.
 */
async function indexedFunds(ctx: GatewayContext): Promise<FundRow[] | GatewayError> {
  try {
    return await ctx.subgraph.allFunds();
  } catch (error) {
    if (!isUpstreamFailure(error)) throw error;
    return error as GatewayError;
  }
}

/**
 * The health record: how far the index reaches and whether to trust it (the subgraph failing,
 * indexing errors, lag behind the chain head, the indexer's own verdict, live reads failing), the
 * latest NAV publication and the paused modules.
 */
export async function health(ctx: GatewayContext): Promise<HealthShape> {
  const read = await indexedFunds(ctx);
  const subgraphFailure = read instanceof GatewayError ? read : null;
  const indexed = subgraphFailure ? null : (read as FundRow[]);
  const { freshness } = ctx.subgraph;
  let degraded = indexed === null || freshness.hasIndexingErrors;
  let paused: string[] | null;
  let head: number | null = null;
  // the chain the RPC actually serves when one is configured; the registry's claim otherwise
  let chainId = ctx.registry.document.chain.id;
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
    if (!isUpstreamFailure(error)) throw error;
    // live reads failed: report the indexed view and say so
    degraded = true;
    paused = indexedPausedModules(ctx, indexed);
  }
  // null only when the subgraph failed: each of its answers says its block
  const maxIndexedBlock = freshness.indexedBlock;
  // negative when the index is ahead of the head the RPC reports: the RPC lags the indexer's node, or
  // the indexed tip left the chain in a reorg; either way the live reads and the index disagree
  const lagBlocks = head === null || maxIndexedBlock === null ? null : head - maxIndexedBlock;
  if (lagBlocks !== null && Math.abs(lagBlocks) > ctx.healthMaxLagBlocks) degraded = true;
  const status = await indexing;
  if (status !== null && status.health !== 'healthy') degraded = true;
  const singletons = ctx.registry.document.contracts.filter((c) => SINGLETON_KINDS.has(c.kind)).length;
  return {
    status: degraded ? 'degraded' : 'ok',
    api: { version: ctx.apiVersion },
    indexer: {
      chainId,
      contractsTracked: indexed === null ? null : singletons + indexed.length,
      deployment: freshness.deployment,
      maxIndexedBlock,
      lastUpdatedAt: freshness.indexedAt === null ? null : isoFromSeconds(freshness.indexedAt),
      hasIndexingErrors: indexed === null ? null : freshness.hasIndexingErrors,
      chainHeadBlock: head,
      lagBlocks,
      indexingHealth: status?.health ?? null,
      fatalError: status?.fatalError ?? null,
      subgraphFailure,
    },
    nav: indexed === null ? null : latestPublication(ctx, indexed),
    pausedModules: paused,
    now: new Date().toISOString(),
  };
}
