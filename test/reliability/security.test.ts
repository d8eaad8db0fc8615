// Security properties of the running service. Over real HTTP on the indexed devnet: GraphQL limits
// hold on /graphql (depth, cost, aliases, tokens, batching); credentials sent by
// a client are neither used nor reflected, and no cookie is ever set; every kind of answer carries
// the security headers and hides the framework. Then `npm start`'s entry point runs as a child
// process under strace (every process of its tree) with HOME and TMPDIR pointed at empty directories:
// after every endpoint was exercised, no file was written anywhere but its DATA_DIR.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../rest/routes.ts';
import { startRestService, type IndexedStack } from '../harness/stack.ts';
import { get } from './problems.ts';

const SECRET = 'h6-credential-7c1e9b';
let stack: IndexedStack;
let base: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ stack, base, stop } = await startRestService({
    rateLimit: { perMinute: 100_000, burst: 100_000, burstWindowSeconds: 20 },
  }));
});
afterAll(async () => {
  await stop?.();
});

/** One concrete URL per route of the table, with parameters the scenario makes valid. */
function concretePaths(dataDir: string, ledger = stack.devnet.ledger): string[] {
  const round = ledger.rounds[0]!;
  const dump = JSON.parse(readFileSync(join(dataDir, round.uri), 'utf8')) as {
    values: { value: string[] }[];
  };
  const values: Record<string, string> = {
    '{slug}': round.fund,
    '{epoch}': String(round.epoch),
  };
  return ROUTES.map((route) => {
    let path = route.path;
    if (route.path.startsWith('/v1/strategies/'))
      path = path.replace('{slug}', stack.registry.strategies[0]!.slug);
    for (const [k, v] of Object.entries(values)) path = path.replace(k, v);
    if (route.operationId === 'getDividendProof') path += `?address=${dump.values[0]!.value[0]}`;
    return path;
  });
}

const postGraphql = (query: unknown) =>
  get(base, '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(query),
  });

describe('GraphQL limits over HTTP', () => {
  it('refuses deep, costly, alias-heavy and token-heavy documents with BAD_INPUT', async () => {
    const chain = 'ofType { '.repeat(22) + 'name' + ' }'.repeat(22);
    const documents: Record<string, [string, RegExp]> = {
      deep: [`{ __schema { types { fields { type { ${chain} } } } } }`, /depth limit/i],
      costly: [
        getIntrospectionQuery().replace('__schema {', 'again: __schema { types { ...FullType } } __schema {'),
        /cost limit/i,
      ],
      aliases: [
        `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: protocol { name }`).join(' ')} }`,
        /aliases limit/i,
      ],
      tokens: [`{ protocol { ${'name '.repeat(1200)} } }`, /token limit/i],
    };
    for (const [what, [query, message]] of Object.entries(documents)) {
      const response = await postGraphql({ query });
      expect(response.status, what).toBeLessThan(500);
      const body = JSON.parse(response.text) as {
        data?: unknown;
        errors?: { message: string; extensions?: { code?: string } }[];
      };
      expect(body.data ?? null, what).toBeNull();
      expect(body.errors?.[0]?.message, what).toMatch(message);
      expect(body.errors?.[0]?.extensions?.code, what).toBe('BAD_INPUT');
    }
  });
  it('refuses batched operations', async () => {
    const batch = await postGraphql([{ query: '{ protocol { name } }' }, { query: '{ protocol { slug } }' }]);
    expect(batch.status).toBeGreaterThanOrEqual(400);
    expect(batch.status).toBeLessThan(500);
  });
});

describe('credentials', () => {
  const credentialHeaders = {
    Authorization: `Bearer ${SECRET}`,
    Cookie: `session=${SECRET}`,
    'X-Api-Key': SECRET,
    'Proxy-Authorization': `Basic ${SECRET}`,
  };

  it('neither uses nor reflects credentials, and sets no cookie, on any endpoint', async () => {
    const paths = [
      ...concretePaths(stack.devnet.dataDir),
      '/v1/funds/no-such-fund',
      '/v1/events?limit=0',
      '/nowhere',
      '/openapi.json',
      '/llms.txt',
    ];
    for (const path of paths) {
      const plain = await get(base, path);
      const withCredentials = await get(base, path, { headers: credentialHeaders });
      const reflected = [...withCredentials.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
      expect(reflected + withCredentials.text, path).not.toContain(SECRET);
      expect(withCredentials.headers.get('set-cookie'), path).toBeNull();
      // the answer does not depend on them: same status and same validator
      expect(withCredentials.status, path).toBe(plain.status);
      expect(withCredentials.headers.get('etag'), path).toBe(plain.headers.get('etag'));
    }
    const graphql = await get(base, '/graphql', {
      method: 'POST',
      headers: { ...credentialHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ protocol { name } }' }),
    });
    expect(graphql.status).toBe(200);
    expect([...graphql.headers.values()].join('\n') + graphql.text).not.toContain(SECRET);
    expect(graphql.headers.get('set-cookie')).toBeNull();
  });
});

describe('response headers', () => {
  it('sets the security headers and hides the framework on every kind of answer', async () => {
    const answers = [
      ...(await Promise.all(concretePaths(stack.devnet.dataDir).map((p) => get(base, p)))),
      await get(base, '/v1/funds/no-such-fund'),
      await get(base, '/v1/events?limit=0'),
      await get(base, '/v1/funds', { method: 'DELETE' }),
      await get(base, '/v1/funds', { method: 'OPTIONS' }),
      await get(base, '/v1/nav/anything'),
      await get(base, '/problems/not-found'),
      await get(base, '/openapi.json'),
      await postGraphql({ query: '{ protocol { name } }' }),
      await get(base, `/v1/funds/${'x'.repeat(3000)}`),
    ];
    const statuses = new Set(answers.map((a) => a.status));
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 204, 400, 404, 405, 410, 414]));
    for (const answer of answers) {
      expect(answer.headers.get('x-powered-by')).toBeNull();
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(answer.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(answer.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });
});

describe('file system', () => {
  const dirs: string[] = [];
  let child: ChildProcess | undefined;
  const temp = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  /** the traced service: strace's child process */
  const servicePid = () =>
    Number(readFileSync(`/proc/${child!.pid}/task/${child!.pid}/children`, 'utf8').trim());
  afterAll(() => {
    if (child) {
      // a failed run: stop the service (and with it its anvil) before its tracer
      try {
        process.kill(servicePid(), 'SIGTERM');
      } catch {
        // already gone
      }
      child.kill('SIGKILL');
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('writes nothing anywhere but its DATA_DIR while serving every endpoint', async () => {
    if (spawnSync('strace', ['-V']).error) {
      throw new Error('strace is not installed: this test traces the service (apt-get install -y strace)');
    }
    const repoRoot = resolve(import.meta.dirname, '../..');
    const [home, tmp, dataDir, traceDir] = ['home', 'tmp', 'data', 'trace'].map((n) =>
      temp(`h6-fs-${n}-`),
    ) as [string, string, string, string];
    const trace = join(traceDir, 'trace');
    // devnet mode: the whole stack (anvil, scenario, embedded indexer, gateway, REST) in one process tree
    child = spawn(
      'strace',
      [
        '-f',
        '-qq',
        '-e',
        'trace=open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,unlink,unlinkat,truncate,rmdir',
        '-o',
        trace,
        process.execPath,
        '--import',
        'tsx',
        'main.ts',
      ],
      {
        // the repository is the working directory (npm start's); the trace covers it like any other place
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          TMPDIR: tmp,
          XDG_CACHE_HOME: join(home, '.cache'),
          XDG_CONFIG_HOME: join(home, '.config'),
          // the TypeScript runner's own transpile cache is not the service's: off
          TSX_DISABLE_CACHE: '1',
          DATA_DIR: dataDir,
          PORT: '0',
          SCENARIO_EPOCHS: '20',
          RATE_LIMIT_PER_MINUTE: '1000',
          RATE_LIMIT_BURST: '1000',
          SCENARIO_INVESTORS: '6',
          SCENARIO_ONBOARDING_DAYS: '3',
          SCENARIO_ROUND_INTERVAL: '4',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const serviceUrl = await new Promise<string>((ready, fail) => {
      createInterface({ input: child!.stdout! }).on('line', (line) => {
        const m = /listening on (http:\/\/\S+)/.exec(line);
        if (m) ready(m[1]!);
      });
      child!.once('exit', (code) => fail(new Error(`service exited with ${code}: ${stderr.slice(-2000)}`)));
    });

    const devnetDir = join(dataDir, 'devnet');
    const deployment = JSON.parse(readFileSync(join(devnetDir, 'deployment.json'), 'utf8')) as {
      funds: { slug: string }[];
    };
    const rounds = JSON.parse(
      (await get(serviceUrl, `/v1/funds/${deployment.funds[0]!.slug}/dividends`)).text,
    ) as {
      items: { fund: string; epoch: number; uri: string }[];
    };
    const round = rounds.items.at(-1)!;
    const leaf = (
      JSON.parse(readFileSync(join(devnetDir, round.uri), 'utf8')) as { values: { value: string[] }[] }
    ).values[0]!.value[0]!;
    const strategy = (
      JSON.parse((await get(serviceUrl, '/v1/strategies')).text) as { items: { slug: string }[] }
    ).items[0]!.slug;
    const paths = ROUTES.map((route) => {
      const path = route.path
        .replace('{slug}', route.path.startsWith('/v1/strategies') ? strategy : round.fund)
        .replace('{epoch}', String(round.epoch));
      return route.operationId === 'getDividendProof' ? `${path}?address=${leaf}` : path;
    });
    for (const path of [
      ...paths,
      '/openapi.json',
      '/llms.txt',
      '/llms-full.txt',
      '/.well-known/agents.json',
    ]) {
      const response = await get(serviceUrl, path);
      expect(response.status, `${path}: ${response.text.slice(0, 200)}`).toBe(200);
    }
    expect((await get(serviceUrl, '/v1/funds/unknown')).status).toBe(404);
    // stop the service itself (it stops its anvil and indexer); strace ends with its last tracee
    process.kill(servicePid(), 'SIGTERM');
    await new Promise<void>((r) => (child!.exitCode !== null ? r() : child!.once('exit', () => r())));
    child = undefined;

    // every path a traced process opened for writing, created, renamed or removed
    const written = new Set<string>();
    for (const line of readFileSync(trace, 'utf8').split('\n')) {
      const call = /^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)/.exec(line);
      if (!call) continue;
      const [, name, args] = call as unknown as [string, string, string];
      const isOpen = name === 'open' || name === 'openat' || name === 'creat';
      if (isOpen && name !== 'creat' && !/O_WRONLY|O_RDWR|O_CREAT|O_TRUNC/.test(args)) continue;
      for (const m of args.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
        const path = m[1]!;
        written.add(path.startsWith('/') ? path : resolve(repoRoot, path));
        if (isOpen) break;
      }
    }
    const allowed = (path: string) =>
      path.startsWith(dataDir + '/') ||
      path === dataDir ||
      /^\/dev\/(null|tty|pts\/|shm\/)/.test(path) ||
      path.startsWith('/proc/');
    // the trace saw the service's own writes (so it traced the right processes)...
    expect([...written].some((p) => p.startsWith(join(dataDir, 'devnet', 'indexer') + '/'))).toBe(true);
    // ...and none anywhere else
    expect([...written].filter((p) => !allowed(p))).toEqual([]);
    // the store, the deployment and the distributions are where they belong
    expect(readdirSync(devnetDir)).toEqual(
      expect.arrayContaining(['deployment.json', 'indexer', 'distributions']),
    );
    for (const dir of [home, tmp]) expect(readdirSync(dir), dir).toEqual([]);
  }, 240_000);
});
