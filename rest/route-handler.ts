// The one handler behind every route of the table (rest/routes.ts), instantiated per route:
// parameters checked -> response cache (a hit stands unless OutdatedBodies finds a newer block) ->
// the route's GraphQL operation, compiled once and run in-process -> body -> sent with its ETag and
// freshness headers, and kept for its cache tier. The cache and the block watches are shared by
// all the routes of one app.
import type { RequestHandler } from 'express';
import type { GatewayContext } from '../gateway/context.ts';
import { freshnessHeaders } from '../gateway/freshness-headers.ts';
import type { Gateway } from '../gateway/server.ts';
import { cacheKey, checkParams, type ParamValues, type RegisteredSlugs } from './params.ts';
import type { Replies } from './replies.ts';
import {
  etagOf,
  LatestBlockWatch,
  OutdatedBodies,
  ResponseCache,
  type Basis,
  type CachedResponse,
} from './response-cache.ts';
import { CACHE_TIERS, type RouteSpec } from './routes.ts';
import { sendCached } from './send-cached.ts';

interface RouteHandlerOptions {
  gateway: Gateway;
  replies: Replies;
  /** bodies held in the response cache (0 disables it) and their total bytes */
  cacheEntries: number;
  cacheBytes: number;
  /** how often, at most, a cache hit asks for the latest indexed block and chain head */
  blockCheckMs: number;
}

/** Returns the handler factory of one app: each route's handler shares its cache and block watches. */
export function createRouteHandlers(options: RouteHandlerOptions): (route: RouteSpec) => RequestHandler {
  const { gateway, replies } = options;
  const cache = new ResponseCache(options.cacheEntries, options.cacheBytes);
  const outdatedBodies = watchOutdatedBodies(gateway, options.blockCheckMs);
  const registry = gateway.sources.registry;
  const registered: RegisteredSlugs = (resource) =>
    resource === 'fund' ? registry.fundBySlug : registry.strategyBySlug;

  return (route) => {
    const operation = gateway.compile(route.document);
    const maxAge = CACHE_TIERS[route.tier].maxAge;
    return async (req, res) => {
      const check = checkParams(
        route,
        req.params as Record<string, string>,
        req.query as Record<string, unknown>,
        registered,
      );
      if (!check.ok) {
        if (check.notFound) replies.problem(req, res, 'not-found', check.detail);
        else replies.problem(req, res, 'invalid-parameter', check.detail, check.parameter);
        return;
      }
      const key = cacheKey(route, check.values);
      const now = Date.now();
      const hit = cache.get(key, now);
      if (hit && !(await outdatedBodies.outdate(hit, now))) {
        sendCached(req, res, hit, 'application/json; charset=utf-8');
        return;
      }
      const variables: ParamValues = check.values;
      const { result, context } = await operation.run(variables);
      if (result.errors?.length) {
        replies.errorProblem(req, res, result.errors[0]);
        return;
      }
      let body: unknown;
      try {
        body = route.toBody(result.data);
      } catch (error) {
        replies.errorProblem(req, res, error);
        return;
      }
      const entry = await builtResponse(body, context, maxAge);
      cache.set(key, entry);
      outdatedBodies.built(entry.basis, entry.storedAt);
      sendCached(req, res, entry, 'application/json; charset=utf-8');
    };
  };
}

/** The watches of the subgraph's indexed block and, when one is read, the chain head. */
function watchOutdatedBodies(gateway: Gateway, blockCheckMs: number): OutdatedBodies {
  const chain = gateway.sources.chain;
  return new OutdatedBodies(
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
}

/** A body just built, as the cache keeps it: its bytes, ETag, freshness headers and basis. */
async function builtResponse(
  body: unknown,
  context: GatewayContext,
  maxAgeSeconds: number,
): Promise<CachedResponse> {
  const bytes = Buffer.from(JSON.stringify(body));
  // taken before freshnessHeaders reads the chain head for a header, which the body does not reflect
  const basis = basisOf(context);
  return {
    body: bytes,
    etag: etagOf(bytes),
    headers: await freshnessHeaders(context),
    storedAt: Date.now(),
    maxAgeSeconds,
    basis,
  };
}

function basisOf(context: GatewayContext): Basis {
  const { indexedBlock, indexedHash, indexedAt, hasIndexingErrors } = context.subgraph.freshness;
  const chainHead = context.chain?.readsFrom;
  return {
    indexed:
      indexedBlock === null
        ? null
        : { number: indexedBlock, hash: indexedHash, timestamp: indexedAt, hasIndexingErrors },
    chainHead: chainHead == null ? null : Number(chainHead),
  };
}
