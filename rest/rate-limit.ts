// Rate limits per client IP: a sustained limit (60 per minute) and a burst limit (20 per
// 20 seconds) enforced together, so a client can send 20 requests at once but cannot keep
// more than one per second going. Counters live in memory, or in Redis when one is given so
// limits hold across replicas. Both limits are announced in IETF RateLimit headers (draft 8).
import type { RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { problemBody, sendProblem } from './problems.ts';

export interface RateLimitConfig {
  perMinute: number;
  burst: number;
  burstWindowSeconds: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitConfig = { perMinute: 60, burst: 20, burstWindowSeconds: 20 };

/** the part of a node-redis client rate-limit-redis needs */
export interface RedisCommander {
  sendCommand(args: string[]): Promise<unknown>;
}

export function createRateLimiters(
  config: RateLimitConfig,
  problemBase: (req: Parameters<RequestHandler>[0]) => string,
  redis: RedisCommander | undefined,
): RequestHandler[] {
  const store = (name: string): Store | undefined =>
    redis
      ? new RedisStore({
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
      // a CORS preflight is not a request for data
      skip: (req) => req.method === 'OPTIONS',
      ...(redis ? { store: store(name) } : {}),
      handler: (req, res) => {
        const retryAfter = res.getHeader('Retry-After');
        sendProblem(
          res,
          problemBody(
            problemBase(req),
            'rate-limited',
            `More than ${limit} requests in ${windowSeconds} seconds from your address; retry after ${String(retryAfter)} seconds.`,
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
