// Generates the OpenAPI 3.1 document from the route table: every path with its parameter
// bounds, its 200 schema and example, every problem response with an example, and the
// caching, rate-limit and freshness headers. The committed openapi.json is this output for
// the default base URL (`npm run openapi:print`); a test fails when they drift apart.
import { ERROR_CODES, internalError } from '../gateway/errors.ts';
import { unknownSlugMessage } from '../gateway/inputs.ts';
import { MAX_LIST_ITEMS, UNPAGED_LIST_ITEMS } from '../gateway/list-item-budget.ts';
import { API_VERSION, DEFAULT_ARMOR_LIMITS } from '../gateway/server.ts';
import { RESYNC_RETRY_AFTER_SECONDS } from '../gateway/sources/subgraph.ts';
import {
  GRAPHQL_BODY_TOO_LARGE,
  GRAPHQL_LENGTH_REQUIRED,
  GRAPHQL_NOT_ACCEPTABLE,
  MAX_GRAPHQL_BODY_BYTES,
  unsupportedGraphqlBody,
} from './graphql-http.ts';
import {
  badHostDetail,
  MAX_URL_LENGTH,
  noEndpointDetail,
  PROBLEM_KINDS,
  problemBody,
  UPSTREAM_RETRY_AFTER_SECONDS,
  uriTooLongDetail,
  type ProblemKindName,
} from './problems.ts';
import { DISCOVERY_DOCUMENTS, type DiscoveryDocument } from './document-table.ts';
import { DEVNET_EXAMPLES, type DocumentExamples } from './examples.ts';
import {
  DEFAULT_RATE_LIMIT,
  rateLimitedDetail,
  rateLimitStatement,
  type RateLimitConfig,
} from './rate-limit.ts';
import {
  CACHE_TIERS,
  DEPRECATED_ROUTES,
  removedDetail,
  routeTable,
  ROUTES,
  isRequired,
  templatePattern,
  type ParamSpec,
  type RouteSpec,
} from './routes.ts';
import { componentSchemas, type JsonSchema } from './schemas.ts';

export const API_TITLE = 'Fund Protocol Data Service';
export const DEFAULT_BASE_URL = 'http://localhost:8080';
/** the `query` example of GET /graphql, linked from llms.txt */
export const graphqlExampleQuery = (examples: DocumentExamples) =>
  `{ fund(slug: "${examples.fund.slug}") { name latestNav { epoch navPerShare } } }`;
/**
 * What the documents of a service over a registry other than the devnet's say of their examples:
 * those of indexed data are left out there (rest/examples.ts).
 */
export const NETWORK_EXAMPLES_NOTE =
  "Examples: names, slugs, addresses, chain and links are this deployment's, from its registry. Examples of indexed or live data (epochs, NAVs, dividend rounds and their recipients, events, blocks, cursors) are not shown, since none is known to hold on this network: learn them from the list endpoints (GET /v1/funds, GET /v1/funds/{slug}/nav/history, GET /v1/funds/{slug}/dividends, GET /v1/events). Policy `params` and fund `status` in the examples are illustrative; the endpoints answer the live values.";
/** /graphql in a few words, for the overview of every discovery document */
export const GRAPHQL_SUMMARY = `/graphql answers GraphQL queries over the same data, for clients that choose their own fields (GET with ?query=, or POST); its schema, with every type, field, argument and enum value described, is served as SDL at GET ${DISCOVERY_DOCUMENTS.graphqlSchema.path} and by introspection.`;
/** what /graphql does with a request's `extensions` (gateway/request-errors.ts refuses a persisted query) */
export const GRAPHQL_EXTENSIONS =
  'request extensions (GraphQL over HTTP), a JSON object: accepted, and none changes the answer; a persisted query (extensions.persistedQuery without query) is refused with PERSISTED_QUERY_NOT_SUPPORTED: send the document itself';
/** what a /graphql request may weigh; introspection counts too, except in the list items */
export const GRAPHQL_LIMITS = `Limits, introspection included: depth ${DEFAULT_ARMOR_LIMITS.maxDepth}, cost ${DEFAULT_ARMOR_LIMITS.maxCost}, ${DEFAULT_ARMOR_LIMITS.maxAliases} aliases, ${DEFAULT_ARMOR_LIMITS.maxTokens} tokens; no batching. A query may also ask for at most ${MAX_LIST_ITEMS.toLocaleString('en-US')} list items: each list counts its limit argument (or its default; a variable counts as the largest limit allowed) times the lists it is nested in, a list without a limit as many items as the registry lists (funds, strategies, contracts, policies) or ${UNPAGED_LIST_ITEMS}, and every alias apart; split a query over it into smaller ones.`;

/** how to tell stale data, which the time headers cannot tell */
const JUDGE_BY_BLOCKS =
  'Judge freshness by blocks: X-Indexed-Block-Lag (the chain head minus X-Indexed-Block) and GET /v1/health indexer.lagBlocks';

export const FRESHNESS_HEADERS = {
  'X-Chain-Block': {
    description:
      'block number at which the values this response read live from the chain (allocations, reserve, policy parameters, paused modules, claimed) were read; present when it read any',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Indexed-Block': {
    description: 'block number the indexed data in this response reflects; present when it read indexed data',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Indexed-At': {
    description: 'time of that block, ISO 8601',
    schema: { type: 'string', format: 'date-time' },
  },
  'X-Indexed-Block-Lag': {
    description:
      'chain head minus X-Indexed-Block when the body was built (present when a chain RPC is configured)',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Data-Lag-Seconds': {
    description: `server time minus X-Indexed-At when the answer was sent, in seconds: how old the block's timestamp is, not how far the index is behind (a quiet chain's last block is old however current the index, and on a devnet with synthetic block timestamps it says nothing about staleness). ${JUDGE_BY_BLOCKS}`,
    schema: { type: 'integer', minimum: 0 },
  },
} as const;

/** what X-Data-Lag-Seconds says, on the deployment's chain */
const dataLagMeaning = ({ syntheticChainClock }: DocumentExamples) =>
  `X-Data-Lag-Seconds is wall-clock time minus the indexed block's timestamp: on a quiet chain it grows while the index is current${
    syntheticChainClock
      ? ", and on this deployment's chain, the local devnet, whose block timestamps are synthetic (they start at 2025-01-01), it is hundreds of days whatever the state of the index: here it says nothing about staleness."
      : ', so by itself it says nothing about staleness.'
  }`;

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const freshnessHeaderRefs = Object.fromEntries(
  Object.keys(FRESHNESS_HEADERS).map((name) => [name, headerRef(name)]),
);

function parameterObject(param: ParamSpec): JsonSchema {
  const { name, in: location, description, schema, example } = param;
  return {
    name,
    in: location,
    required: isRequired(param),
    description: `${description}. Must be ${param.rule}.`,
    schema,
    example,
  };
}

/**
 * `/v1/funds/{slug}/nav` with the example values of its path parameters; a parameter without an
 * example stays a template (`{epoch}`). A deprecated route's `{slug}` is the example fund's.
 */
function examplePath(route: { path: string; params?: ParamSpec[] }, examples: DocumentExamples): string {
  let path = route.path;
  for (const p of route.params ?? [])
    if (p.in === 'path' && p.example !== undefined) path = path.replace(`{${p.name}}`, String(p.example));
  return path.replace('{slug}', examples.fund.slug);
}

/**
 * examplePath plus the required query parameters: a URL that answers 200 as it stands, or
 * undefined when a required parameter has no example (only the devnet scenario has one).
 */
export function exampleRequest(route: RouteSpec, examples: DocumentExamples): string | undefined {
  const required = route.params.filter(isRequired);
  if (required.some((p) => p.example === undefined)) return undefined;
  const query = required
    .filter((p) => p.in === 'query')
    .map((p) => `${p.name}=${encodeURIComponent(String(p.example))}`)
    .join('&');
  const path = examplePath(route, examples);
  return query ? `${path}?${query}` : path;
}

/** the problem+json of a response: the Problem schema, and an example of `kind` */
function problemMedia(
  problemBase: string,
  kind: ProblemKindName,
  detail: string,
  instance: string,
  parameter?: string,
): JsonSchema {
  return {
    schema: { $ref: '#/components/schemas/Problem' },
    example: problemBody(problemBase, kind, detail, instance, parameter),
  };
}

function problemResponse(
  problemBase: string,
  kind: ProblemKindName,
  description: string,
  detail: string,
  instance: string,
  parameter?: string,
): JsonSchema {
  const retry = kind === 'rate-limited' || kind === 'upstream-unavailable';
  return {
    description,
    headers: {
      'Cache-Control': { description: 'no-store: errors are never cached', schema: { type: 'string' } },
      ...(retry ? { 'Retry-After': headerRef('Retry-After') } : {}),
    },
    content: {
      'application/problem+json': problemMedia(problemBase, kind, detail, instance, parameter),
    },
  };
}

/** The 429 a client over the burst limit gets, where the deployment limits requests at all. */
function rateLimitedResponse(problemBase: string, instance: string, rateLimit: RateLimitConfig): JsonSchema {
  return problemResponse(
    problemBase,
    'rate-limited',
    'Rate limit exceeded; wait Retry-After seconds.',
    rateLimitedDetail(rateLimit.burst, rateLimit.burstWindowSeconds, '12'),
    instance,
  );
}

/** The 414 a request over MAX_URL_LENGTH gets, on any path; `graphql`: the one of a GET /graphql. */
function uriTooLongResponse(problemBase: string, instance: string, graphql = false): JsonSchema {
  return problemResponse(
    problemBase,
    'uri-too-long',
    `The request URL is over ${MAX_URL_LENGTH} characters.`,
    uriTooLongDetail(MAX_URL_LENGTH + 1, graphql),
    instance,
  );
}

/** the paths the service answers, as patterns of their templates (`/v1/funds/{slug}`) */
const SERVED_PATHS = [
  ...ROUTES,
  ...DEPRECATED_ROUTES,
  ...Object.values(DISCOVERY_DOCUMENTS),
  { path: '/graphql' },
].map(({ path }) => templatePattern(path));

/**
 * A path below `path` that is no endpoint: the 404 example of a path that names no resource. One
 * segment below a list can be an item of it (/v1/funds/x is a fund), so it goes deeper until no
 * path the service answers matches.
 */
function pathBelow(path: string): string {
  let below = `${path.replace(/\/$/, '')}/x`;
  while (SERVED_PATHS.some((served) => served.test(below))) below += '/x';
  return below;
}

/** when a path that names no resource answers 404 */
const noEndpointWhen = (path: string) => `a path below it, such as ${pathBelow(path)}, is no endpoint`;

/**
 * The 404 of a path that names no resource (a list, a document, /graphql): never of the path
 * itself, but of one below it, which the example asks for.
 */
function noEndpointResponse(problemBase: string, baseUrl: string, path: string): JsonSchema {
  const below = pathBelow(path);
  return problemResponse(
    problemBase,
    'not-found',
    `Not found: never this path itself, but ${noEndpointWhen(path)}.`,
    noEndpointDetail(below, baseUrl),
    below,
  );
}

/** the example of a request refused before any endpoint reads it (rest/request-guards.ts) */
const BAD_HOST_DETAIL = badHostDetail('api example.com');

/** The 400 of a request refused before any endpoint reads it. `also`: the endpoint's own 400s. */
function malformedRequestResponse(problemBase: string, instance: string, also = ''): JsonSchema {
  return problemResponse(
    problemBase,
    'malformed-request',
    `The request itself is malformed: no Host header, a Host header that is no host name or address, or a request line or header that cannot be read.${also}`,
    BAD_HOST_DETAIL,
    instance,
  );
}

function internalErrorResponse(problemBase: string, instance: string): JsonSchema {
  return problemResponse(
    problemBase,
    'internal-error',
    'Server failure (details are logged, not disclosed).',
    'The service failed while answering; retry later.',
    instance,
  );
}

/**
 * The problems of the discovery documents and the removed routes, beside their own: SPEC's 400,
 * 404, 429 and 500 of every endpoint, and the 414 of any path.
 */
function everyPathProblems(
  problemBase: string,
  baseUrl: string,
  instance: string,
  rateLimit: RateLimitConfig | false,
  also400?: string,
): Record<string, JsonSchema> {
  return {
    '400': malformedRequestResponse(problemBase, instance, also400),
    '404': noEndpointResponse(problemBase, baseUrl, instance),
    '414': uriTooLongResponse(problemBase, instance),
    ...(rateLimit && { '429': rateLimitedResponse(problemBase, instance, rateLimit) }),
    '500': internalErrorResponse(problemBase, instance),
  };
}

/** the problems every /v1 route can answer, in the order openapi.json and llms-full.txt list them */
const ROUTE_PROBLEM_KINDS = [
  'invalid-parameter',
  'not-found',
  'uri-too-long',
  'rate-limited',
  'internal-error',
  'upstream-unavailable',
] as const satisfies readonly ProblemKindName[];
type RouteProblemKind = (typeof ROUTE_PROBLEM_KINDS)[number];

/** the problems a /v1 route answers on a deployment that enforces `rateLimit` */
export const routeProblemKinds = (rateLimit: RateLimitConfig | false): RouteProblemKind[] =>
  ROUTE_PROBLEM_KINDS.filter((kind) => rateLimit || kind !== 'rate-limited');

/** only a path naming a resource (a slug, an epoch) can name none */
const namesResource = (route: RouteSpec) => route.params.some((p) => p.in === 'path');

/** when a route answers 404: its own cases where its path names a resource, else a path below it */
export function notFoundWhen(route: RouteSpec): string {
  if (!namesResource(route)) return noEndpointWhen(route.path);
  return route.notFoundWhen ?? 'the path names no resource';
}

function routeProblems(
  problemBase: string,
  baseUrl: string,
  route: RouteSpec,
  instance: string,
  examples: DocumentExamples,
  rateLimit: RateLimitConfig | false,
): Record<string, JsonSchema> {
  // a slug that breaks its rule is a 404, never a 400: the example names another parameter
  const firstParam =
    route.params.find((p) => p.in === 'query') ?? route.params.find((p) => p.names === undefined);
  const badParam = firstParam?.name ?? 'limit';
  // the request the 400 example answers has the bad value 'x' in its place; its `instance` is the
  // request path, without the query string
  const badInstance = firstParam?.in === 'path' ? instance.replace(`/${firstParam.example}`, '/x') : instance;
  const responses: Record<RouteProblemKind, JsonSchema | false> = {
    'invalid-parameter': problemResponse(
      problemBase,
      'invalid-parameter',
      'A parameter is malformed or not accepted; `parameter` names it.',
      firstParam
        ? `Parameter '${badParam}' must be ${firstParam.rule}; got 'x'.`
        : `Query parameter '${badParam}' is not accepted (this endpoint takes no query parameters).`,
      badInstance,
      badParam,
    ),
    'not-found': namesResource(route)
      ? problemResponse(
          problemBase,
          'not-found',
          `Not found: ${notFoundWhen(route)}.`,
          unknownSlugMessage(route.path.includes('strategies') ? 'strategy' : 'fund', 'unknown'),
          instance.replace(examples.fund.slug, 'unknown').replace(examples.strategy.slug, 'unknown'),
        )
      : noEndpointResponse(problemBase, baseUrl, route.path),
    'uri-too-long': uriTooLongResponse(problemBase, instance),
    'rate-limited': rateLimit && rateLimitedResponse(problemBase, instance, rateLimit),
    'internal-error': internalErrorResponse(problemBase, instance),
    'upstream-unavailable': problemResponse(
      problemBase,
      'upstream-unavailable',
      'An upstream (indexer, chain RPC or distribution) is unavailable; wait Retry-After seconds. A 503 without Retry-After (a distribution file that is wrong) says retrying will not help.',
      'The subgraph is unavailable; retry later.',
      instance,
    ),
  };
  return Object.fromEntries(
    routeProblemKinds(rateLimit).flatMap((kind) => {
      const response = responses[kind];
      return response ? [[String(PROBLEM_KINDS[kind].status), response]] : [];
    }),
  );
}

function operation(
  problemBase: string,
  baseUrl: string,
  route: RouteSpec,
  examples: DocumentExamples,
  rateLimit: RateLimitConfig | false,
): JsonSchema {
  const instance = examplePath(route, examples);
  const tier = CACHE_TIERS[route.tier];
  const successHeaders = {
    ETag: headerRef('ETag'),
    'Cache-Control': {
      description: `public, max-age=${tier.maxAge} (cache tier "${route.tier}": ${tier.covers})`,
      schema: { type: 'string', const: `public, max-age=${tier.maxAge}` },
    },
    Age: headerRef('Age'),
    Link: route.nextPage
      ? {
          description: `<${baseUrl}/openapi.json>; rel="service-desc", and a second link, <${baseUrl}/v1/…>; rel="next", ${route.nextPage.rule}`,
          schema: { type: 'string' },
        }
      : headerRef('Link'),
    ...(rateLimit
      ? { RateLimit: headerRef('RateLimit'), 'RateLimit-Policy': headerRef('RateLimit-Policy') }
      : {}),
    ...freshnessHeaderRefs,
  };
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `${route.description}\n\nCache tier "${route.tier}": max-age ${tier.maxAge} s.`,
    parameters: route.params.map(parameterObject),
    responses: {
      '200': {
        description: 'OK',
        headers: successHeaders,
        content: {
          'application/json': {
            schema: { $ref: `#/components/schemas/${route.responseSchema}` },
            example: route.example,
          },
        },
      },
      '304': {
        description:
          'Not Modified: If-None-Match matched the current ETag; same ETag and Cache-Control, no body.',
        headers: { ETag: headerRef('ETag'), 'Cache-Control': successHeaders['Cache-Control'] },
      },
      ...routeProblems(problemBase, baseUrl, route, instance, examples, rateLimit),
    },
  };
}

/** A discovery document's operation, with the refusals every request may get beside its 200. */
function documentOperation(
  { operationId, summary, mediaType }: DiscoveryDocument,
  refusals: Record<string, JsonSchema>,
) {
  const schema = { type: mediaType === 'application/json' ? 'object' : 'string' };
  return {
    get: {
      operationId,
      summary,
      responses: {
        '200': {
          description: 'OK',
          headers: { ETag: headerRef('ETag') },
          content: { [mediaType]: { schema } },
        },
        '304': {
          description: 'Not Modified: If-None-Match matched the current ETag; same ETag, no body.',
          headers: { ETag: headerRef('ETag') },
        },
        ...refusals,
      },
    },
  };
}

/** The gateway the REST routes run on, for clients that want to shape their own queries. */
function graphqlPath(
  problemBase: string,
  baseUrl: string,
  examples: DocumentExamples,
  rateLimit: RateLimitConfig | false,
): JsonSchema {
  const exampleQuery = graphqlExampleQuery(examples);
  const description = `The GraphQL gateway the REST endpoints run their queries on: the same data in the same units. Schema: GET ${DISCOVERY_DOCUMENTS.graphqlSchema.path} (SDL, every element described) or introspection. ${GRAPHQL_LIMITS} Errors carry extensions.code: ${ERROR_CODES.join(', ')}; a field that fails on its own arguments is null beside its error, and its sibling fields are still answered.`;
  const requestFields = {
    query: { type: 'string', description: 'the GraphQL document' },
    variables: { type: 'object', description: "values of the document's variables" },
    operationName: { type: 'string', description: 'the operation to run, when the document has several' },
    extensions: { type: 'object', description: GRAPHQL_EXTENSIONS },
  };
  const jsonBody = { type: 'object', required: ['query'], properties: requestFields };
  // one entry per media type /graphql parses (GRAPHQL_REQUEST_TYPES; a test keeps them the same)
  const requestBodies: Record<string, JsonSchema> = {
    'application/json': { schema: jsonBody, example: { query: exampleQuery } },
    'application/graphql+json': { schema: jsonBody },
    'application/graphql': {
      schema: { type: 'string', description: 'the GraphQL document alone, without variables' },
      example: exampleQuery,
    },
    'application/x-www-form-urlencoded': {
      schema: {
        type: 'object',
        required: ['query'],
        properties: {
          ...requestFields,
          variables: { type: 'string', description: "values of the document's variables, a JSON object" },
          extensions: { type: 'string', description: GRAPHQL_EXTENSIONS },
        },
      },
    },
  };
  const result = {
    type: 'object',
    properties: { data: { type: ['object', 'null'] }, errors: { type: 'array' } },
  };
  const responses = {
    '200': {
      description: 'GraphQL result; an answer that read indexed data carries the freshness headers',
      headers: freshnessHeaderRefs,
      content: { 'application/json': { schema: result } },
    },
    '400': {
      description:
        'A request that cannot run (a body or variables that are not JSON, a syntax or validation error, a limit exceeded, an unknown operation, a variable of the wrong type): `errors` only, each with extensions.code BAD_INPUT and a message naming what to fix. A request refused before GraphQL reads it (no Host header, or one that is no host) gets a problem+json instead.',
      content: {
        'application/json': {
          schema: result,
          example: {
            errors: [
              {
                message: 'Cannot query field "fundz" on type "Query". Did you mean "fund" or "funds"?',
                extensions: { code: 'BAD_INPUT' },
              },
            ],
          },
        },
        'application/problem+json': problemMedia(
          problemBase,
          'malformed-request',
          BAD_HOST_DETAIL,
          '/graphql',
        ),
      },
    },
    '404': noEndpointResponse(problemBase, baseUrl, '/graphql'),
    '406': problemResponse(
      problemBase,
      'not-acceptable',
      'The Accept header allows none of the media types /graphql answers.',
      GRAPHQL_NOT_ACCEPTABLE,
      '/graphql',
    ),
    // a long document belongs in a POST body; a POST with a long query string is refused alike
    '414': uriTooLongResponse(problemBase, '/graphql', true),
    ...(rateLimit && { '429': rateLimitedResponse(problemBase, '/graphql', rateLimit) }),
    '500': {
      description:
        'The service failed before it could run the request (details are logged, not disclosed); retry later. A field that fails on its own is null beside an INTERNAL error in a 200 instead.',
      content: {
        'application/json': {
          schema: result,
          example: { errors: [{ message: internalError().message, extensions: { code: 'INTERNAL' } }] },
        },
      },
    },
  };
  const bodyResponses = {
    '411': problemResponse(
      problemBase,
      'length-required',
      'The body declares no Content-Length (chunked).',
      GRAPHQL_LENGTH_REQUIRED,
      '/graphql',
    ),
    '413': problemResponse(
      problemBase,
      'payload-too-large',
      'The body is over the size limit.',
      GRAPHQL_BODY_TOO_LARGE,
      '/graphql',
    ),
    '415': problemResponse(
      problemBase,
      'unsupported-media-type',
      'The body has no Content-Type, or one /graphql does not parse.',
      unsupportedGraphqlBody('text/plain'),
      '/graphql',
    ),
  };
  return {
    get: {
      operationId: 'graphqlGet',
      summary: 'GraphQL query in the query string',
      description,
      parameters: [
        {
          name: 'query',
          in: 'query',
          required: true,
          description: 'the GraphQL document',
          schema: { type: 'string' },
          example: exampleQuery,
        },
        {
          name: 'variables',
          in: 'query',
          required: false,
          description: "values of the document's variables, a JSON object",
          schema: { type: 'string' },
        },
        {
          name: 'operationName',
          in: 'query',
          required: false,
          description: 'the operation to run, when the document has several',
          schema: { type: 'string' },
        },
        {
          name: 'extensions',
          in: 'query',
          required: false,
          description: GRAPHQL_EXTENSIONS,
          schema: { type: 'string' },
        },
      ],
      responses,
    },
    post: {
      operationId: 'graphqlPost',
      summary: 'GraphQL query in the request body',
      description,
      requestBody: {
        required: true,
        description: `the request as JSON, as a form, or the document alone (application/graphql); at most ${MAX_GRAPHQL_BODY_BYTES} bytes`,
        content: requestBodies,
      },
      responses: { ...responses, ...bodyResponses },
    },
  };
}

/**
 * The OpenAPI document of a service whose registry gives `examples` (default: the devnet's) and
 * which enforces `rateLimit` (default: the default limits).
 */
export function buildOpenApi(
  baseUrl: string,
  problemBase: string,
  examples: DocumentExamples = DEVNET_EXAMPLES,
  rateLimit: RateLimitConfig | false = DEFAULT_RATE_LIMIT,
): JsonSchema {
  const paths: Record<string, JsonSchema> = {};
  for (const route of routeTable(examples))
    paths[route.path] = { get: operation(problemBase, baseUrl, route, examples, rateLimit) };
  for (const old of DEPRECATED_ROUTES) {
    const instance = examplePath(old, examples);
    paths[old.path] = {
      get: {
        operationId: `deprecated${old.path.replace(/[^a-zA-Z]/g, '')}`,
        summary: `Removed: use ${old.replacement}`,
        description: `${old.description} Always answers 410 Gone.`,
        deprecated: true,
        parameters: [
          {
            name: 'slug',
            in: 'path',
            required: true,
            description: 'fund slug',
            schema: { type: 'string' },
            example: examples.fund.slug,
          },
        ],
        responses: {
          ...everyPathProblems(
            problemBase,
            baseUrl,
            instance,
            rateLimit,
            ' A slug that is not valid percent-encoding is an invalid-parameter.',
          ),
          '410': problemResponse(
            problemBase,
            'gone',
            `Gone: use ${old.replacement}.`,
            removedDetail(old, examples.fund.slug),
            instance,
          ),
        },
      },
    };
  }
  for (const document of Object.values(DISCOVERY_DOCUMENTS)) {
    paths[document.path] = documentOperation(
      document,
      everyPathProblems(problemBase, baseUrl, document.path, rateLimit),
    );
  }
  Object.assign(paths, {
    '/graphql': graphqlPath(problemBase, baseUrl, examples, rateLimit),
  });
  const headers = {
    ETag: {
      description: 'strong validator of the body; send it back in If-None-Match',
      schema: { type: 'string' },
    },
    Age: { description: 'seconds the body has been held in the server cache', schema: { type: 'integer' } },
    Link: {
      description: `<${baseUrl}/openapi.json>; rel="service-desc"`,
      schema: { type: 'string' },
    },
    ...(rateLimit
      ? {
          RateLimit: {
            description: 'IETF RateLimit header (draft 8): remaining quota per policy ("burst", "sustained")',
            schema: { type: 'string' },
          },
          'RateLimit-Policy': {
            description: `IETF RateLimit-Policy header (draft 8): "burst" ${rateLimit.burst} per ${rateLimit.burstWindowSeconds} s and "sustained" ${rateLimit.perMinute} per 60 s`,
            schema: { type: 'string' },
          },
        }
      : {}),
    'Retry-After': {
      description: `seconds to wait before retrying (429: until the limit window resets; 503: ${UPSTREAM_RETRY_AFTER_SECONDS}, or ${RESYNC_RETRY_AFTER_SECONDS} while a new deployment of the subgraph re-indexes)`,
      schema: { type: 'integer', minimum: 0 },
    },
    ...FRESHNESS_HEADERS,
  };
  const kinds = Object.entries(PROBLEM_KINDS)
    .map(([kind, k]) => `- \`${problemBase}/${kind}\` (${k.status} ${k.title}): ${k.explanation}`)
    .join('\n');
  return {
    openapi: '3.1.0',
    info: {
      title: API_TITLE,
      version: API_VERSION,
      summary: 'Anonymous, read-only API over a fund-vault protocol, built for AI agents.',
      description: [
        'Every /v1 endpoint and discovery document is GET (HEAD and OPTIONS also answer); /graphql takes GET and POST. None needs authentication; answers are JSON; CORS allows every origin.',
        GRAPHQL_SUMMARY,
        'Amounts and NAV values are exact decimal strings; Bps fields are integer basis points; timestamps are ISO 8601 UTC with milliseconds; addresses are 0x hex.',
        `Rate limits: ${rateLimitStatement(rateLimit)}`,
        'Caching: every 200 of /v1 and of the discovery documents carries ETag and Cache-Control; If-None-Match with the current ETag gives 304. /graphql answers carry Cache-Control: no-store.',
        `Freshness: responses built from indexed data (on /v1 and /graphql) carry X-Indexed-Block, X-Indexed-At, X-Indexed-Block-Lag and X-Data-Lag-Seconds; responses with values read live from the chain carry X-Chain-Block, the block they were read at. ${JUDGE_BY_BLOCKS}. ${dataLagMeaning(examples)}`,
        'Any method other than GET, HEAD or OPTIONS on /v1, a discovery document, the logo or a problem page answers 405 with Allow.',
        ...(examples.scenario ? [] : [NETWORK_EXAMPLES_NOTE]),
        'Errors are application/problem+json (RFC 9457); problem types:',
        kinds,
      ].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: baseUrl }],
    paths,
    components: { schemas: componentSchemas, headers },
  };
}
