// The route table: the single source of truth of the REST surface. Each entry holds the
// path, the parameter rules, the GraphQL document run in-process against the gateway, the
// mapping from its data to the response body, the cache tier and the documentation.
// Express routes, openapi.json, llms.txt, llms-full.txt and agents.json are generated from it.
// The entries themselves live in rest/routes/, one module per resource, each route built by a
// function named after its operationId; this file holds what they share and the order.
// The examples are those of the registry served (rest/examples.ts): an example of indexed data
// exists only over the devnet's, so `example` is optional.
import type { SlugResource } from '../gateway/inputs.ts';
import { DEVNET_EXAMPLES, type DocumentExamples } from './examples.ts';
import type { ParamValues } from './params.ts';
import { getDividendProofRoute, getDividendRoundRoute, listDividendRoundsRoute } from './routes/dividends.ts';
import { listEventsRoute } from './routes/events.ts';
import { getLatestNavRoute, getNavHistoryRoute } from './routes/fund-nav.ts';
import { getAllocationsRoute, getFundRoute, getReserveRoute, listFundsRoute } from './routes/funds.ts';
import { getHealthRoute } from './routes/health.ts';
import { getProtocolRoute, listContractsRoute, listPoliciesRoute } from './routes/registry.ts';
import { getStrategyRoute, listStrategiesRoute } from './routes/strategies.ts';

export const CACHE_TIERS = {
  reference: { maxAge: 3600, covers: 'protocol, contracts, policies, strategies, fund detail' },
  'latest-nav': { maxAge: 30, covers: 'latest NAV, fund list (carries each latest NAV)' },
  history: { maxAge: 300, covers: 'NAV history, dividends (rounds and proofs)' },
  live: { maxAge: 15, covers: 'health, events, allocations, reserve (live chain reads)' },
} as const;

type CacheTier = keyof typeof CACHE_TIERS;

type ParamSchema =
  | { type: 'integer'; minimum: number; maximum: number; default?: number }
  | { type: 'string'; pattern: string; maxLength?: number }
  /** a closed list of values, matched exactly (case-sensitive) */
  | { type: 'string'; enum: readonly string[] };

export interface ParamSpec {
  name: string;
  in: 'path' | 'query';
  /** a query parameter the request must give (path parameters always are) */
  required?: boolean;
  description: string;
  schema: ParamSchema;
  /** the rule in words, quoted in 400 problems */
  rule: string;
  /** a value that answers as documented; absent where only the devnet scenario has one */
  example?: string | number;
  /**
   * A parameter naming a registry resource: a value breaking the rule names none, so it is refused
   * in the words of an unknown slug's, which name the slug meant and say how to list the valid
   * values: a 404 for a path parameter (SPEC rule 3), a 400 for a query filter (rule 4).
   */
  names?: Extract<SlugResource, 'fund' | 'strategy'>;
}

/**
 * The paths `template` (`/v1/funds/{slug}`) names, as Express routes them (in any case, with or
 * without a trailing slash), each parameter a named group of one segment.
 */
export function templatePattern(template: string): RegExp {
  const segments = template.replace(/\./g, '\\.').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)');
  return new RegExp(`^${segments}/?$`, 'i');
}

/** Whether a request without `param` is refused: every path parameter, and the query ones marked so. */
export const isRequired = (param: ParamSpec): boolean => param.in === 'path' || param.required === true;

/* eslint-disable @typescript-eslint/no-explicit-any -- GraphQL data is shaped by each route's own document */
export type Data = any;

export interface RouteSpec {
  operationId: string;
  path: string;
  summary: string;
  description: string;
  tier: CacheTier;
  params: ParamSpec[];
  /** run in-process; variables are the parameters by name */
  document: string;
  /** GraphQL data -> response body; may throw NOT_FOUND */
  toBody(data: Data): unknown;
  /** component schema of the 200 body */
  responseSchema: string;
  /** a 200 body; absent where only the devnet scenario has one */
  example?: unknown;
  /** the not-found cases, for the 404 description */
  notFoundWhen?: string;
  /**
   * A route whose answer may leave out part of what was asked (a range cut at `limit`): `request`
   * gives the path and query, under the service's base URL, of the request for the rest (null when
   * nothing is left), which the answer names in a Link header with rel="next"; `rule` says when, for
   * the documents.
   */
  nextPage?: { rule: string; request(data: Data, values: ParamValues): string | null };
}

export interface DeprecatedRoute {
  path: string;
  replacement: string;
  description: string;
}

// in this order openapi.json, llms.txt and llms-full.txt list the routes
const ROUTE_BUILDERS: ((examples: DocumentExamples) => RouteSpec)[] = [
  getProtocolRoute,
  listContractsRoute,
  listPoliciesRoute,
  getHealthRoute,
  listFundsRoute,
  getFundRoute,
  getLatestNavRoute,
  getNavHistoryRoute,
  getAllocationsRoute,
  getReserveRoute,
  listDividendRoundsRoute,
  getDividendRoundRoute,
  getDividendProofRoute,
  listStrategiesRoute,
  getStrategyRoute,
  listEventsRoute,
];

/** The route table, with the examples of one registry's documents. */
export function routeTable(examples: DocumentExamples): RouteSpec[] {
  return ROUTE_BUILDERS.map((build) => build(examples));
}

/** the route table with the devnet's examples: that of the committed openapi.json */
export const ROUTES: RouteSpec[] = routeTable(DEVNET_EXAMPLES);

/** The `detail` of the 410 a removed route answers for fund `slug`. */
export const removedDetail = (old: DeprecatedRoute, slug: string) =>
  `${old.path} was removed in 1.0.0; use GET ${old.replacement.replace('{slug}', slug)}.`;

export const DEPRECATED_ROUTES: DeprecatedRoute[] = [
  {
    path: '/v1/nav/{slug}',
    replacement: '/v1/funds/{slug}/nav',
    description: 'Pre-1.0 latest-NAV path, removed in 1.0.0.',
  },
  {
    path: '/v1/funds/{slug}/navs',
    replacement: '/v1/funds/{slug}/nav/history',
    description: 'Pre-1.0 NAV history path, removed in 1.0.0.',
  },
];
