// The root Query type: every entry point of the gateway. Unknown slugs raise NOT_FOUND.
import { builder } from '../builder.ts';
import { notFound } from '../errors.ts';
import {
  CURSOR_RULE,
  decodeEventsCursor,
  MAX_INT,
  type NamedEntry,
  optionalArgument,
  PAGE_LIMIT,
  pageAfterCursor,
  pageLimit,
  pageOf,
  SAME_EVENTS_FILTERS,
  slugArgumentDescription,
  type SlugResource,
  unknownSlugMessage,
} from '../inputs.ts';
import { EVENT_NAMES_BY_CONTRACT } from '../event-names.ts';
import { eventCursor, eventFilter, EVENTS_NAMING_NO_FUND, type ListedEvent } from '../event-filters.ts';
import { blockOfSortKey } from '../sources/subgraph.ts';
import { ContractRef } from './contract.ts';
import { FundRef } from './fund.ts';
import { HealthRef } from './health.ts';
import { health } from '../health.ts';
import { PolicyRef } from './policy.ts';
import { ProtocolEventPageRef } from './protocol-event-page.ts';
import { ProtocolRef } from './protocol.ts';
import { StrategyRef } from './strategy.ts';

/**
 * The registry entry a slug names, or NOT_FOUND saying where the valid slugs are listed (and which
 * slug was meant, for a display name given instead).
 */
function bySlug<T extends NamedEntry>(resource: SlugResource, entries: Map<string, T>, slug: string): T {
  const entry = entries.get(slug);
  if (entry !== undefined) return entry;
  throw notFound(unknownSlugMessage(resource, slug, entries));
}

builder.queryType({
  description: 'Read-only view of the fund-vault protocol: registry, indexed history and live chain state.',
  fields: (t) => ({
    protocol: t.field({
      type: ProtocolRef,
      description: 'protocol metadata from the registry',
      resolve: (_r, _a, ctx) => ctx.registry.document,
    }),
    contracts: t.field({
      type: [ContractRef],
      description: 'every contract the registry lists, in its order',
      resolve: (_r, _a, ctx) => ctx.registry.document.contracts,
    }),
    policies: t.field({
      type: [PolicyRef],
      description: 'every settlement policy; a fund references exactly one',
      resolve: (_r, _a, ctx) => ctx.registry.document.policies,
    }),
    policy: t.field({
      type: PolicyRef,
      nullable: true,
      description:
        'one settlement policy by slug. Null, with a NOT_FOUND error naming where slugs are listed, for an unknown slug',
      args: { slug: t.arg.string({ required: true, description: slugArgumentDescription('policy') }) },
      resolve: (_r, { slug }, ctx) => bySlug('policy', ctx.registry.policyBySlug, slug),
    }),
    funds: t.field({
      type: [FundRef],
      description: 'every fund the registry lists; their slugs are the values of fund(slug)',
      resolve: (_r, _a, ctx) => ctx.registry.document.funds,
    }),
    fund: t.field({
      type: FundRef,
      nullable: true,
      description:
        "one fund by slug. Null, with a NOT_FOUND error naming where slugs are listed, for an unknown slug. A failing subgraph or chain RPC nulls only the fund's fields that read it, each with its UPSTREAM_UNAVAILABLE error",
      args: { slug: t.arg.string({ required: true, description: slugArgumentDescription('fund') }) },
      resolve: (_r, { slug }, ctx) => bySlug('fund', ctx.registry.fundBySlug, slug),
    }),
    strategies: t.field({
      type: [StrategyRef],
      description: 'the strategy catalogue; its slugs are the values of strategy(slug)',
      resolve: (_r, _a, ctx) => ctx.registry.document.strategies,
    }),
    strategy: t.field({
      type: StrategyRef,
      nullable: true,
      description:
        'one strategy by slug. Null, with a NOT_FOUND error naming where slugs are listed, for an unknown slug',
      args: { slug: t.arg.string({ required: true, description: slugArgumentDescription('strategy') }) },
      resolve: (_r, { slug }, ctx) => bySlug('strategy', ctx.registry.strategyBySlug, slug),
    }),
    events: t.field({
      type: ProtocolEventPageRef,
      // a root field that cannot be null takes the whole answer with it when an argument is bad
      nullable: true,
      description:
        'indexed events, newest first, cursor paging. Null, with a BAD_INPUT error naming the argument, when an argument breaks its rule (an empty string included: omit an argument not wanted) or the filters cannot match together; null, with an UPSTREAM_UNAVAILABLE error, when the subgraph fails.',
      args: {
        contract: t.arg.string({
          description:
            "emitting contract: 0x followed by 40 hex digits, any case. Events come from the registry's FundRegistry, NavOracle and DividendDistributor (Query.contracts) and every fund vault (Fund.addresses.vault)",
        }),
        eventName: t.arg.string({
          // the list is short and closed: naming it here spares an agent a refused request to learn it
          description: `event name, exactly as written (case-sensitive), one of the closed list by emitting contract: ${EVENT_NAMES_BY_CONTRACT}. Any other name is BAD_INPUT`,
        }),
        fund: t.arg.string({
          description: `slug of a fund (Query.funds): only the events that concern it, whichever contract emitted them: its vault's, and the FundRegistry's, NavOracle's and DividendDistributor's events naming it. Combine with eventName for, e.g., one fund's NavPublished. An unknown slug is BAD_INPUT, and so are, beside it, a contract that is another fund's vault and an eventName that never concerns a fund (${EVENTS_NAMING_NO_FUND.join(', ')})`,
        }),
        fromBlock: t.arg.int({
          description: `lowest block number, inclusive: 0 to ${MAX_INT}. Only blocks indexed so far have events here: a block past the indexed head (health.indexer.maxIndexedBlock; X-Indexed-Block on the HTTP answer) holds none yet, so an empty page for a range past it says nothing about those blocks until they are indexed`,
        }),
        toBlock: t.arg.int({
          description: `highest block number, inclusive: 0 to ${MAX_INT}, at least fromBlock. Blocks past the indexed head (see fromBlock) hold no events yet, whatever the chain holds`,
        }),
        limit: t.arg.int({
          defaultValue: PAGE_LIMIT.default,
          description: `events per page: ${PAGE_LIMIT.minimum} to ${PAGE_LIMIT.maximum}`,
        }),
        cursor: t.arg.string({
          description: `the nextCursor (or an event's cursor) of a previous page, exactly as returned, with ${SAME_EVENTS_FILTERS} as the query that returned it: a cursor continues only that listing. One cut short or altered, or given with other filters, is BAD_INPUT; omit for the newest events`,
        }),
      },
      resolve: async (_r, args, ctx) => {
        const limit = pageLimit(args.limit);
        const filters = eventFilter(ctx.registry, args);
        const cursor = optionalArgument('cursor', args.cursor, CURSOR_RULE);
        const beforeSortKey =
          cursor === undefined ? undefined : decodeEventsCursor('cursor', cursor, filters);
        const cursorBlock = beforeSortKey === undefined ? undefined : blockOfSortKey(beforeSortKey);
        const rows = await pageAfterCursor(ctx.chain, 'cursor', cursorBlock, () =>
          ctx.subgraph.events({ ...filters, beforeSortKey, first: limit + 1 }),
        );
        const listed: ListedEvent[] = rows.map((row) => ({ ...row, filters }));
        return pageOf(listed, limit, eventCursor);
      },
    }),
    health: t.field({
      type: HealthRef,
      description:
        'service and indexer health: poll it to detect stale data. It is answered while the subgraph fails too: status degraded, with the fields read from the index null beside UPSTREAM_UNAVAILABLE errors (Health says which)',
      resolve: (_r, _a, ctx) => health(ctx),
    }),
  }),
});
