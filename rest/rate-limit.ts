// Rate limits per client IP: a sustained limit (by default 60 per minute) and a burst limit (20 per
// 20 seconds) enforced together, so a client can send 20 requests at once but cannot keep
// more than one per second going. Counters live in memory, or in Redis when one is given so
// limits hold across replicas; while Redis is unreachable, requests pass unlimited rather than
// fail or wait. Both limits are announced in IETF RateLimit headers (draft 8). Both count in fixed
// windows (express-rate-limit), so up to twice a limit passes across a window's end, as documented.
import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type ClientRateLimitInfo, type Store } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { createClient } from 'redis';
import { problemBody, sendProblem } from './problems.ts';

export interface RateLimitConfig {
  perMinute: number;
  burst: number;
  burstWindowSeconds: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitConfig = { perMinute: 60, burst: 20, burstWindowSeconds: 20 };

/** The discovery documents' statement of the limits a deployment enforces (`false`: none). */
export function rateLimitStatement(config: RateLimitConfig | false): string {
  return config
    ? `${config.perMinute} requests per minute per IP sustained, and a burst of ${config.burst} requests per ${config.burstWindowSeconds} seconds, each counted in fixed windows (so up to twice a limit can pass across a window's end). Over either: 429 with Retry-After (seconds).`
    : 'This deployment enforces no rate limit.';
}

/** The `detail` of a 429: which limit, and how long to wait. */
export function rateLimitedDetail(limit: number, windowSeconds: number, retryAfter: string): string {
  return `More than ${limit} requests in ${windowSeconds} seconds from your address; retry after ${retryAfter} seconds.`;
}

/** the part of a node-redis client rate-limit-redis needs */
export interface RedisCommander {
  sendCommand(args: string[]): Promise<unknown>;
}

export interface RedisConnection extends RedisCommander {
  close(): Promise<void>;
}

/** Tries of the first connection before the start fails, and the longest wait between reconnections. */
const FIRST_CONNECT_TRIES = 3;
const MAX_RECONNECT_DELAY_MS = 5_000;

/**
 * A node-redis client for the counters. The first connection must succeed (a REDIS_URL that cannot
 * be reached fails the start, with the cause). After it, a lost connection is retried with backoff
 * and reported once when lost and once when back; commands fail at once instead of queueing, so no
 * request waits for Redis, and the limiters let requests through until it is back.
 */
export async function connectRedis(url: string, log: (line: string) => void): Promise<RedisConnection> {
  let connected = false;
  let lost = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 5_000,
      reconnectStrategy: (retries, cause) =>
        connected
          ? Math.min(100 * 2 ** retries, MAX_RECONNECT_DELAY_MS)
          : retries + 1 >= FIRST_CONNECT_TRIES
            ? cause
            : 200,
    },
  });
  // node-redis emits every socket error; with no listener, Node would end the process on the first
  client.on('error', (error: Error) => {
    if (!connected || lost) return;
    lost = true;
    log(`redis: connection lost (${error.message}); rate limits are not enforced until it is back`);
  });
  client.on('ready', () => {
    if (lost) log('redis: connection back; rate limits are enforced again');
    lost = false;
  });
  await client.connect();
  connected = true;
  return {
    sendCommand: (args) => client.sendCommand(args),
    close: async () => {
      if (client.isOpen) await client.close();
    },
  };
}

/**
 * Counters in Redis that, while Redis is unreachable, count nothing and let the request through
 * rather than fail it. express-rate-limit's own passOnStoreError would write a line per request;
 * the client reports the outage once (connectRedis).
 */
class OutageTolerantRedisStore extends RedisStore {
  override async increment(key: string): Promise<ClientRateLimitInfo> {
    try {
      return await super.increment(key);
    } catch {
      return { totalHits: 0, resetTime: undefined };
    }
  }

  override async decrement(key: string): Promise<void> {
    await super.decrement(key).catch(() => {});
  }
}

/** An IPv4 client as a dual-stack socket (HOST=::) reports it: ::ffff:a.b.c.d */
const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * The counter a client's requests go to: its IPv4 address, or its IPv6 /56 (one subscriber's
 * prefix, express-rate-limit's default). An IPv4-mapped address is its IPv4 address: as IPv6 it
 * would fall in ::/56 with every other IPv4 client, so that one client could lock out all.
 */
export function clientKey(ip: string): string {
  return IPV4_MAPPED.exec(ip)?.[1] ?? ipKeyGenerator(ip, 56);
}

export function createRateLimiters(
  config: RateLimitConfig,
  problemBase: (req: Parameters<RequestHandler>[0]) => string,
  redis: RedisCommander | undefined,
): RequestHandler[] {
  const store = (name: string): Store | undefined =>
    redis
      ? new OutageTolerantRedisStore({
          prefix: `rl:${name}:`,
          sendCommand: (...args: string[]) => redis.sendCommand(args) as Promise<RedisReply>,
        })
      : undefined;
  const limiter = (name: string, limit: number, windowSeconds: number): RequestHandler =>
    rateLimit({
      windowMs: windowSeconds * 1000,
      limit,
      identifier: name,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      // a CORS preflight is not a request for data; a client whose connection is already gone has
      // no address (req.ip is undefined) and no answer to receive
      skip: (req) => req.method === 'OPTIONS' || req.ip === undefined,
      keyGenerator: (req) => clientKey(req.ip as string),
      // its check reads the generator's source for ipKeyGenerator, which clientKey calls
      validate: { keyGeneratorIpFallback: false },
      ...(redis ? { store: store(name) } : {}),
      handler: (req, res) => {
        const retryAfter = res.getHeader('Retry-After');
        sendProblem(
          res,
          problemBody(
            problemBase(req),
            'rate-limited',
            rateLimitedDetail(limit, windowSeconds, String(retryAfter)),
            req.path,
          ),
        );
      },
    });
  return [
    limiter('burst', config.burst, config.burstWindowSeconds),
    limiter('sustained', config.perMinute, 60),
  ];
}
