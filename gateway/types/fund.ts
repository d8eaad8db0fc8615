// A fund: registry facts joined with its indexed state (status, NAV, dividends) and its
// live on-chain state (allocations, reserve).
import { builder } from '../builder.ts';
import { badInput, notFound } from '../errors.ts';
import { formatUnits, percentOf } from '../format.ts';
import {
  checkRange,
  CURSOR_RULE,
  decodeDividendsCursor,
  dividendsCursor,
  MAX_INT,
  NAV_HISTORY_LIMIT,
  noDividendRoundMessage,
  optionalArgument,
  PAGE_LIMIT,
  pageAfterCursor,
  pageLimit,
  pageOf,
} from '../inputs.ts';
import type { RegistryFund } from '../sources/registry.ts';
import type { FundRow } from '../sources/subgraph.ts';
import { AllocationsRef, type AllocationsShape } from './allocations.ts';
import { BaseAssetRef } from './base-asset.ts';
import { DividendRoundPageRef } from './dividend-round-page.ts';
import { DividendRoundRef } from './dividend-round.ts';
import { FundAddressesRef } from './fund-addresses.ts';
import { FundLinksRef } from './fund-links.ts';
import { FundStatusRef } from './fund-status.ts';
import { NavRecordRef } from './nav-record.ts';
import { PolicyRef } from './policy.ts';
import { ReserveRef, type ReserveShape } from './reserve.ts';

function fundStatus(row: FundRow | null): 'open' | 'paused' | 'closed' {
  if (row?.closed) return 'closed';
  return row && row.pausedModules.length > 0 ? 'paused' : 'open';
}

export const FundRef = builder.objectRef<RegistryFund>('Fund').implement({
  description: 'A fund: one vault, its share token and its settlement policy.',
  fields: (t) => ({
    slug: t.exposeString('slug', {
      description: 'identifier: fund(slug) and the REST paths /v1/funds/{slug} take it',
    }),
    name: t.exposeString('name', { description: 'display name in English' }),
    nameCn: t.exposeString('nameCn', { description: 'name in Chinese' }),
    chainId: t.int({
      description: 'chain id of the network the fund runs on (Chain.id)',
      resolve: (_f, _a, ctx) => ctx.registry.document.chain.id,
    }),
    baseAsset: t.field({
      type: BaseAssetRef,
      description: 'the ERC-20 the fund is denominated in; its decimals apply to every amount of the fund',
      resolve: (f) => f.baseAsset,
    }),
    policy: t.field({
      type: PolicyRef,
      description: 'the settlement policy the fund references',
      resolve: (f, _a, ctx) => ctx.registry.policyOf(f),
    }),
    status: t.field({
      type: FundStatusRef,
      // read from the subgraph: its failure nulls this field alone, not the fund around it
      nullable: true,
      description:
        "status derived from the indexed vault events; open for a vault not indexed yet; null, with an UPSTREAM_UNAVAILABLE error, when the subgraph fails (the fund's other fields are still answered)",
      resolve: async (f, _a, ctx) => fundStatus(await ctx.subgraph.fund.load(f.vault.toLowerCase())),
    }),
    since: t.exposeString('since', { description: 'date the fund started, YYYY-MM-DD' }),
    addresses: t.field({
      type: FundAddressesRef,
      description: 'its contracts and accounts',
      resolve: (f) => f,
    }),
    links: t.field({ type: FundLinksRef, description: 'its web pages', resolve: (f) => f.links }),
    latestNav: t.field({
      type: NavRecordRef,
      nullable: true,
      description:
        'the record of the highest Published epoch; null before the first publication, and null with an UPSTREAM_UNAVAILABLE error when the subgraph fails',
      resolve: async (f, _a, ctx) => {
        const row = await ctx.subgraph.fund.load(f.vault.toLowerCase());
        return row?.latestNav ? { fund: f, row: row.latestNav } : null;
      },
    }),
    latestRecordedNav: t.field({
      type: NavRecordRef,
      nullable: true,
      description:
        'the record of the highest epoch drafted on the NavOracle, whatever its status; null before the first draft, and null with an UPSTREAM_UNAVAILABLE error when the subgraph fails',
      resolve: async (f, _a, ctx) => {
        const row = await ctx.subgraph.fund.load(f.vault.toLowerCase());
        return row?.latestRecordedNav ? { fund: f, row: row.latestRecordedNav } : null;
      },
    }),
    navHistory: t.field({
      type: [NavRecordRef],
      // an argument breaking its rule fails this field alone, not the fund around it
      nullable: true,
      description:
        'NAV records of every status, ascending by epoch, at most `limit`. With `from`: the first `limit` epochs from it (up to `to`); without: the last `limit` epochs up to `to` (or the latest). A range holding more epochs than `limit` is cut there, and nothing else says so: when `limit` records come back, ask for the rest of the range with `from` the epoch after the last one returned and the same `to` (unless that last one is `to`), or, without `from`, with `to` the epoch before the first one (unless that first one is 1, the first epoch); the range is complete once fewer than `limit` come back. Null, with a BAD_INPUT error naming the argument, when an argument breaks its rule; null, with an UPSTREAM_UNAVAILABLE error, when the subgraph fails.',
      args: {
        from: t.arg.int({ description: `start epoch, inclusive: an integer from 0 to ${MAX_INT}` }),
        to: t.arg.int({
          description: `end epoch, inclusive: an integer from 0 to ${MAX_INT}, at least \`from\``,
        }),
        limit: t.arg.int({
          defaultValue: NAV_HISTORY_LIMIT.default,
          description: `most records returned: ${NAV_HISTORY_LIMIT.minimum} to ${NAV_HISTORY_LIMIT.maximum}`,
        }),
      },
      resolve: async (f, args, ctx) => {
        const from = args.from ?? undefined;
        const to = args.to ?? undefined;
        if (from !== undefined) checkRange('from', from, 0, MAX_INT);
        if (to !== undefined) checkRange('to', to, 0, MAX_INT);
        const limit = checkRange(
          'limit',
          args.limit ?? NAV_HISTORY_LIMIT.default,
          NAV_HISTORY_LIMIT.minimum,
          NAV_HISTORY_LIMIT.maximum,
        );
        if (from !== undefined && to !== undefined && from > to) {
          throw badInput('to', `to (${to}) must be greater than or equal to from (${from}).`);
        }
        const rows = await ctx.subgraph.navHistory({ vault: f.vault.toLowerCase(), from, to, limit });
        return rows.map((row) => ({ fund: f, row }));
      },
    }),
    allocations: t.field({
      type: AllocationsRef,
      nullable: true,
      description:
        "strategy allocations read live on-chain; available: false without a chain RPC; null, with an UPSTREAM_UNAVAILABLE error, when the RPC fails (the fund's other fields are still answered)",
      resolve: async (f, _a, ctx): Promise<AllocationsShape> => {
        if (!ctx.chain) return { fund: f.slug, available: false, totalAssets: null, strategies: [] };
        const vault = f.vault as `0x${string}`;
        const [strategies, totalAssets] = await Promise.all([
          ctx.chain.strategyAllocations(vault),
          ctx.chain.totalAssets(vault),
        ]);
        return {
          fund: f.slug,
          available: true,
          totalAssets: formatUnits(totalAssets, f.baseAsset.decimals),
          strategies: strategies.map((s) => ({
            strategy: s.strategy,
            targetBps: s.targetBps,
            capBps: s.capBps,
            active: s.active,
          })),
        };
      },
    }),
    reserve: t.field({
      type: ReserveRef,
      nullable: true,
      description:
        "reserve and the policy's bounds read live on-chain; available: false without a chain RPC; null, with an UPSTREAM_UNAVAILABLE error, when the RPC fails (the fund's other fields are still answered)",
      resolve: async (f, _a, ctx): Promise<ReserveShape> => {
        if (!ctx.chain) {
          return {
            fund: f.slug,
            available: false,
            balance: null,
            percentOfAum: null,
            targetMinBps: null,
            targetMaxBps: null,
          };
        }
        const vault = f.vault as `0x${string}`;
        const policy = ctx.registry.policyOf(f).address as `0x${string}`;
        const [balance, totalAssets, min, max] = await Promise.all([
          ctx.chain.reserveBalance(vault),
          ctx.chain.totalAssets(vault),
          ctx.chain.reserveTargetMinBps(policy),
          ctx.chain.reserveTargetMaxBps(policy),
        ]);
        return {
          fund: f.slug,
          available: true,
          balance: formatUnits(balance, f.baseAsset.decimals),
          percentOfAum: percentOf(balance, totalAssets),
          targetMinBps: min,
          targetMaxBps: max,
        };
      },
    }),
    dividends: t.field({
      type: DividendRoundPageRef,
      nullable: true,
      description:
        'dividend rounds, newest epoch first, cursor paging. Null, with a BAD_INPUT error naming the argument, when limit or cursor breaks its rule (an empty cursor included: omit it for the newest rounds); null, with an UPSTREAM_UNAVAILABLE error, when the subgraph fails.',
      args: {
        limit: t.arg.int({
          defaultValue: PAGE_LIMIT.default,
          description: `rounds per page: ${PAGE_LIMIT.minimum} to ${PAGE_LIMIT.maximum}`,
        }),
        cursor: t.arg.string({
          description:
            "the nextCursor of this fund's previous page, exactly as returned: one cut short or altered is BAD_INPUT; omit for the newest rounds",
        }),
      },
      resolve: async (f, args, ctx) => {
        const limit = pageLimit(args.limit);
        const cursor = optionalArgument('cursor', args.cursor, CURSOR_RULE);
        const after =
          cursor === undefined
            ? undefined
            : decodeDividendsCursor('cursor', cursor, f, ctx.registry.document.funds);
        const { rows, block } = await pageAfterCursor(ctx.chain, 'cursor', after?.block, () =>
          ctx.subgraph.dividendRounds({
            vault: f.vault.toLowerCase(),
            beforeEpoch: after?.epoch,
            atLeast: after?.block,
            first: limit + 1,
          }),
        );
        const page = pageOf(rows, limit, (last) => dividendsCursor(f.vault, { epoch: last.epoch, block }));
        return { items: page.items.map((row) => ({ fund: f, row })), nextCursor: page.nextCursor };
      },
    }),
    dividend: t.field({
      type: DividendRoundRef,
      nullable: true,
      description:
        'one dividend round. Null, with a NOT_FOUND error, when the fund has no round for the epoch (BAD_INPUT for a negative epoch); null, with an UPSTREAM_UNAVAILABLE error, when the subgraph fails.',
      args: {
        epoch: t.arg.int({
          required: true,
          description:
            'settlement epoch of the round, an integer >= 0, counted per fund and not a date (NavRecord.settledAt dates an epoch); the epochs that have a round are listed by `dividends { items { epoch } }` (GET /v1/funds/{slug}/dividends)',
        }),
      },
      resolve: async (f, args, ctx) => {
        const epoch = checkRange('epoch', args.epoch, 0, MAX_INT);
        const row = await ctx.subgraph.dividendRound.load(`${f.vault.toLowerCase()}-${epoch}`);
        if (!row) throw notFound(noDividendRoundMessage(f.slug, epoch));
        return { fund: f, row };
      },
    }),
  }),
});
