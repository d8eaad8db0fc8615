// `npm start` with a REDIS_URL, run as a child process over the harness's indexer and devnet, with a
// real redis-server: a Redis that refuses the counters stops the start with one line saying what to
// fix (it used to crash with a stack trace after printing that it listened); the start-up lines say
// where the limits are counted, credentials left out; and SIGTERM stops the service while its Redis
// is hung (requests and shutdown used to wait for Redis forever).
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startRedisServer, type RedisServer } from './servers/redis-server.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
/** network mode over the harness's indexer and devnet, which the start-up checks accept */
const NETWORK = {
  SUBGRAPH_URL: inject('indexer').queryUrl,
  RPC_URL: inject('devnet').rpcUrl,
  REGISTRY: 'registry/devnet.json',
};

interface Service {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  /** the base URL it printed, once it listens (undefined if it exited first) */
  listening: Promise<string | undefined>;
  exited: Promise<number | null>;
}

const running: ChildProcess[] = [];
const redisServers: RedisServer[] = [];
afterEach(async () => {
  running.splice(0).forEach((child) => child.exitCode === null && child.kill('SIGKILL'));
  await Promise.all(redisServers.splice(0).map((redis) => redis.stop()));
});

async function redisServer(args?: string[]): Promise<RedisServer> {
  const redis = await startRedisServer(undefined, args);
  redisServers.push(redis);
  return redis;
}

function startService(env: Record<string, string>): Service {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ...NETWORK, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const service: Service = { child, stdout: '', stderr: '', exited, listening: Promise.resolve(undefined) };
  child.stderr?.on('data', (chunk: Buffer) => (service.stderr += chunk.toString()));
  service.listening = new Promise((done) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      service.stdout += `${line}\n`;
      if (line.startsWith('Ctrl-C to stop')) done(/listening on (http:\/\/\S+)/.exec(service.stdout)?.[1]);
    });
    void exited.then(() => done(undefined));
  });
  return service;
}

describe('npm start with REDIS_URL', () => {
  it('stops with one line saying to put the password in REDIS_URL when Redis requires one', async () => {
    const redis = await redisServer(['--requirepass', 'hunter2']);
    const service = startService({ REDIS_URL: redis.url });
    expect(await service.exited).toBe(1);
    expect(service.stdout).not.toContain('listening');
    expect(service.stderr).toBe(
      `start-up error: cannot connect to REDIS_URL (${redis.url}/0): NOAUTH Authentication required: this Redis requires a password: put it in REDIS_URL (redis://:<password>@host:port/db, or redis://<user>:<password>@host:port/db for an ACL user)\n`,
    );
  });

  it('says at start-up that the limits are counted in Redis, naming the server and database but not the password', async () => {
    const redis = await redisServer(['--requirepass', 'hunter2']);
    const service = startService({ REDIS_URL: `redis://:hunter2@127.0.0.1:${redis.port}/3` });
    expect(await service.listening).toBeDefined();
    expect(service.stdout).toContain(
      `  rate limits   60/min + 20 per 20 s per client IP, counted in Redis redis://127.0.0.1:${redis.port}/3\n`,
    );
    expect(service.stdout + service.stderr).not.toContain('hunter2');
  });

  it('answers requests and stops on SIGTERM while its Redis is hung', async () => {
    const redis = await redisServer();
    const service = startService({ REDIS_URL: redis.url });
    const base = await service.listening;
    redis.pause();
    const response = await fetch(`${base}/v1/contracts`);
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit')).toBeNull();
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
