// Rate limits over real HTTP: a burst of 20 passes and the 21st request is refused with 429,
// Retry-After and IETF RateLimit headers; the sustained per-minute limit holds on its own; /graphql
// and the discovery documents are counted as /v1 is; RATE_LIMIT_PER_MINUTE=0 turns the limits off;
// clients behind a trusted proxy are counted by their forwarded address; the discovery documents state
// the limits the deployment is configured with; the start-up line says where they are counted.
import { get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RestConfig } from '../../rest/app.ts';
import { DOCUMENT_PATHS } from '../../rest/documents.ts';
import { DEFAULT_RATE_LIMIT, rateLimitSummary } from '../../rest/rate-limit.ts';
import { loadServiceConfig } from '../../rest/service-config.ts';
import { listen, registryOnlyGateway, testRestApp } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

// /v1/contracts reads only the registry, so no upstream is involved in these requests
const gateway = registryOnlyGateway();
const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(overrides: Partial<RestConfig>) {
  const server = await listen(
    testRestApp(gateway, { rateLimit: DEFAULT_RATE_LIMIT, responseCacheEntries: 100, ...overrides }),
  );
  servers.push(server);
  return server.url;
}

describe('rate limits', () => {
  it('lets a burst of 20 through and refuses the 21st with 429 and Retry-After', async () => {
    const base = await start({});
    for (let i = 0; i < DEFAULT_RATE_LIMIT.burst; i++) {
      const ok = await call(base, '/v1/contracts');
      expect(ok.status, `request ${i + 1}`).toBe(200);
      expect(ok.headers.get('ratelimit-policy')).toContain('"burst"; q=20; w=20');
      expect(ok.headers.get('ratelimit-policy')).toContain('"sustained"; q=60; w=60');
    }
    const refused = await call(base, '/v1/contracts');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit')).toContain('"burst"; r=0');
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.body).toMatchObject({
      type: `${base}/problems/rate-limited`,
      status: 429,
      title: 'Too Many Requests',
      instance: '/v1/contracts',
    });
  });

  it.each([...DOCUMENT_PATHS, `/graphql?query=${encodeURIComponent('{ protocol { version } }')}`])(
    'counts requests to %s as it counts those to /v1 (SPEC: all endpoints)',
    async (path) => {
      const base = await start({ rateLimit: { perMinute: 60, burst: 1, burstWindowSeconds: 20 } });
      expect((await call(base, path)).status).toBe(200);
      const refused = await call(base, path);
      expect(refused.status).toBe(429);
      expect(refused.body.instance).toBe(new URL(path, base).pathname);
    },
  );

  it('lets every request through, without RateLimit headers, when RATE_LIMIT_PER_MINUTE=0', async () => {
    const base = await start({ rateLimit: loadServiceConfig({ RATE_LIMIT_PER_MINUTE: '0' }).rateLimit });
    for (let i = 0; i < 2 * DEFAULT_RATE_LIMIT.burst + 1; i++) {
      const ok = await call(base, '/v1/contracts');
      expect(ok.status, `request ${i + 1}`).toBe(200);
      expect(ok.headers.get('ratelimit'), `request ${i + 1}`).toBeNull();
      expect(ok.headers.get('ratelimit-policy'), `request ${i + 1}`).toBeNull();
    }
  });

  it('holds the sustained limit on its own', async () => {
    const base = await start({ rateLimit: { perMinute: 5, burst: 20, burstWindowSeconds: 20 } });
    for (let i = 0; i < 5; i++) expect((await call(base, '/v1/contracts')).status).toBe(200);
    const refused = await call(base, '/v1/contracts');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit')).toContain('"sustained"; r=0');
  });

  it('counts clients behind a trusted proxy by their forwarded address', async () => {
    const base = await start({
      trustProxy: 1,
      rateLimit: { perMinute: 2, burst: 2, burstWindowSeconds: 20 },
    });
    const from = (ip: string) => call(base, '/v1/contracts', { headers: { 'X-Forwarded-For': ip } });
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(429);
    expect((await from('203.0.113.2')).status).toBe(200);
  });

  it('counts IPv4 clients of a dual-stack socket (HOST=::) apart', async () => {
    const app = testRestApp(gateway, {
      rateLimit: { perMinute: 60, burst: 2, burstWindowSeconds: 20 },
      responseCacheEntries: 100,
    });
    const server = app.listen(0, '::');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    servers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const { port } = server.address() as AddressInfo;
    // the socket reports these clients as ::ffff:127.0.0.2 and ::ffff:127.0.0.3
    const from = (localAddress: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpGet(
          { host: '127.0.0.1', port, path: '/v1/contracts', localAddress, agent: false },
          (r) => {
            r.resume();
            resolve(r.statusCode ?? 0);
          },
        );
        request.on('error', reject);
      });
    expect(await from('127.0.0.2')).toBe(200);
    expect(await from('127.0.0.2')).toBe(200);
    expect(await from('127.0.0.2')).toBe(429);
    expect(await from('127.0.0.3')).toBe(200);
  });

  it('does not count CORS preflights', async () => {
    const base = await start({ rateLimit: { perMinute: 1, burst: 1, burstWindowSeconds: 20 } });
    for (let i = 0; i < 3; i++)
      expect((await call(base, '/v1/contracts', { method: 'OPTIONS' })).status).toBe(204);
    expect((await call(base, '/v1/contracts')).status).toBe(200);
  });
});

describe('the discovery documents of a deployment', () => {
  const documents = async (base: string) => {
    const llms = await fetch(`${base}/llms-full.txt`).then((r) => r.text());
    const short = await fetch(`${base}/llms.txt`).then((r) => r.text());
    const openapi = (await fetch(`${base}/openapi.json`).then((r) => r.json())) as {
      info: { description: string };
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
    };
    return { llms, short, openapi };
  };

  it('state the limits it is configured with, not the defaults', async () => {
    const { llms, short, openapi } = await documents(
      await start({ rateLimit: { perMinute: 5, burst: 3, burstWindowSeconds: 20 } }),
    );
    expect(short).toContain(
      'Rate limits: 5 requests per minute per IP sustained, and a burst of 3 requests per 20 seconds',
    );
    const statement =
      "5 requests per minute per IP sustained, and a burst of 3 requests per 20 seconds, each counted in fixed windows (so up to twice a limit can pass across a window's end). Over either: 429 with Retry-After (seconds).";
    expect(llms).toContain(`- ${statement}`);
    expect(openapi.info.description).toContain(`Rate limits: ${statement}`);
    expect(openapi.paths['/v1/contracts']!.get.responses['429']).toMatchObject({
      content: {
        'application/problem+json': {
          example: {
            detail: 'More than 3 requests in 20 seconds from your address; retry after 12 seconds.',
          },
        },
      },
    });
    expect(llms).not.toContain(`${DEFAULT_RATE_LIMIT.perMinute} requests per minute`);
  });

  it('say that no limit is enforced when rate limiting is off, and document no 429', async () => {
    const { llms, short, openapi } = await documents(await start({ rateLimit: false }));
    expect(short).toContain('Rate limits: This deployment enforces no rate limit.');
    expect(llms).toContain('- This deployment enforces no rate limit.');
    expect(llms).toContain('Every endpoint can answer 400, 404, 414 and 500;');
    expect(llms).not.toContain('429 rate-limited');
    expect(openapi.info.description).toContain('Rate limits: This deployment enforces no rate limit.');
    expect(Object.keys(openapi.paths['/v1/contracts']!.get.responses)).not.toContain('429');
  });
});

describe('the start-up line on rate limits', () => {
  it('names the Redis server and database the limits are counted in, without credentials', () => {
    expect(rateLimitSummary(DEFAULT_RATE_LIMIT, 'redis://counter:hunter2@redis.internal/2')).toBe(
      '60/min + 20 per 20 s per client IP, counted in Redis redis://redis.internal:6379/2',
    );
    expect(rateLimitSummary(DEFAULT_RATE_LIMIT, 'rediss://:hunter2@10.0.0.5:6380')).toBe(
      '60/min + 20 per 20 s per client IP, counted in Redis rediss://10.0.0.5:6380/0',
    );
  });

  it('says that without REDIS_URL each replica counts in its own memory', () => {
    expect(rateLimitSummary({ perMinute: 5, burst: 3, burstWindowSeconds: 20 }, undefined)).toBe(
      "5/min + 3 per 20 s per client IP, counted in this process's memory (each replica apart; REDIS_URL shares them)",
    );
  });

  it('says that the limits are off, and a REDIS_URL unused', () => {
    expect(rateLimitSummary(false, undefined)).toBe('off (RATE_LIMIT_PER_MINUTE=0)');
    expect(rateLimitSummary(false, 'redis://127.0.0.1:6379')).toBe(
      'off (RATE_LIMIT_PER_MINUTE=0; REDIS_URL is not used)',
    );
  });
});
