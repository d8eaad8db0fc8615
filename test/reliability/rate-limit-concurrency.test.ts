// The rate limiter under concurrency, over real HTTP: many simultaneous requests from one client
// admit exactly the burst, then exactly the refill once the burst window has passed, bounded by
// the sustained limit; clients are counted apart by address; and two app instances sharing a real
// redis-server enforce one limit between them. Requests go to /v1/contracts, which reads only the
// registry, so no upstream takes part. Counting is exact: no timing enters any assertion.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RestConfig } from '../../rest/app.ts';
import { connectRedis, type RateLimitConfig, type RedisConnection } from '../../rest/rate-limit.ts';
import { listen, registryOnlyGateway, testRestApp } from '../harness/stack.ts';
import { startRedisServer, type RedisServer } from './servers/redis-server.ts';

const gateway = registryOnlyGateway();
const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(overrides: Partial<RestConfig>): Promise<string> {
  const server = await listen(
    testRestApp(gateway, { trustProxy: 1, responseCacheEntries: 100, ...overrides }),
  );
  servers.push(server);
  return server.url;
}

interface Round {
  admitted: number;
  refused: number;
  /** the largest Retry-After among the refusals */
  retryAfter: number;
}

/** Sends `count` requests at once, spread over `bases`, all from `ip`; counts 200s and 429s. */
async function round(bases: string[], ip: string, count: number): Promise<Round> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      fetch(`${bases[i % bases.length]}/v1/contracts`, { headers: { 'X-Forwarded-For': ip } }).then(
        async (r) => {
          await r.arrayBuffer();
          return r;
        },
      ),
    ),
  );
  const statuses = responses.map((r) => r.status);
  expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  return {
    admitted: statuses.filter((s) => s === 200).length,
    refused: statuses.filter((s) => s === 429).length,
    retryAfter: Math.max(0, ...responses.map((r) => Number(r.headers.get('retry-after') ?? 0))),
  };
}

/** Waits until the burst window a refusal announced has passed. */
const waitForRefill = (r: Round) => sleep(r.retryAfter * 1000 + 250);

// a short burst window so the refill comes within the test; sustained caps the refills
const LIMIT: RateLimitConfig = { burst: 8, burstWindowSeconds: 3, perMinute: 19 };

describe('rate limiter under concurrency (in memory)', () => {
  it('admits exactly the burst, then exactly the refill, up to the sustained limit', async () => {
    const base = await start({ rateLimit: LIMIT });
    const first = await round([base], '198.51.100.7', 60);
    expect(first).toMatchObject({ admitted: LIMIT.burst, refused: 60 - LIMIT.burst });
    await waitForRefill(first);
    const second = await round([base], '198.51.100.7', 60);
    expect(second.admitted).toBe(LIMIT.burst);
    await waitForRefill(second);
    // the sustained window (60 s) is still open: only what is left of it is admitted
    const third = await round([base], '198.51.100.7', 60);
    expect(third.admitted).toBe(LIMIT.perMinute - 2 * LIMIT.burst);
  });

  it('counts different addresses apart, each with its own burst', async () => {
    const base = await start({ rateLimit: LIMIT });
    const ips = ['203.0.113.1', '203.0.113.2', '2001:db8::1', '2001:db8:1::1', '192.0.2.200'];
    const rounds = await Promise.all(ips.map((ip) => round([base], ip, 30)));
    expect(rounds.map((r) => r.admitted)).toEqual(ips.map(() => LIMIT.burst));
  });
});

describe('rate limiter shared through Redis', () => {
  let redis: RedisServer;
  const connections: RedisConnection[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await redis?.stop();
  });

  /** an app instance with a connection of its own, as each replica has */
  async function instance(): Promise<string> {
    const connection = await connectRedis(redis.url, () => {});
    connections.push(connection);
    return start({ rateLimit: LIMIT, redis: connection });
  }

  it('enforces one limit across two app instances', async () => {
    const bases = [await instance(), await instance()];
    // each instance alone would admit a burst of its own: together they admit one
    const first = await round(bases, '198.51.100.20', 60);
    expect(first).toMatchObject({ admitted: LIMIT.burst, refused: 60 - LIMIT.burst });
    await waitForRefill(first);
    const second = await round(bases, '198.51.100.20', 60);
    expect(second.admitted).toBe(LIMIT.burst);
  });

  it('keeps addresses independent across instances', async () => {
    const bases = [await instance(), await instance()];
    const ips = ['203.0.113.51', '203.0.113.52', '2001:db8:5::5'];
    const rounds = await Promise.all(ips.map((ip) => round(bases, ip, 30)));
    expect(rounds.map((r) => r.admitted)).toEqual(ips.map(() => LIMIT.burst));
  });
});

describe('rate limiter while its Redis is down', () => {
  it('lets requests through, reports the outage once, and limits them again once Redis is back', async () => {
    let redis = await startRedisServer();
    const port = Number(new URL(redis.url).port);
    const logged: string[] = [];
    const connection = await connectRedis(redis.url, (line) => logged.push(line));
    try {
      const base = await start({ rateLimit: LIMIT, redis: connection });
      expect(await round([base], '198.51.100.30', LIMIT.burst + 2)).toMatchObject({
        admitted: LIMIT.burst,
        refused: 2,
      });
      await redis.stop();
      // nothing crashes, nothing waits: every request passes unlimited while the counters are gone
      expect(await round([base], '198.51.100.30', LIMIT.burst + 2)).toMatchObject({
        admitted: LIMIT.burst + 2,
        refused: 0,
      });
      redis = await startRedisServer(port);
      // the client reconnects within its backoff; a fresh Redis counts from zero again
      let back = await round([base], '198.51.100.31', LIMIT.burst + 2);
      for (let i = 0; i < 50 && back.refused === 0; i++) {
        await sleep(200);
        back = await round([base], `198.51.100.${40 + i}`, LIMIT.burst + 2);
      }
      expect(back).toMatchObject({ admitted: LIMIT.burst, refused: 2 });
      expect(logged).toEqual([
        expect.stringMatching(
          /^redis: connection lost \(.*\); rate limits are not enforced \(requests pass uncounted\) until counting works again$/,
        ),
        'redis: counting works again; rate limits are enforced again',
      ]);
    } finally {
      await connection.close();
      await redis.stop();
    }
  });

  it('refuses to start on a Redis it cannot reach, giving the cause', async () => {
    const redis = await startRedisServer();
    const url = redis.url;
    await redis.stop();
    await expect(connectRedis(url, () => {})).rejects.toThrow(/ECONNREFUSED/);
  });
});
