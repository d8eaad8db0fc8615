// What the service's log says when its answers fail, over real upstreams on loopback that are
// absent or misbehave (fault proxies, and proxies ignoring the secret path and query of the URL
// they are configured by): no secret of a configured URL in any line, an upstream's outage told
// once when it starts and once when it ends, however many requests it failed, an upstream's answer
// quoted briefly however long it is, and a bug still told every time, with its stack. The lines
// are taken as the service prints them (util.format, as console.error writes what it is given).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway, GatewayConfig } from '../../gateway/server.ts';
import { indexedStack, type IndexedStack, listen, testGateway, testRestApp } from '../harness/stack.ts';
import { get } from './problems.ts';
import { closedAfterEachTest } from './public-rest-service.ts';
import { authenticatingProxy, type AuthenticatingProxy } from './servers/authenticating-proxy.ts';
import { startFaultProxy, type FaultProxy } from './servers/fault-proxy.ts';
import { closedPort } from './servers/ports.ts';
import { startStaticFiles, type StaticFiles } from './servers/static-files.ts';

/** where hosted providers put keys: a path and a query (the proxies in front ignore both) */
const RPC_SECRET_PATH = '/v3/SECRETKEY123?apikey=SECRET2';
const SUBGRAPH_SECRET_PATH = '/api/SUBKEY8/subgraphs/id/Qm?token=SUBTOKEN9';
/** what no line may show: those keys, and the passwords of the URLs (authenticatingProxy's is s@cret) */
const SECRETS = ['SECRETKEY123', 'SECRET2', 'SUBKEY8', 'SUBTOKEN9', 'PASSWORD9', 's@cret', 's%40cret'];

const still = (upstream: string, cause: string, where: string) =>
  `${upstream} is failing: ${cause} (first at ${where}); requests needing it fail until it answers again`;
const again = (upstream: string, failed: number) =>
  `${upstream} answers again; ${failed} requests failed on it meanwhile`;

let stack: IndexedStack;
/** the harness's devnet RPC and indexer, each behind a fault proxy */
let rpc: FaultProxy;
let subgraph: FaultProxy;
/** those proxies behind proxies that ignore the path and query of their URLs and check their password */
let rpcWithKeys: AuthenticatingProxy;
let subgraphWithKeys: AuthenticatingProxy;

beforeAll(async () => {
  stack = await indexedStack();
  [rpc, subgraph] = await Promise.all([
    startFaultProxy(stack.devnet.rpcUrl),
    startFaultProxy(stack.subgraphUrl),
  ]);
  [rpcWithKeys, subgraphWithKeys] = await Promise.all([
    authenticatingProxy(rpc.url, RPC_SECRET_PATH),
    authenticatingProxy(subgraph.url, SUBGRAPH_SECRET_PATH),
  ]);
});

afterEach(() => {
  rpc.set({ kind: 'pass' });
  subgraph.set({ kind: 'pass' });
});

afterAll(async () => {
  rpcWithKeys?.close();
  subgraphWithKeys?.close();
  await Promise.all([rpc?.close(), subgraph?.close()]);
});

const afterTest = closedAfterEachTest();

/** the lines the service of a test logged, each prefixed as main.ts's console.error lines are */
let logged: string[];

/**
 * The REST service over a gateway reading what `config` says (else the harness's devnet and indexer
 * through the proxies with keys), both logging to `logged`: a fresh log, and a fresh outage state.
 */
async function serviceLogging(config: Partial<GatewayConfig> = {}): Promise<string> {
  logged = [];
  const to = (prefix: string) => (entry: unknown) => logged.push(`${prefix} ${format(entry)}`);
  const gateway: Gateway = testGateway(stack, {
    subgraph: { url: subgraphWithKeys.url, timeoutMs: 20_000, maxBatch: 1000 },
    chain: { rpcUrl: rpcWithKeys.url, timeoutMs: 20_000, maxBatch: 200 },
    logError: to('[gateway]'),
    ...config,
  });
  const service = await listen(testRestApp(gateway, { logError: to('[rest]') }));
  afterTest.track(service);
  return service.url;
}

function expectNoSecretLogged(): void {
  for (const line of logged) for (const secret of SECRETS) expect(line).not.toContain(secret);
}

async function expectStatus(base: string, path: string, status: number): Promise<void> {
  const response = await get(base, path);
  expect(response.status, `${path}: ${response.text.slice(0, 200)}`).toBe(status);
}

async function postGraphql(base: string, query: string): Promise<{ errors?: unknown[] }> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { errors?: unknown[] };
}

const slug = () => stack.registry.funds[0]!.slug;
/** the URL of `proxy`, which has a path, as the log may show it: scheme, host and port, "/…" for the rest */
const shown = (proxy: { url: string }) => `http://${new URL(proxy.url).host}/…`;

describe('the log of an unreachable RPC node', () => {
  it('names RPC_URL by scheme, host and port only, without its password, path or query', async () => {
    const port = await closedPort();
    const base = await serviceLogging({
      chain: {
        rpcUrl: `http://user:PASSWORD9@127.0.0.1:${port}${RPC_SECRET_PATH}`,
        timeoutMs: 20_000,
        maxBatch: 200,
      },
    });
    for (let i = 0; i < 3; i++) await expectStatus(base, `/v1/funds/${slug()}/reserve`, 503);
    expect(logged).toEqual([
      `[rest] ${still(
        `chain RPC (RPC_URL http://127.0.0.1:${port}/…)`,
        `connect ECONNREFUSED 127.0.0.1:${port}`,
        'GET /v1/funds/:slug/reserve',
      )}`,
    ]);
  });
});

describe("the log of an RPC node's error answer", () => {
  it("quotes viem's words, which name the URL, with the URL's password, path and query left out", async () => {
    const base = await serviceLogging();
    rpc.set({
      kind: 'answer',
      status: 500,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'node overloaded' } }),
    });
    await expectStatus(base, `/v1/funds/${slug()}/reserve`, 503);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain(`[rest] chain RPC (RPC_URL ${shown(rpcWithKeys)}) is failing: `);
    expect(logged[0]).toContain(`URL: ${shown(rpcWithKeys)}`);
    expectNoSecretLogged();
  });
});

describe("the log of an upstream's outage", () => {
  it('tells a burst of failed requests in one line when it starts and one, with their count, when it ends', async () => {
    const base = await serviceLogging({
      subgraph: { url: subgraph.url, timeoutMs: 20_000, maxBatch: 1000 },
    });
    subgraph.set({ kind: 'down' });
    for (let i = 0; i < 5; i++) await expectStatus(base, '/v1/events?limit=11', 503);
    subgraph.set({ kind: 'pass' });
    await expectStatus(base, '/v1/events?limit=11', 200);
    await expectStatus(base, '/v1/events?limit=11', 200);
    const upstream = `subgraph (SUBGRAPH_URL ${shown(subgraph)})`;
    expect(logged).toEqual([
      `[rest] ${still(upstream, 'other side closed', 'GET /v1/events')}`,
      `[rest] ${again(upstream, 5)}`,
    ]);
  });

  it('counts a /graphql request once, however many of its fields the upstream failed', async () => {
    const base = await serviceLogging();
    subgraph.set({ kind: 'answer', status: 503, body: '{"error":"indexer restarting"}' });
    const threeFields =
      '{ a: events(limit: 1) { nextCursor } b: events(limit: 2) { nextCursor } c: events(limit: 3) { nextCursor } }';
    for (let i = 0; i < 2; i++) expect((await postGraphql(base, threeFields)).errors).toHaveLength(3);
    subgraph.set({ kind: 'pass' });
    expect((await postGraphql(base, threeFields)).errors).toBeUndefined();
    const upstream = `subgraph (SUBGRAPH_URL ${shown(subgraphWithKeys)})`;
    expect(logged).toHaveLength(2);
    expect(logged[0]!.startsWith(`[gateway] ${upstream} is failing: `)).toBe(true);
    // the fields fail together: any of them may be first
    expect(logged[0]).toMatch(
      / \(first at \/graphql field [abc]\); requests needing it fail until it answers again$/,
    );
    expect(logged[1]).toBe(`[gateway] ${again(upstream, 2)}`);
    expectNoSecretLogged();
  });

  it('of dividend distributions ends when a file that failed is read again, not when one is answered from memory', async () => {
    const files: StaticFiles = await startStaticFiles(stack.devnet.dataDir);
    const proxy = await startFaultProxy(files.url);
    afterTest.track(files);
    afterTest.track(proxy);
    const base = await serviceLogging({
      distributions: { base: proxy.url, timeoutMs: 20_000, cacheSize: 16 },
    });
    const [kept, failing] = stack.devnet.ledger.rounds;
    const proof = (round: typeof kept) => {
      const dump = JSON.parse(readFileSync(join(stack.devnet.dataDir, round!.uri), 'utf8')) as {
        values: { value: [string, string] }[];
      };
      return `/v1/funds/${round!.fund}/dividends/${round!.epoch}/proof?address=${dump.values[0]!.value[0]}`;
    };
    await expectStatus(base, proof(kept), 200);
    proxy.set({ kind: 'down' });
    await expectStatus(base, proof(failing), 503);
    await expectStatus(base, proof(kept), 200);
    await expectStatus(base, proof(failing), 503);
    proxy.set({ kind: 'pass' });
    await expectStatus(base, proof(failing), 200);
    // a base without a path or query is shown whole
    const upstream = `dividend distribution (DISTRIBUTIONS_BASE ${proxy.url})`;
    expect(logged).toEqual([
      `[rest] ${still(upstream, 'other side closed', 'GET /v1/funds/:slug/dividends/:epoch/proof')}`,
      `[rest] ${again(upstream, 2)}`,
    ]);
  });
});

describe("the log of an upstream's long answer", () => {
  it('quotes at most 500 characters of it', async () => {
    const base = await serviceLogging();
    const page = `<html><body>${'<p>maintenance</p>'.repeat(60_000)}</body></html>`;
    subgraph.set({ kind: 'answer', status: 502, body: page, contentType: 'text/html' });
    await expectStatus(base, '/v1/events?limit=11', 503);
    expect(logged).toHaveLength(1);
    const quoted = /is failing: (.*) \(first at GET \/v1\/events\);/.exec(logged[0]!)?.[1];
    expect(quoted).toContain('<html><body><p>maintenance</p>');
    expect(quoted!.length).toBe(501);
    expect(quoted!.endsWith('…')).toBe(true);
  });
});

describe('the log of a bug', () => {
  it('tells every failure, with its route, its causes and their stacks', async () => {
    // a fund whose vault address holds no contract: reading it is a fault of the service's data
    const [first, broken, ...rest] = stack.registry.funds;
    const base = await serviceLogging({
      registry: {
        ...stack.registry,
        funds: [first!, { ...broken!, vault: '0x000000000000000000000000000000000000dEaD' }, ...rest],
      },
    });
    for (let i = 0; i < 2; i++) await expectStatus(base, `/v1/funds/${broken!.slug}/reserve`, 500);
    expect(logged).toHaveLength(2);
    for (const line of logged) {
      expect(line).toMatch(
        /^\[rest\] GET \/v1\/funds\/:slug\/reserve failed on an internal error \(a bug; the client got no details\): Error: reserveBalance\(\) at 0x000000000000000000000000000000000000dEaD returned no data: the registry names an address that is not a contract on the chain RPC_URL serves\n {4}at /,
      );
      expect(line).toContain(
        '\ncaused by: ContractFunctionExecutionError: The contract function "reserveBalance" returned no data',
      );
    }
    expectNoSecretLogged();
  });
});
