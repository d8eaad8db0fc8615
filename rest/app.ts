// Builds the Express app of the REST facade: CORS and security headers on everything,
// rate limits, one generic handler instantiated per route of the table (parameters ->
// cache -> in-process GraphQL -> body -> ETag), the deprecated routes (410), the discovery
// documents, problem pages, /graphql, and problems for everything else. createRestApp only
// assembles them, in that order; each part is built by its own function:
//   request guards    rest/request-guards.ts  (headers, Host, preflight, 405, 414)
//   route handlers    rest/route-handler.ts   (with the response cache and OutdatedBodies)
//   documents         rest/documents.ts       (with their per-base cache)
//   how it answers    rest/replies.ts         (base URLs, problems), rest/send-cached.ts (ETag, 304)
//   the rest          below: removed routes, problem pages, the 404 and the error handler
import querystring from 'node:querystring';
import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import type { Gateway } from '../gateway/server.ts';
import { serveDocuments } from './documents.ts';
import { documentExamples } from './examples.ts';
import { checkGraphqlRequest } from './graphql-http.ts';
import { noEndpointDetail, PROBLEM_KINDS, problemPage, type ProblemKindName } from './problems.ts';
import { createRateLimiters, type RateLimitConfig, type RedisCommander } from './rate-limit.ts';
import { createReplies, type Replies } from './replies.ts';
import { requestGuard, urlLengthGuard } from './request-guards.ts';
import { DEFAULT_BLOCK_CHECK_MS, DEFAULT_RESPONSE_CACHE_BYTES } from './response-cache.ts';
import { createRouteHandlers } from './route-handler.ts';
import type { TrustProxy } from './service-config.ts';
import {
  CACHE_TIERS,
  DEPRECATED_ROUTES,
  removedDetail,
  routeTable,
  templatePattern,
  type DeprecatedRoute,
} from './routes.ts';

export interface RestConfig {
  gateway: Gateway;
  /** public base URL used in documents and problem types; derived from the request when unset */
  publicBaseUrl?: string;
  /** base of problem `type` URIs; `${publicBaseUrl}/problems` when unset */
  problemBase?: string;
  /**
   * Express `trust proxy`: false, a hop count, or a comma-separated list of proxy addresses;
   * service-config.ts refuses true, which would let clients choose the address rate limits count
   */
  trustProxy: TrustProxy;
  /**
   * whether the data served is the devnet's default scenario, whose values the documents may show
   * as examples over the devnet registry (default true; false where SCENARIO_* changed it)
   */
  defaultScenario?: boolean;
  /** false disables rate limiting (benchmarks) */
  rateLimit: RateLimitConfig | false;
  /** the connection connectRedis made: rate-limit counters go to Redis instead of memory */
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
  /**
   * where the app's failures are logged, a line (a string) each, by the gateway's FailureLog: an
   * upstream's outage when it starts and ends, a bug every time (default: stderr, prefixed [rest])
   */
  logError?: (error: unknown) => void;
}

export function createRestApp(config: RestConfig): Express {
  const { gateway } = config;
  const logError = config.logError ?? ((line: unknown) => console.error('[rest]', line));
  // the gateway's log of failures: an upstream failing /v1 and /graphql is one outage
  const replies = createReplies(config, gateway.failures, logError);
  const registry = gateway.sources.registry;
  // the documents describe the registry served, never the devnet's unless it is the one served
  const examples = documentExamples(registry.document, config.defaultScenario);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  // Express's 'simple' parser, but without querystring's default of 1000 keys, past which it drops
  // the rest unread (a limit=abc after a thousand empty pairs was never checked): the URL length
  // guard bounds how many a query string can hold
  app.set('query parser', (search: string) => querystring.parse(search, '&', '=', { maxKeys: 0 }));

  app.use(requestGuard(config, gateway.yoga.graphqlEndpoint, replies));
  app.use(urlLengthGuard(replies));
  if (config.rateLimit) {
    for (const limiter of createRateLimiters(config.rateLimit, replies.problemBaseOf, config.redis))
      app.use(limiter);
  }

  const routeHandler = createRouteHandlers({
    gateway,
    replies,
    cacheEntries: config.responseCacheEntries,
    cacheBytes: config.responseCacheBytes ?? DEFAULT_RESPONSE_CACHE_BYTES,
    blockCheckMs: config.blockCheckMs ?? DEFAULT_BLOCK_CHECK_MS,
  });
  const routes = routeTable(examples);
  for (const route of routes) app.get(expressPath(route.path), routeHandler(route));
  for (const old of DEPRECATED_ROUTES) app.get(expressPath(old.path), removedRoute(old, replies));

  serveDocuments(app, replies, { examples, registry: registry.document, rateLimit: config.rateLimit });
  app.get('/problems/:kind', problemPages(replies));

  app.all(
    gateway.yoga.graphqlEndpoint,
    checkGraphqlRequest(replies.problem, gateway.yoga.graphqlEndpoint),
    gateway.yoga as unknown as RequestHandler,
  );

  app.use(notFound(replies));
  const routePatterns = [...routes, ...DEPRECATED_ROUTES].map((route) => templatePattern(route.path));
  app.use(errorHandler(replies, routePatterns));
  return app;
}

/** `/v1/funds/{slug}` -> `/v1/funds/:slug` */
function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** A route that was removed: 410 naming its replacement. */
function removedRoute(old: DeprecatedRoute, replies: Replies): RequestHandler {
  return (req, res) => {
    replies.problem(req, res, 'gone', removedDetail(old, String(req.params.slug)));
  };
}

/** The HTML page that a problem's `type` URI points to; an unknown kind falls through to the 404. */
function problemPages(replies: Replies): RequestHandler {
  return (req, res, next) => {
    const kind = req.params.kind as ProblemKindName;
    if (!(kind in PROBLEM_KINDS)) {
      next();
      return;
    }
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', `public, max-age=${CACHE_TIERS.reference.maxAge}`);
    res.end(problemPage(kind, replies.baseOf(req)));
  };
}

function notFound(replies: Replies): RequestHandler {
  return (req, res) => {
    replies.problem(req, res, 'not-found', noEndpointDetail(req.path, replies.baseOf(req)));
  };
}

/** Whether `segment` is valid percent-encoding, as the router decodes a path parameter. */
function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/**
 * The parameter of a route (`routePatterns`, see templatePattern) whose segment of `path` is not
 * valid percent-encoding; undefined when no route has `path`'s shape with a parameter there.
 */
function undecodableParameter(path: string, routePatterns: RegExp[]): string | undefined {
  for (const pattern of routePatterns) {
    const segments = Object.entries(pattern.exec(path)?.groups ?? {});
    const undecodable = segments.find(([, segment]) => !decodes(segment));
    if (undecodable) return undecodable[0];
  }
  return undefined;
}

function errorHandler(replies: Replies, routePatterns: RegExp[]): ErrorRequestHandler {
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      replies.logFailure(req, error);
      res.end();
      return;
    }
    // the router refuses a path segment that is not valid percent-encoding: the client's fault
    if (error instanceof URIError) {
      const segment = req.path.split('/').find((part) => !decodes(part)) ?? '';
      const wrong = `'${segment.slice(0, 80)}' is not valid percent-encoding (RFC 3986): follow each % with two hex digits, and send a % itself as %25.`;
      const parameter = undecodableParameter(req.path, routePatterns);
      if (parameter === undefined)
        replies.problem(req, res, 'malformed-request', `The path segment ${wrong}`);
      else replies.problem(req, res, 'invalid-parameter', `Parameter '${parameter}': ${wrong}`, parameter);
      return;
    }
    replies.errorProblem(req, res, error);
  };
}
