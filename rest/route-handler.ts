// The one handler behind every route of the table (rest/routes.ts), instantiated per route:
// parameters checked -> response cache (a hit stands unless OutdatedBodies finds its block moved or
// another deployment answering) -> the route's GraphQL operation, compiled once and run in-process
// -> body -> sent with its ETag and freshness headers (and a Link to the rest of what the answer
// left out, see RouteSpec.nextPage), and kept for its cache tier. The cache and the block watches
// are shared by all the routes of one app. Ages, lifetimes and watch intervals are told by
// performance.now(), the monotonic clock (see response-cache.ts): a step of the wall clock moves
// none of them.
import type { Request, RequestHandler, Response } from 'express';
import type { GatewayContext } from '../gateway/context.ts';
import { dataBlockHeaders, headForLag } from '../gateway/freshness-headers.ts';
import type { Gateway } from '../gateway/server.ts';
import type { ChainBlock } from '../gateway/sources/chain.ts';
import { NodesBehindError, type SubgraphClient } from '../gateway/sources/subgraph.ts';
import { cacheKey, checkParams, type ParamValues, type RegisteredSlugs } from './params.ts';
import type { Replies } from './replies.ts';
import {
  etagOf,
  OutdatedBodies,
  ResponseCache,
  type Basis,
  type CachedResponse,
  type ChainHead,
  type IndexedReading,
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
  const chainFailing = () => gateway.sources.chain?.headFailing ?? false;
  const registry = gateway.sources.registry;
  const registered: RegisteredSlugs = (resource) =>
    resource === 'fund' ? registry.fundBySlug : registry.strategyBySlug;

  /** names the request for what the answer left out, beside the service description the guards linked */
  const linkNextPage = (req: Request, res: Response, entry: CachedResponse) => {
    if (entry.nextPage) res.append('Link', `<${replies.baseOf(req)}${entry.nextPage}>; rel="next"`);
  };

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
      const now = performance.now();
      const hit = cache.get(key, now);
      if (hit && !(await outdatedBodies.outdate(hit, now))) {
        const head =
          hit.basis.indexed === null ? undefined : await outdatedBodies.chainHeadNow(now, chainFailing());
        linkNextPage(req, res, hit);
        sendCached(req, res, hit, 'application/json; charset=utf-8', head);
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
      const nextPage = route.nextPage?.request(result.data, variables) ?? null;
      const { entry, head } = await builtResponse(body, nextPage, context, maxAge);
      cache.set(key, entry);
      outdatedBodies.built(entry.basis, head, entry.storedAt);
      linkNextPage(req, res, entry);
      sendCached(req, res, entry, 'application/json; charset=utf-8', head?.number);
    };
  };
}

const chainHeadOf = (block: ChainBlock): ChainHead => ({ number: Number(block.number), hash: block.hash });

/**
 * The subgraph's block as the watch reads it: 'reverting' while its nodes are below the newest block
 * this process served and the chain RPC no longer holds that block; any other failure (query nodes
 * behind a block the chain holds included) leaves the watch without a reading.
 */
async function indexedReading(subgraph: SubgraphClient): Promise<IndexedReading> {
  try {
    return await subgraph.indexedBlock();
  } catch (error) {
    if (error instanceof NodesBehindError && error.onChain === false) return 'reverting';
    throw error;
  }
}

/** The watches of the subgraph's indexed block and, when an RPC is configured, the chain head. */
function watchOutdatedBodies(gateway: Gateway, blockCheckMs: number): OutdatedBodies {
  const { subgraph, chain } = gateway.sources;
  return new OutdatedBodies(
    () => indexedReading(subgraph),
    chain && (async () => chainHeadOf(await chain.readHead())),
    blockCheckMs,
  );
}

/**
 * A body just built, as the cache keeps it (its bytes, ETag, the headers fixed with its data, the
 * request for what it left out and its basis), and the chain head its request read, if any.
 */
async function builtResponse(
  body: unknown,
  nextPage: string | null,
  context: GatewayContext,
  maxAgeSeconds: number,
): Promise<{ entry: CachedResponse; head: ChainHead | null }> {
  const bytes = Buffer.from(JSON.stringify(body));
  // taken before headForLag reads the chain head, which the body does not reflect
  const basis = basisOf(context);
  const headers = dataBlockHeaders(context);
  const head = (await headForLag(context)) ?? context.chain?.readsFrom;
  return {
    entry: {
      body: bytes,
      etag: etagOf(bytes),
      headers,
      ...(nextPage === null ? {} : { nextPage }),
      storedAt: performance.now(),
      maxAgeSeconds,
      basis,
    },
    head: head == null ? null : chainHeadOf(head),
  };
}

function basisOf(context: GatewayContext): Basis {
  const { indexedBlock, indexedHash, indexedAt, hasIndexingErrors, deployment } = context.subgraph.freshness;
  const readsFrom = context.chain?.readsFrom;
  return {
    indexed:
      indexedBlock === null
        ? null
        : { number: indexedBlock, hash: indexedHash, timestamp: indexedAt, hasIndexingErrors, deployment },
    chainHead: readsFrom == null ? null : chainHeadOf(readsFrom),
  };
}
