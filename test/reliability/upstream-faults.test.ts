// Upstream faults made by real misbehaving servers on loopback: a fault proxy in front of the
// indexed devnet's subgraph endpoint and another in front of anvil's RPC (the dividend
// distributions have distribution-faults.test.ts). Each test switches one fault on, checks that
// the service says precisely what is wrong (503 upstream-unavailable problem, no upstream words,
// or honest freshness), then clears the fault and checks that the very next request succeeds:
// recovery needs no restart.
import { parse, print, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { indexedStack, testGateway, type IndexedStack } from '../harness/stack.ts';
import { publicRestService } from './public-rest-service.ts';
import { expectNoLeak, expectProblem, get } from './problems.ts';
import { startFaultProxy, type FaultProxy } from './servers/fault-proxy.ts';

/**
 * How long the service waits for an upstream: long enough that a step expecting an answer gets it
 * however loaded the machine is (and short enough that a step failing says so within the test's
 * time limit). Only a service whose upstream is made to hang waits less for that one
 * (HANG_TIMEOUT_MS), so that giving up is quick; such a test has a longer time limit, since each of
 * its requests to the hanging upstream waits out that timeout, twice where the service tries again.
 */
const TIMEOUT_MS = 20_000;
const HANG_TIMEOUT_MS = 3_000;
const UPSTREAM_SECRET = 'upstream-secret-detail-7f3a';

let stack: IndexedStack;
let subgraph: FaultProxy;
let rpc: FaultProxy;
let base: string;
let close: () => Promise<void>;

beforeAll(async () => {
  stack = await indexedStack();
  [subgraph, rpc] = await Promise.all([
    startFaultProxy(stack.subgraphUrl),
    startFaultProxy(stack.devnet.rpcUrl),
  ]);
  ({ url: base, close } = await startService());
});

type Upstream = 'subgraph' | 'chain';

/**
 * The REST app over the two fault proxies, waiting TIMEOUT_MS for each upstream but those
 * `hanging` names (HANG_TIMEOUT_MS); it serves no dividend proofs.
 */
async function startService(hanging: Upstream[] = []): Promise<{ url: string; close(): Promise<void> }> {
  const timeoutMs = (upstream: Upstream) => (hanging.includes(upstream) ? HANG_TIMEOUT_MS : TIMEOUT_MS);
  // a public base, so that any loopback address in a body is a leak, and no response cache: every
  // request reaches the upstreams (publicRestService)
  return publicRestService(
    testGateway(stack, {
      subgraph: { url: subgraph.url, timeoutMs: timeoutMs('subgraph'), maxBatch: 1000 },
      chain: { rpcUrl: rpc.url, timeoutMs: timeoutMs('chain'), maxBatch: 200 },
      distributions: { base: undefined, timeoutMs: TIMEOUT_MS, cacheSize: 1 },
      logError: () => {},
    }),
  );
}

/** a service of a test's own (one that waits less for a hanging upstream), closed after it */
let own: { url: string; close(): Promise<void> } | undefined;
async function serviceWaitingLessFor(hanging: Upstream[]): Promise<string> {
  own = await startService(hanging);
  return own.url;
}

afterEach(async () => {
  subgraph.set({ kind: 'pass' });
  rpc.set({ kind: 'pass' });
  await own?.close();
  own = undefined;
});

afterAll(async () => {
  await close?.();
  await Promise.all([subgraph?.close(), rpc?.close()]);
});

const fundSlug = () => stack.devnet.ledger.funds[0]!.slug;
const firstRound = () => {
  const round = stack.devnet.ledger.rounds[0];
  if (!round) throw new Error('the scenario posted no dividend round');
  return round;
};

/** The endpoints that need the subgraph, one request each. */
const SUBGRAPH_PATHS = () => [
  '/v1/funds',
  `/v1/funds/${fundSlug()}/nav`,
  `/v1/funds/${fundSlug()}/nav/history`,
  `/v1/funds/${fundSlug()}/dividends`,
  '/v1/events?limit=5',
  '/v1/health',
];

async function expectAllUnavailable(paths: string[], at = base): Promise<void> {
  for (const path of paths) {
    const response = await get(at, path);
    const body = expectProblem(response, 503, 'upstream-unavailable');
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(body.instance).toBe(new URL(path, 'http://x').pathname);
    expectNoLeak(response.text, [UPSTREAM_SECRET]);
  }
}

/**
 * expectAllUnavailable for each path at once: requests to a hanging upstream each wait out their
 * timeouts, together rather than one after another.
 */
async function expectAllUnavailableAtOnce(paths: string[], at: string): Promise<void> {
  await Promise.all(paths.map((path) => expectAllUnavailable([path], at)));
}

async function expectAllOk(paths: string[], at = base): Promise<void> {
  for (const path of paths) {
    const response = await get(at, path);
    expect(response.status, `${path}: ${response.text.slice(0, 200)}`).toBe(200);
  }
}

describe('subgraph faults', () => {
  it('answers 503 while the subgraph is down and recovers on the next request', async () => {
    subgraph.set({ kind: 'down' });
    await expectAllUnavailable(SUBGRAPH_PATHS());
    subgraph.set({ kind: 'pass' });
    await expectAllOk(SUBGRAPH_PATHS());
  });

  it('gives up on a subgraph slower than the timeout with 503, then recovers', async () => {
    const at = await serviceWaitingLessFor(['subgraph']);
    subgraph.set({ kind: 'hang' });
    await expectAllUnavailableAtOnce(['/v1/funds', `/v1/funds/${fundSlug()}/nav`], at);
    subgraph.set({ kind: 'pass' });
    await expectAllOk(['/v1/funds', `/v1/funds/${fundSlug()}/nav`], at);
  }, 120_000);

  it('answers 503 without the upstream message when the subgraph answers GraphQL errors', async () => {
    subgraph.set({
      kind: 'answer',
      status: 200,
      body: JSON.stringify({ errors: [{ message: `store error: ${UPSTREAM_SECRET}` }] }),
    });
    await expectAllUnavailable(SUBGRAPH_PATHS());
    subgraph.set({ kind: 'answer', status: 500, body: UPSTREAM_SECRET, contentType: 'text/plain' });
    await expectAllUnavailable(['/v1/funds']);
    subgraph.set({ kind: 'pass' });
    await expectAllOk(SUBGRAPH_PATHS());
  });

  it('answers 503 when the subgraph answers something that is not GraphQL', async () => {
    for (const body of [
      `<html><body>502 Bad Gateway ${UPSTREAM_SECRET}</body></html>`,
      '{"data": ',
      'null',
      '{"data": null}',
      '{"data": {}}',
    ]) {
      subgraph.set({ kind: 'answer', status: 200, body, contentType: 'application/json' });
      await expectAllUnavailable(['/v1/funds', `/v1/funds/${fundSlug()}/nav`]);
    }
    subgraph.set({ kind: 'pass' });
    await expectAllOk(['/v1/funds']);
  });

  it('answers 503, not a wrong body, when the subgraph answers data of the wrong shape', async () => {
    const wrongShapes: ((data: Record<string, unknown>) => void)[] = [
      (d) => (d.funds = 'not a list'),
      (d) => (d.funds = [{ id: 7 }]),
      (d) => (d.funds = null),
      (d) => delete d.funds,
      (d) => (d.protocolEvents = [{ unexpected: true }]),
    ];
    for (const damage of wrongShapes) {
      subgraph.set({
        kind: 'rewrite',
        rewrite: (json) => {
          const data = (json as { data: Record<string, unknown> }).data;
          damage(data);
          return json;
        },
      });
      for (const path of ['/v1/funds', '/v1/events?limit=3']) {
        const response = await get(base, path);
        // either the damage did not touch this query (200) or it is reported as the upstream's fault
        if (response.status !== 200) expectProblem(response, 503, 'upstream-unavailable');
      }
    }
    subgraph.set({ kind: 'pass' });
    await expectAllOk(['/v1/funds', '/v1/events?limit=3']);
  });

  it('reports a subgraph lagging far behind the chain in health, and catches up when it does', async () => {
    const live = await get(base, '/v1/health');
    const liveBody = JSON.parse(live.text) as { indexer: { maxIndexedBlock: number } };
    const head = liveBody.indexer.maxIndexedBlock;
    expect(head).toBeGreaterThan(20);
    subgraph.set({
      kind: 'rewrite',
      rewrite: (json) => {
        const meta = (json as { data: { _meta: { block: { number: number; timestamp: number } } } }).data
          ._meta;
        meta.block = { number: 3, timestamp: 1_000_000 };
        return json;
      },
    });
    const lagging = await get(base, '/v1/health');
    expect(lagging.status).toBe(200);
    const body = JSON.parse(lagging.text) as {
      status: string;
      indexer: { maxIndexedBlock: number; lastUpdatedAt: string };
    };
    expect(body.status).toBe('degraded');
    expect(body.indexer.maxIndexedBlock).toBe(3);
    expect(body.indexer.lastUpdatedAt).toBe(new Date(1_000_000_000).toISOString());
    expect(Number(lagging.headers.get('x-indexed-block-lag'))).toBeGreaterThanOrEqual(head - 3);
    expect(Number(lagging.headers.get('x-data-lag-seconds'))).toBeGreaterThan(1_000_000_000);
    // GraphQL clients get the lag in blocks directly
    const graphql = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ health { indexer { maxIndexedBlock chainHeadBlock lagBlocks } } }' }),
    });
    const indexer = ((await graphql.json()) as { data: { health: { indexer: Record<string, number> } } }).data
      .health.indexer;
    expect(indexer.maxIndexedBlock).toBe(3);
    expect(indexer.lagBlocks).toBe(indexer.chainHeadBlock! - 3);
    subgraph.set({ kind: 'pass' });
    const caughtUp = JSON.parse((await get(base, '/v1/health')).text) as typeof body;
    expect(caughtUp.indexer.maxIndexedBlock).toBeGreaterThanOrEqual(head);
    expect(caughtUp.status).toBe('ok');
  });
});

/** The top-level fields of a GraphQL document the gateway sent (no fragments, no variables). */
function topLevelFields(document: string): FieldNode[] {
  const operation = parse(document).definitions[0] as OperationDefinitionNode;
  return operation.selectionSet.selections as FieldNode[];
}

/** A field's argument as written in the document, or undefined. */
function argument(field: FieldNode, name: string): string | undefined {
  const found = field.arguments?.find((arg) => arg.name.value === name);
  return found && print(found.value);
}

interface SubgraphAnswer {
  data: Record<string, unknown> & { _meta?: { hasIndexingErrors: boolean } };
  errors?: { message: string }[];
}

/**
 * graph-node's answer for a subgraph with a deterministic indexing error at or before the
 * queried block, made from the indexer's clean answer to the same document, by graph-node's
 * rules (graphql/src/execution/query.rs `block_constraint`, store/resolver.rs `post_process`):
 * consecutive top-level fields with the same `block` argument run together, under `deny` unless
 * every one of them says `subgraphError: allow`; a group asking for more than `_meta` gets an
 * `indexing_error`, and under `deny` keeps nothing but its `_meta`.
 */
function withIndexingErrors(json: unknown, request: string): unknown {
  const answer = json as SubgraphAnswer;
  const groups: FieldNode[][] = [];
  let lastBlock: string | undefined;
  for (const field of topLevelFields((JSON.parse(request) as { query: string }).query)) {
    const block = argument(field, 'block') ?? 'latest';
    if (groups.length > 0 && block === lastBlock) groups.at(-1)!.push(field);
    else groups.push([field]);
    lastBlock = block;
  }
  for (const group of groups) {
    const entityFields = group.filter((field) => field.name.value !== '_meta');
    if (entityFields.length === 0) continue;
    answer.errors = [{ message: 'indexing_error' }];
    if (group.every((field) => argument(field, 'subgraphError') === 'allow')) continue;
    for (const field of entityFields) delete answer.data[(field.alias ?? field.name).value];
  }
  if (answer.data._meta) answer.data._meta.hasIndexingErrors = true;
  return answer;
}

describe('subgraph indexing errors', () => {
  const indexedPaths = () => ['/v1/funds', `/v1/funds/${fundSlug()}/nav/history`];

  async function health(): Promise<{ rest: { status: string }; indexer: { hasIndexingErrors: boolean } }> {
    const rest = await get(base, '/v1/health');
    expect(rest.status, rest.text.slice(0, 200)).toBe(200);
    // the REST health record has no hasIndexingErrors; GraphQL clients read it from the same service
    const graphql = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ health { indexer { hasIndexingErrors } } }' }),
    });
    const { data } = (await graphql.json()) as {
      data: { health: { indexer: { hasIndexingErrors: boolean } } };
    };
    return { rest: JSON.parse(rest.text) as { status: string }, indexer: data.health.indexer };
  }

  it('serves the indexed data of a subgraph with indexing errors and says so in health', async () => {
    const clean = new Map<string, unknown>();
    for (const path of indexedPaths()) clean.set(path, JSON.parse((await get(base, path)).text));
    expect(clean.get('/v1/funds')).toMatchObject({ count: stack.devnet.ledger.funds.length });
    expect(await health()).toMatchObject({ rest: { status: 'ok' }, indexer: { hasIndexingErrors: false } });

    subgraph.set({ kind: 'rewrite', rewrite: withIndexingErrors });
    for (const path of indexedPaths()) {
      const response = await get(base, path);
      expect(response.status, `${path}: ${response.text.slice(0, 200)}`).toBe(200);
      expect(JSON.parse(response.text)).toEqual(clean.get(path));
    }
    expect(await health()).toMatchObject({
      rest: { status: 'degraded' },
      indexer: { hasIndexingErrors: true },
    });

    subgraph.set({ kind: 'pass' });
    expect(await health()).toMatchObject({ rest: { status: 'ok' }, indexer: { hasIndexingErrors: false } });
  });

  it('answers 503 when the subgraph withholds its data for indexing errors or adds other errors', async () => {
    // what graph-node answers to a query left at `subgraphError: deny`
    subgraph.set({
      kind: 'rewrite',
      rewrite: (json) => {
        const { _meta } = (json as SubgraphAnswer).data;
        return {
          data: { _meta: { ..._meta, hasIndexingErrors: true } },
          errors: [{ message: 'indexing_error' }],
        };
      },
    });
    await expectAllUnavailable(SUBGRAPH_PATHS());
    subgraph.set({
      kind: 'rewrite',
      rewrite: (json, request) => {
        const answer = withIndexingErrors(json, request) as SubgraphAnswer;
        answer.errors!.push({ message: `store error: ${UPSTREAM_SECRET}` });
        return answer;
      },
    });
    await expectAllUnavailable(SUBGRAPH_PATHS());
    subgraph.set({ kind: 'pass' });
    await expectAllOk(SUBGRAPH_PATHS());
  });

  it('asks for every entity collection with subgraphError: allow, and for _meta apart from them', async () => {
    const round = firstRound();
    const before = subgraph.graphqlDocuments().length;
    await expectAllOk([...SUBGRAPH_PATHS(), `/v1/funds/${round.fund}/dividends/${round.epoch}`]);
    const documents = subgraph.graphqlDocuments().slice(before);
    const asked = new Set<string>();
    for (const document of documents) {
      const fields = topLevelFields(document);
      const meta = fields.filter((field) => field.name.value === '_meta');
      const entityFields = fields.filter((field) => field.name.value !== '_meta');
      expect(meta, document).toHaveLength(1);
      expect(entityFields.length, document).toBeGreaterThan(0);
      for (const field of entityFields) {
        asked.add(field.name.value);
        expect(argument(field, 'subgraphError'), document).toBe('allow');
        // a block of its own keeps _meta out of the entity fields' error policy
        expect(argument(meta[0]!, 'block'), document).not.toBe(argument(field, 'block'));
      }
    }
    expect([...asked].sort()).toEqual([
      'dividendRounds',
      'funds',
      'navRecords',
      'protocolEvents',
      'settlements',
    ]);
  });
});

describe('chain RPC faults', () => {
  const livePaths = () => [`/v1/funds/${fundSlug()}/allocations`, `/v1/funds/${fundSlug()}/reserve`];

  async function expectHealthDegraded(at = base): Promise<void> {
    const health = await get(at, '/v1/health');
    expect(health.status).toBe(200);
    const body = JSON.parse(health.text) as { status: string; pausedModules: string[] };
    // the indexed view is still served, and health says live reads are failing
    expect(body.status).toBe('degraded');
    expectNoLeak(health.text, [UPSTREAM_SECRET]);
  }

  it('answers 503 for live reads and degraded health while the RPC is down, then recovers', async () => {
    rpc.set({ kind: 'down' });
    await expectAllUnavailable(livePaths());
    await expectHealthDegraded();
    rpc.set({ kind: 'pass' });
    await expectAllOk(livePaths());
    expect(JSON.parse((await get(base, '/v1/health')).text).status).toBe('ok');
  });

  it('gives up on an RPC slower than the timeout with 503, then recovers', async () => {
    const at = await serviceWaitingLessFor(['chain']);
    rpc.set({ kind: 'hang' });
    await expectAllUnavailableAtOnce(livePaths(), at);
    await expectHealthDegraded(at);
    rpc.set({ kind: 'pass' });
    await expectAllOk(livePaths(), at);
  }, 120_000);

  it('answers indexed data without waiting for an RPC that just failed, leaving out the lag it cannot tell until the RPC answers again', async () => {
    const navPath = `/v1/funds/${fundSlug()}/nav`;
    rpc.set({ kind: 'down' });
    await expectAllUnavailable(livePaths());
    // an RPC that now answers nothing would hold a request TIMEOUT_MS for its chain head
    rpc.set({ kind: 'hang' });
    const nav = await get(base, navPath, { signal: AbortSignal.timeout(TIMEOUT_MS / 2) });
    expect(nav.status, nav.text.slice(0, 200)).toBe(200);
    expect(nav.headers.get('x-indexed-block')).toMatch(/^\d+$/);
    expect(nav.headers.get('x-indexed-block-lag')).toBeNull();
    rpc.set({ kind: 'pass' });
    await expectAllOk(livePaths());
    expect((await get(base, navPath)).headers.get('x-indexed-block-lag')).toMatch(/^\d+$/);
  });

  it('answers 503 when the RPC answers JSON-RPC errors or garbage', async () => {
    for (const fault of [
      {
        status: 200,
        body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"${UPSTREAM_SECRET}"}}`,
      },
      { status: 200, body: `not json ${UPSTREAM_SECRET}` },
      { status: 429, body: `{"error":"${UPSTREAM_SECRET}"}` },
    ]) {
      rpc.set({ kind: 'answer', ...fault });
      await expectAllUnavailable(livePaths());
    }
    rpc.set({ kind: 'pass' });
    await expectAllOk(livePaths());
  });
});
