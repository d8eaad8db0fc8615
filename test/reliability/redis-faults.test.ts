// The Redis-backed rate limiter when its real redis-server misbehaves after start-up: hung
// (SIGSTOP), slow (behind a loopback proxy that holds its answers back), restarted with a password,
// turned into a read-only replica, or gone before the limiters are built. Requests always pass
// (uncounted, without RateLimit headers), each outage is logged once with its cause, and the limits
// are said to hold again only once a request is counted again. And what connectRedis refuses at
// start-up, saying what to fix. Requests go to /v1/contracts, which reads only the registry.
import { createServer, connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { connectRedis, type RateLimitConfig, type RedisConnection } from '../../rest/rate-limit.ts';
import { listen, registryOnlyGateway, testRestApp } from '../harness/stack.ts';
import { closedPort } from './servers/ports.ts';
import { startRedisServer, type RedisServer } from './servers/redis-server.ts';

const gateway = registryOnlyGateway();
const LIMIT: RateLimitConfig = { burst: 3, burstWindowSeconds: 20, perMinute: 60 };
const LOST =
  /^redis: connection lost \(.*\); rate limits are not enforced \(requests pass uncounted\) until counting works again$/;
const BACK = 'redis: counting works again; rate limits are enforced again';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function redisServer(port?: number, args?: string[]): Promise<RedisServer> {
  const redis = await startRedisServer(port, args);
  cleanups.push(() => redis.stop());
  return redis;
}

async function connection(url: string, logged: string[] = []): Promise<RedisConnection> {
  const redis = await connectRedis(url, (line) => logged.push(line));
  cleanups.push(() => redis.close());
  return redis;
}

async function app(redis: RedisConnection): Promise<string> {
  const server = await listen(
    testRestApp(gateway, { trustProxy: 1, rateLimit: LIMIT, responseCacheEntries: 100, redis }),
  );
  cleanups.push(() => server.close());
  return server.url;
}

async function adminClient(url: string) {
  const client = createClient({ url });
  await client.connect();
  cleanups.push(() => client.close());
  return client;
}

interface Answer {
  status: number;
  /** the RateLimit header: null when the request was not counted */
  rateLimit: string | null;
  rateLimitPolicy: string | null;
}

let nextClient = 0;
/** an address no other request of the run comes from */
const freshIp = () => {
  nextClient++;
  return `10.0.${nextClient >> 8}.${nextClient & 255}`;
};

async function get(base: string, ip: string): Promise<Answer> {
  const response = await fetch(`${base}/v1/contracts`, { headers: { 'X-Forwarded-For': ip } });
  await response.arrayBuffer();
  return {
    status: response.status,
    rateLimit: response.headers.get('ratelimit'),
    rateLimitPolicy: response.headers.get('ratelimit-policy'),
  };
}

/** `count` simultaneous requests from one address */
const burstFrom = (base: string, ip: string, count: number) =>
  Promise.all(Array.from({ length: count }, () => get(base, ip)));

const UNCOUNTED: Answer = { status: 200, rateLimit: null, rateLimitPolicy: null };

/** Statuses of LIMIT.burst + 1 simultaneous requests from a fresh address, as a counting limiter answers them. */
async function countedRound(base: string): Promise<number[]> {
  const answers = await burstFrom(base, freshIp(), LIMIT.burst + 1);
  return answers.map((a) => a.status).sort();
}
const LIMITED = [...Array<number>(LIMIT.burst).fill(200), 429];

/** Sends a request every 100 ms until `done` says yes of its answer (at most 100). */
async function requestUntil(base: string, done: (answer: Answer) => boolean): Promise<Answer> {
  for (let i = 0; ; i++) {
    const answer = await get(base, freshIp());
    if (done(answer) || i === 100) return answer;
    await sleep(100);
  }
}

const counted = (answer: Answer) => answer.rateLimit !== null;

describe('the Redis-backed rate limiter', () => {
  it('lets requests through uncounted while Redis is hung, logs it once, and counts again once Redis answers', async () => {
    const redis = await redisServer();
    const logged: string[] = [];
    const base = await app(await connection(redis.url, logged));
    expect(await countedRound(base)).toEqual(LIMITED);

    redis.pause();
    const ip = freshIp();
    expect(await burstFrom(base, ip, LIMIT.burst + 2)).toEqual(
      Array<Answer>(LIMIT.burst + 2).fill(UNCOUNTED),
    );
    expect(await get(base, ip)).toEqual(UNCOUNTED);
    redis.resume();

    expect(counted(await requestUntil(base, counted))).toBe(true);
    expect(await countedRound(base)).toEqual(LIMITED);
    expect(logged).toEqual([
      expect.stringMatching(
        /^redis: counting failed \(no answer from Redis within 500 ms .*\); rate limits are not enforced \(requests pass uncounted\) until counting works again$/,
      ),
      BACK,
    ]);
  });

  it('lets requests through uncounted while Redis answers slower than its command timeout', async () => {
    const redis = await redisServer();
    const proxy = await startDelayProxy(redis.port);
    const logged: string[] = [];
    const base = await app(await connection(proxy.url, logged));
    expect(await countedRound(base)).toEqual(LIMITED);

    proxy.delayMs = 2_000;
    expect(await burstFrom(base, freshIp(), LIMIT.burst + 2)).toEqual(
      Array<Answer>(LIMIT.burst + 2).fill(UNCOUNTED),
    );
    proxy.delayMs = 0;

    expect(counted(await requestUntil(base, counted))).toBe(true);
    expect(await countedRound(base)).toEqual(LIMITED);
    expect(logged).toEqual([
      expect.stringMatching(/^redis: counting failed \(no answer from Redis within 500 ms/),
      BACK,
    ]);
  });

  it('says that a Redis restarted with a password refuses the counters (NOAUTH), and nothing of limits enforced until it counts again', async () => {
    let redis = await redisServer();
    const logged: string[] = [];
    const base = await app(await connection(redis.url, logged));
    expect(await countedRound(base)).toEqual(LIMITED);

    await redis.stop();
    redis = await redisServer(redis.port, ['--requirepass', 'hunter2']);
    const refused = /^redis: counting failed \(NOAUTH/;
    await requestUntil(base, () => logged.some((line) => refused.test(line)));
    expect(await get(base, freshIp())).toEqual(UNCOUNTED);
    expect(logged).toEqual([
      expect.stringMatching(LOST),
      'redis: counting failed (NOAUTH Authentication required: this Redis requires a password: put it in REDIS_URL (redis://:<password>@host:port/db, or redis://<user>:<password>@host:port/db for an ACL user)); rate limits are not enforced (requests pass uncounted) until counting works again',
    ]);

    await (await adminClient(`redis://:hunter2@127.0.0.1:${redis.port}`)).configSet('requirepass', '');
    expect(counted(await requestUntil(base, counted))).toBe(true);
    expect(logged.slice(2)).toEqual([BACK]);
  });

  it('says that a Redis turned into a read-only replica refuses the counters (READONLY), and counts again once it is a primary', async () => {
    const redis = await redisServer();
    const logged: string[] = [];
    const base = await app(await connection(redis.url, logged));
    expect(await countedRound(base)).toEqual(LIMITED);

    const admin = await adminClient(redis.url);
    await admin.sendCommand(['REPLICAOF', '127.0.0.1', String(await closedPort())]);
    expect(await get(base, freshIp())).toEqual(UNCOUNTED);
    expect(await get(base, freshIp())).toEqual(UNCOUNTED);
    expect(logged).toEqual([
      expect.stringMatching(
        /^redis: counting failed \(READONLY You can't write against a read only replica.*: REDIS_URL points at a read-only replica: point it at the primary\); rate limits are not enforced \(requests pass uncounted\) until counting works again$/,
      ),
    ]);

    await admin.sendCommand(['REPLICAOF', 'NO', 'ONE']);
    expect(counted(await get(base, freshIp()))).toBe(true);
    expect(logged.slice(1)).toEqual([BACK]);
  });

  it('sends no RateLimit headers on a request it could not count', async () => {
    const redis = await redisServer();
    const base = await app(await connection(redis.url));
    const before = await get(base, freshIp());
    expect(before.rateLimit).toBe(
      `"burst"; r=${LIMIT.burst - 1}; t=${LIMIT.burstWindowSeconds}, "sustained"; r=${LIMIT.perMinute - 1}; t=60`,
    );
    await redis.stop();
    expect(await get(base, freshIp())).toEqual(UNCOUNTED);
  });

  it('keeps running when Redis is gone before the limiters are built, and counts once Redis is back', async () => {
    const redis = await redisServer();
    const redisConnection = await connection(redis.url);
    await redis.stop();
    // the limiters' stores load their scripts as they are built: on a gone Redis that used to be
    // an unhandled rejection, which ends the process
    const base = await app(redisConnection);
    expect(await get(base, freshIp())).toEqual(UNCOUNTED);

    await redisServer(redis.port);
    expect(counted(await requestUntil(base, counted))).toBe(true);
    expect(await countedRound(base)).toEqual(LIMITED);
  });
});

describe('connecting to Redis at start-up', () => {
  it('refuses a Redis that requires a password REDIS_URL does not give, saying where it goes', async () => {
    const redis = await redisServer(undefined, ['--requirepass', 'hunter2']);
    await expect(connectRedis(redis.url, () => {})).rejects.toThrow(
      /^NOAUTH Authentication required: this Redis requires a password: put it in REDIS_URL \(redis:\/\/:<password>@host:port\/db, or redis:\/\/<user>:<password>@host:port\/db for an ACL user\)$/,
    );
  });

  it("refuses a user that may not run the counters' script, naming the permissions to grant, which suffice", async () => {
    const redis = await redisServer();
    const admin = await adminClient(redis.url);
    await admin.sendCommand(['ACL', 'SETUSER', 'noscripts', 'on', '>pw', '~*', '+@all', '-@scripting']);
    await expect(connectRedis(`redis://noscripts:pw@127.0.0.1:${redis.port}`, () => {})).rejects.toThrow(
      "NOPERM this user has no permissions to run the 'script|load' command: REDIS_URL's user may not run the rate limiter's commands: grant them (ACL SETUSER <user> +select +script|load +evalsha +pttl +set +incr +pexpire ~rl:*)",
    );

    const granted = '+select +script|load +evalsha +pttl +set +incr +pexpire ~rl:*'.split(' ');
    await admin.sendCommand(['ACL', 'SETUSER', 'counter', 'on', '>pw', ...granted]);
    const base = await app(await connection(`redis://counter:pw@127.0.0.1:${redis.port}/0`));
    expect(await countedRound(base)).toEqual(LIMITED);
  });

  it('refuses a database that is not a number, saying what it must be', async () => {
    const redis = await redisServer();
    await expect(connectRedis(`${redis.url}/abc`, () => {})).rejects.toThrow(
      'its path is the database number, which must be digits (redis://host:port/0 for database 0)',
    );
  });

  it('refuses a rediss:// URL of a Redis without TLS, saying to use redis://', async () => {
    const redis = await redisServer();
    await expect(connectRedis(redis.url.replace('redis:', 'rediss:'), () => {})).rejects.toThrow(
      'no TLS connection within 5 s: a rediss:// URL needs a Redis serving TLS; for one that does not, REDIS_URL starts with redis://',
    );
  });

  it('gives up on a Redis that accepts the connection and answers nothing', async () => {
    const redis = await redisServer();
    redis.pause();
    await expect(connectRedis(redis.url, () => {})).rejects.toThrow(
      "no answer within 10 s: check that REDIS_URL's host and port are right and its Redis is running (not stopped)",
    );
  });
});

interface DelayProxy {
  url: string;
  /** how long each answer from Redis is held back (changeable at any time; the order is kept) */
  delayMs: number;
}

/** A TCP proxy on loopback in front of the redis-server on `port`, holding its answers back. */
async function startDelayProxy(port: number): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => [client, upstream].forEach((s) => s.destroy()));
    }
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    let sent = Promise.resolve();
    upstream.on('data', (chunk: Buffer) => {
      const due = Date.now() + proxy.delayMs;
      sent = sent.then(() => sleep(due - Date.now())).then(() => void client.write(chunk));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const proxy: DelayProxy = {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    delayMs: 0,
  };
  cleanups.push(async () => {
    sockets.forEach((socket) => socket.destroy());
    await new Promise((done) => server.close(done));
  });
  return proxy;
}
