// With Redis, rate-limit counters are shared: two replicas of the REST app in front of one
// Redis (a real redis-server on a private unix socket) refuse the 21st request of a burst
// whichever replica receives it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../gateway/server.ts';
import { loadRegistry } from '../../gateway/sources/registry.ts';
import { createRestApp } from '../../rest/app.ts';
import { DEFAULT_RATE_LIMIT } from '../../rest/rate-limit.ts';
import { listen, REGISTRY_FILE } from '../gateway/stack.ts';
import { call } from './openapi-responses.ts';

let dir: string;
let server: ChildProcess;
let redis: ReturnType<typeof createClient>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'h4-redis-'));
  const socket = join(dir, 'redis.sock');
  server = spawn(
    'redis-server',
    ['--port', '0', '--unixsocket', socket, '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 200 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 25));
  redis = createClient({ socket: { path: socket, tls: false } });
  await redis.connect();
});

afterAll(async () => {
  await redis?.quit();
  server?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('rate limits in Redis', () => {
  it('holds the burst across two replicas sharing one Redis', async () => {
    const gateway = createGateway({
      registry: loadRegistry(REGISTRY_FILE),
      subgraph: { url: 'http://127.0.0.1:9/unused', timeoutMs: 1_000, maxBatch: 10 },
      chain: undefined,
      distributions: { base: undefined, timeoutMs: 1_000, cacheSize: 1 },
      logError: () => {},
    });
    const replica = () =>
      listen(
        createRestApp({
          gateway,
          trustProxy: false,
          rateLimit: DEFAULT_RATE_LIMIT,
          redis: { sendCommand: (args) => redis.sendCommand(args) },
          responseCacheEntries: 10,
        }),
      );
    const [a, b] = await Promise.all([replica(), replica()]);
    try {
      for (let i = 0; i < DEFAULT_RATE_LIMIT.burst; i++) {
        expect((await call(i % 2 ? a.url : b.url, '/v1/contracts')).status, `request ${i + 1}`).toBe(200);
      }
      const refused = await call(a.url, '/v1/contracts');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await redis.keys('rl:*')).toEqual(expect.arrayContaining([expect.stringMatching(/^rl:burst:/)]));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
