// The limits both HTTP servers of the project (the service's, rest/http-server.ts, and the
// indexer's query server, indexer/query/server.ts) set on Node's http server. Node's defaults let a
// client trickling bytes hold a connection for 60 s (headers) and 300 s (request), and Node checks
// those timeouts only every 30 s, which adds as much again. Every valid request of either server is
// small and sent at once, so these are generous for any real client. It lives in common/ because the
// service and the indexer are separate processes, neither of which may import the other.
// It imports only common/env.ts, to read the one variable both processes take alike.
//
// How long an idle keep-alive connection stays open is each process's HTTP_KEEP_ALIVE_TIMEOUT_MS
// (default Node's 5 s). A load balancer that keeps its idle connections to the server longer than the
// server does (AWS ALB: 60 s) may send a request on a connection just as the server closes it, and
// its client gets a 502: behind one, the server's timeout must be the longer. Node's headersTimeout
// does not cut an idle keep-alive connection short (its clock starts with a request's first byte),
// so the two limits are independent.
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { envInteger, type Env } from './env.ts';

/** How long a client may take to send a request's headers, and the whole request. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** how often Node checks those timeouts */
const CONNECTIONS_CHECK_MS = 1_000;
/** how long an idle keep-alive connection stays open between requests unless configured (Node's default, stated) */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** HTTP_KEEP_ALIVE_TIMEOUT_MS's bounds: 0 would keep idle connections forever; GCP's balancers want 620 s */
const KEEP_ALIVE_TIMEOUT_BOUNDS = { min: 1_000, max: 3_600_000 };

/** HTTP_KEEP_ALIVE_TIMEOUT_MS, which both processes read alike; a value out of its bounds throws a `Refusal`. */
export function keepAliveTimeoutFromEnv(env: Env, Refusal: new (message: string) => Error): number {
  return envInteger(
    env,
    'HTTP_KEEP_ALIVE_TIMEOUT_MS',
    DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    KEEP_ALIVE_TIMEOUT_BOUNDS,
    Refusal,
  );
}

/**
 * A Node http server answering with `listener`, with the limits above, closing a keep-alive
 * connection idle for `keepAliveTimeoutMs`. `requireHostHeader: false` lets an HTTP/1.1 request
 * without a Host through to `listener`, for a server that refuses it in its own words (Node's 400
 * has an empty body).
 */
export function createLimitedServer(
  listener: RequestListener,
  keepAliveTimeoutMs: number,
  options: Pick<ServerOptions, 'requireHostHeader'> = {},
): Server {
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
      ...options,
    },
    listener,
  );
  server.keepAliveTimeout = keepAliveTimeoutMs;
  return server;
}
