// Builds the Express app of the REST facade: CORS and security headers on everything,
// rate limits, one generic handler instantiated per route of the table (parameters ->
// cache -> in-process GraphQL -> body -> ETag), the deprecated routes (410), the discovery
// documents, problem pages, /graphql, and problems for everything else.
import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import helmet from 'helmet';
import { classifyError, loggedCause } from '../gateway/errors.ts';
import { dataLagSeconds, freshnessHeaders } from '../gateway/freshness-headers.ts';
import { printedSchema } from '../gateway/print-schema.ts';
import type { Gateway } from '../gateway/server.ts';
import type { GatewayContext } from '../gateway/context.ts';
import { agentsJson, aiPluginJson, serviceIndex } from './agents.ts';
import { llmsFullTxt, llmsTxt } from './llms.ts';
import { buildOpenApi, GRAPHQL_SCHEMA_PATH } from './openapi.ts';
import { cacheKey, checkParams, type KnownSlug, type ParamValues } from './params.ts';
import { checkGraphqlRequest, GRAPHQL_METHODS } from './graphql-http.ts';
import {
  KIND_OF_CODE,
  PROBLEM_KINDS,
  problemBody,
  problemPage,
  sendProblem,
  type ProblemKindName,
  MAX_URL_LENGTH,
  uriTooLongDetail,
} from './problems.ts';
import { createRateLimiters, type RateLimitConfig, type RedisCommander } from './rate-limit.ts';
import {
  DEFAULT_BLOCK_CHECK_MS,
  DEFAULT_RESPONSE_CACHE_BYTES,
  etagOf,
  LatestBlockWatch,
  matchesIfNoneMatch,
  OutdatedBodies,
  ResponseCache,
  type Basis,
  type CachedResponse,
} from './response-cache.ts';
import { CACHE_TIERS, DEPRECATED_ROUTES, removedDetail, routeTable, type RouteSpec } from './routes.ts';
import { documentExamples } from './examples.ts';

export interface RestConfig {
  gateway: Gateway;
  /** public base URL used in documents and problem types; derived from the request when unset */
  publicBaseUrl?: string;
  /** base of problem `type` URIs; `${publicBaseUrl}/problems` when unset */
  problemBase?: string;
  /** Express `trust proxy`: false, true, a hop count, or a list of proxy addresses */
  trustProxy: boolean | number | string;
  /**
   * whether the data served is the devnet's default scenario, whose values the documents may show
   * as examples over the devnet registry (default true; false where SCENARIO_* changed it)
   */
  defaultScenario?: boolean;
  /** false disables rate limiting (benchmarks) */
  rateLimit: RateLimitConfig | false;
  /** a connected node-redis client: rate-limit counters go to Redis instead of memory */
  redis?: RedisCommander;
  /** bodies held in the server cache; 0 disables it */
  responseCacheEntries: number;
  /** total bytes of the bodies held in the server cache (default DEFAULT_RESPONSE_CACHE_BYTES) */
  responseCacheBytes?: number;
  /**
   * how often, at most, a cache hit asks the subgraph for its latest indexed block and the chain for
   * its head, to drop a body built at an older one (default DEFAULT_BLOCK_CHECK_MS)
   */
  blockCheckMs?: number;
  logError?: (error: unknown) => void;
}

const READ_METHODS = 'GET, HEAD, OPTIONS';
/** A Host header: a name or IPv4 address, or an IPv6 address in brackets, with an optional port */
const HOST_HEADER = /^(?:[\w-]+(?:\.[\w-]+)*\.?|\[[\da-f:.]+\])(?::\d{1,5})?$/i;
const EXPOSED_HEADERS = [
  'ETag',
  'Age',
  'Link',
  'Allow',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-Indexed-Block',
  'X-Indexed-At',
  'X-Indexed-Block-Lag',
  'X-Data-Lag-Seconds',
].join(', ');
/** the documents that describe the service (the logo aside), built from the route table and registry */
export const DOCUMENT_PATHS = [
  '/',
  '/openapi.json',
  '/llms.txt',
  '/llms-full.txt',
  '/.well-known/ai-plugin.json',
  '/.well-known/agents.json',
  GRAPHQL_SCHEMA_PATH,
];
/** base URLs whose discovery documents (DOCUMENT_PATHS and the logo) are kept built, and their bytes */
const DOCUMENT_BASES_KEPT = 8;
const DOCUMENT_CACHE_BYTES = 8 * 2 ** 20;
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1d4ed8"/><path d="M8 22V10h12M8 16h9" stroke="#fff" stroke-width="3" fill="none"/></svg>\n';

/** `/v1/funds/{slug}` -> `/v1/funds/:slug` */
function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * helmet's security headers are static for a given configuration: they are collected once
 * and set together with the CORS and Link headers in a single step per request.
 */
function securityHeaders(): [string, string][] {
  const headers: [string, string][] = [];
  const collector = {
    setHeader: (name: string, value: unknown) => headers.push([name, String(value)]),
    removeHeader() {},
  };
  helmet({ crossOriginResourcePolicy: { policy: 'cross-origin' } })(
    {} as Request,
    collector as unknown as Response,
    () => {},
  );
  return headers;
}

export function createRestApp(config: RestConfig): Express {
  const { gateway } = config;
  const logError = config.logError ?? ((error: unknown) => console.error('[rest]', error));
  const baseOf = (req: Request) =>
    config.publicBaseUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  const problemBaseOf = (req: Request) => config.problemBase ?? `${baseOf(req)}/problems`;
  const problem = (req: Request, res: Response, kind: ProblemKindName, detail: string, parameter?: string) =>
    sendProblem(res, problemBody(problemBaseOf(req), kind, detail, req.path, parameter));
  const cache = new ResponseCache(
    config.responseCacheEntries,
    config.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES,
  );
  const blockCheckMs = config.blockCheckMs ?? DEFAULT_BLOCK_CHECK_MS;
  const chain = gateway.sources.chain;
  const outdatedBodies = new OutdatedBodies(
    new LatestBlockWatch(
      () => gateway.sources.subgraph.indexedBlock(),
      blockCheckMs,
      (a, b) => a.number > b.number,
    ),
    // the watch keeps its own interval: viem's one-second cache of the head would only add to it
    chain &&
      new LatestBlockWatch(
        async () => Number(await chain.client.getBlockNumber({ cacheTime: 0 })),
        blockCheckMs,
        (a, b) => a > b,
      ),
  );

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');

  const everyResponse: [string, string][] = [
    ...securityHeaders(),
    ['Access-Control-Allow-Origin', '*'],
    ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
    ['Link', '</openapi.json>; rel="service-desc"'],
  ];
  app.use((req, res, next) => {
    for (const [name, value] of everyResponse) res.setHeader(name, value);
    // the Host names the links and problem types of the answer (without PUBLIC_BASE_URL): one that is
    // no host would put a non-URI in them, and in documents caches keep
    const host = req.get('host');
    if (config.publicBaseUrl === undefined && host !== undefined && !HOST_HEADER.test(host)) {
      sendProblem(
        res,
        problemBody(
          config.problemBase ?? '/problems',
          'malformed-request',
          `The Host header '${host.slice(0, 80)}' is not a host name or address with an optional port.`,
          req.path,
        ),
      );
      return;
    }
    const methods = req.path === gateway.yoga.graphqlEndpoint ? GRAPHQL_METHODS : READ_METHODS;
    if (req.method === 'OPTIONS') {
      // CORS preflight: any origin, the read methods, whatever headers the client asks for
      res.setHeader('Access-Control-Allow-Methods', methods);
      res.setHeader(
        'Access-Control-Allow-Headers',
        req.get('Access-Control-Request-Headers') ?? 'Accept, Content-Type, If-None-Match',
      );
      res.setHeader('Access-Control-Max-Age', '86400');
      res.setHeader('Allow', methods);
      res.status(204).end();
      return;
    }
    // read-only surface: anything but GET/HEAD on /v1, the documents and problem pages is 405 (in
    // any case, as Express routes them)
    const path = req.path.toLowerCase();
    const guarded = path.startsWith('/v1') || DOCUMENT_PATHS.includes(path) || path.startsWith('/problems');
    if (guarded && req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', READ_METHODS);
      problem(
        req,
        res,
        'method-not-allowed',
        `${req.method} is not allowed: this API is read-only; use GET.`,
      );
      return;
    }
    next();
  });
  // An oversized URL is refused with a problem before any work.
  app.use((req, res, next) => {
    if (req.originalUrl.length > MAX_URL_LENGTH) {
      problem(req, res, 'uri-too-long', uriTooLongDetail(req.originalUrl.length));
      return;
    }
    next();
  });
  if (config.rateLimit) {
    for (const limiter of createRateLimiters(config.rateLimit, problemBaseOf, config.redis)) app.use(limiter);
  }

  function send(req: Request, res: Response, entry: CachedResponse, contentType: string): void {
    res.setHeader('ETag', entry.etag);
    res.setHeader('Cache-Control', `public, max-age=${entry.maxAgeSeconds}`);
    res.setHeader('Age', String(Math.max(0, Math.floor((Date.now() - entry.storedAt) / 1000))));
    for (const [name, value] of Object.entries(entry.headers)) res.setHeader(name, value);
    const indexedAt = entry.basis.indexed?.timestamp;
    if (indexedAt != null) res.setHeader('X-Data-Lag-Seconds', dataLagSeconds(indexedAt));
    if (matchesIfNoneMatch(req.get('If-None-Match'), entry.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200);
    res.setHeader('Content-Type', contentType);
    res.setHeader('Content-Length', String(entry.body.length));
    res.end(entry.body);
  }

  function basisOf(context: GatewayContext): Basis {
    const { indexedBlock, indexedHash, indexedAt } = context.subgraph.freshness;
    const chainHead = context.chain?.readsFrom;
    return {
      indexed:
        indexedBlock === null ? null : { number: indexedBlock, hash: indexedHash, timestamp: indexedAt },
      chainHead: chainHead == null ? null : Number(chainHead),
    };
  }

  function errorProblem(req: Request, res: Response, error: unknown): void {
    const classified = classifyError(error);
    const cause = loggedCause(classified, error);
    if (cause !== undefined) logError(cause);
    const kind = KIND_OF_CODE[classified.code];
    const detail =
      kind === 'internal-error' ? 'The service failed while answering; retry later.' : classified.message;
    problem(req, res, kind, detail, classified.argument);
  }

  const registry = gateway.sources.registry;
  // the documents describe the registry served, never the devnet's unless it is the one served
  const examples = documentExamples(registry.registry, config.defaultScenario);
  const routes = routeTable(examples);
  const knownSlug: KnownSlug = (resource, slug) =>
    (resource === 'fund' ? registry.fundBySlug : registry.strategyBySlug).has(slug);

  function routeHandler(route: RouteSpec): RequestHandler {
    const operation = gateway.compile(route.document);
    const maxAge = CACHE_TIERS[route.tier].maxAge;
    return async (req, res) => {
      const check = checkParams(
        route,
        req.params as Record<string, string>,
        req.query as Record<string, unknown>,
        knownSlug,
      );
      if (!check.ok) {
        if (check.notFound) problem(req, res, 'not-found', check.detail);
        else problem(req, res, 'invalid-parameter', check.detail, check.parameter);
        return;
      }
      const key = cacheKey(route, check.values);
      const now = Date.now();
      const hit = cache.get(key, now);
      if (hit && !(await outdatedBodies.outdate(hit, now))) {
        send(req, res, hit, 'application/json; charset=utf-8');
        return;
      }
      const variables: ParamValues = check.values;
      const { result, context } = await operation.run(variables);
      if (result.errors?.length) {
        errorProblem(req, res, result.errors[0]);
        return;
      }
      let body: unknown;
      try {
        body = route.toBody(result.data);
      } catch (error) {
        errorProblem(req, res, error);
        return;
      }
      const bytes = Buffer.from(JSON.stringify(body));
      // taken before freshnessHeaders reads the chain head for a header, which the body does not reflect
      const basis = basisOf(context);
      const entry: CachedResponse = {
        body: bytes,
        etag: etagOf(bytes),
        headers: await freshnessHeaders(context),
        storedAt: Date.now(),
        maxAgeSeconds: maxAge,
        basis,
      };
      cache.set(key, entry);
      outdatedBodies.built(basis, entry.storedAt);
      send(req, res, entry, 'application/json; charset=utf-8');
    };
  }

  for (const route of routes) app.get(expressPath(route.path), routeHandler(route));

  for (const old of DEPRECATED_ROUTES) {
    app.get(expressPath(old.path), (req, res) => {
      problem(req, res, 'gone', removedDetail(old, String(req.params.slug)));
    });
  }

  // Discovery documents depend only on the base URL (and the registry): built once per base, served with ETags. Without
  // PUBLIC_BASE_URL the base comes from each request's Host header, which any client may forge, so
  // they are kept for a few bases only (openapi.json alone is some 200 KB).
  const documents = new ResponseCache(
    DOCUMENT_BASES_KEPT * (DOCUMENT_PATHS.length + 1),
    DOCUMENT_CACHE_BYTES,
  );
  function serveDocument(
    name: string,
    contentType: string,
    build: (base: string, problemBase: string) => string,
  ) {
    app.get(name, (req, res) => {
      const base = baseOf(req);
      const key = `${name} ${base}`;
      let entry = documents.get(key, Date.now());
      if (!entry) {
        const body = Buffer.from(build(base, problemBaseOf(req)));
        entry = {
          body,
          etag: etagOf(body),
          headers: {},
          storedAt: Date.now(),
          maxAgeSeconds: CACHE_TIERS.reference.maxAge,
          basis: { indexed: null, chainHead: null },
        };
        documents.set(key, entry);
      }
      send(req, res, { ...entry, storedAt: Date.now() }, contentType);
    });
  }
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  serveDocument('/openapi.json', 'application/json; charset=utf-8', (base, pb) =>
    json(buildOpenApi(base, pb, examples, config.rateLimit)),
  );
  serveDocument('/llms.txt', 'text/plain; charset=utf-8', (base) => llmsTxt(base, examples));
  serveDocument('/llms-full.txt', 'text/plain; charset=utf-8', (base, pb) =>
    llmsFullTxt(base, pb, examples, config.rateLimit),
  );
  serveDocument('/.well-known/ai-plugin.json', 'application/json; charset=utf-8', (base) =>
    json(aiPluginJson(base, registry.registry)),
  );
  serveDocument('/.well-known/agents.json', 'application/json; charset=utf-8', (base) =>
    json(agentsJson(base)),
  );
  serveDocument(GRAPHQL_SCHEMA_PATH, 'text/plain; charset=utf-8', () => printedSchema());
  serveDocument('/', 'application/json; charset=utf-8', (base) => json(serviceIndex(base)));
  serveDocument('/logo.svg', 'image/svg+xml', () => LOGO);
  app.get('/problems/:kind', (req, res, next) => {
    const kind = req.params.kind as ProblemKindName;
    if (!(kind in PROBLEM_KINDS)) {
      next();
      return;
    }
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', `public, max-age=${CACHE_TIERS.reference.maxAge}`);
    res.end(problemPage(kind));
  });

  app.all(
    gateway.yoga.graphqlEndpoint,
    checkGraphqlRequest(problem),
    gateway.yoga as unknown as RequestHandler,
  );

  app.use((req, res) => {
    problem(
      req,
      res,
      'not-found',
      `No endpoint at ${req.path}. The endpoints are listed in /openapi.json and /llms.txt.`,
    );
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      logError(error);
      res.end();
      return;
    }
    // the router refuses a path segment that is not valid percent-encoding: the client's fault
    if (error instanceof URIError) {
      problem(req, res, 'invalid-parameter', 'A path segment is not valid percent-encoding (RFC 3986).');
      return;
    }
    errorProblem(req, res, error);
  });
  return app;
}
