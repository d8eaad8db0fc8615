// The service over a load-balanced subgraph whose query nodes are at different heights (node A at
// the head, node B some blocks behind, see load-balanced-subgraph.ts), as graph-node serves one at
// scale. Cursor paging neither skips nor repeats when the next page lands on a node behind the
// first page's block, nor does a dividends cursor page another fund; a service that has served a
// block never answers from an older one (a node behind is asked again, then 503), whether the data
// is read fresh or a cached body is checked against the subgraph's block; and one /graphql answer
// reads every part at or past the same block. A cursor from a block the chain has not reached is no
// such case: no node will ever reach it, and it is refused as bad input rather than retried.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dividendsCursor, encodeCursor } from '../../gateway/inputs.ts';
import { indexedStack, type IndexedStack, listenRest, testGateway } from '../harness/stack.ts';
import {
  startLoadBalancedSubgraph,
  startNodeBehind,
  type LoadBalancedSubgraph,
  type QueryNode,
} from './load-balanced-subgraph.ts';

let stack: IndexedStack;
let balancer: LoadBalancedSubgraph;
let nodeB: { queryUrl: string; stop(): Promise<void> };
/** the block node B stays at: just before the second-newest dividend round of the example fund */
let behindAt: number;
const closers: (() => Promise<void>)[] = [];

const FUND = 'harbor-stable-yield';
/** the block node A (the harness indexer) holds */
const head = () => stack.devnet.ledger.endBlock;
const roundsNewestFirst = () =>
  stack.devnet.ledger.rounds.filter((r) => r.fund === FUND).sort((a, b) => b.epoch - a.epoch);

beforeAll(async () => {
  stack = await indexedStack();
  behindAt = roundsNewestFirst()[1]!.blockNumber - 1;
  nodeB = await startNodeBehind(stack.devnet, behindAt);
  balancer = await startLoadBalancedSubgraph({ A: stack.subgraphUrl, B: nodeB.queryUrl });
}, 120_000);

afterAll(async () => {
  for (const close of closers) await close();
  await balancer?.close();
  await nodeB?.stop();
});

/**
 * One replica of the service over the balancer: a process of its own, which has seen no block yet.
 * `withoutChain`: it has no chain RPC; `logged`: where its errors go.
 */
async function replica(
  options: { cached?: boolean; withoutChain?: boolean; logged?: unknown[] } = {},
): Promise<string> {
  const gateway = testGateway(stack, {
    subgraph: { url: balancer.url, timeoutMs: 10_000, maxBatch: 1000 },
    ...(options.withoutChain ? { chain: undefined } : {}),
  });
  const { url, close } = await listenRest(gateway, {
    // with the cache, every hit asks for the subgraph's block: the test need not wait out an interval
    responseCacheEntries: options.cached ? 100 : 0,
    blockCheckMs: 0,
    logError: (error) => options.logged?.push(error),
  });
  closers.push(close);
  return url;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function getJson(base: string, path: string): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${base}${path}`);
  return { status: response.status, body: await response.json(), headers: response.headers };
}

const onlyA = (): QueryNode => 'A';
const onlyB = (): QueryNode => 'B';
/** the first try of each query lands on node B, the second on node A */
const firstTryOnB = (tries: number): QueryNode => (tries === 0 ? 'B' : 'A');

/** A 503 upstream-unavailable problem with exactly this detail. */
function expectNodesBehind(
  answer: { status: number; body: { type: string; detail: string } },
  detail: string,
) {
  expect(answer.status).toBe(503);
  expect(answer.body.type).toMatch(/\/problems\/upstream-unavailable$/);
  expect(answer.body.detail).toBe(detail);
}

const behindCursor = (block: number) =>
  `The subgraph's query nodes are behind: the node that answered has not indexed block ${block}, which the cursor's page was read at, and older data is not served in its place. Retry in a few seconds with the same cursor.`;
const behindSeen = (block: number) =>
  `The subgraph's query nodes are behind: the node that answered has not indexed block ${block}, the newest this service has read, and older data is not served in its place. Retry in a few seconds.`;

describe('events cursor paging across query nodes', () => {
  /** page 1 from node A on one replica, and page 2 as node A alone answers it */
  async function pagesFromA(): Promise<{ cursor: string; lastBlock: number; page2: unknown }> {
    balancer.route(onlyA);
    const first = await replica();
    const page1 = await getJson(first, '/v1/events?limit=20');
    const cursor = page1.body.nextCursor as string;
    const page2 = await getJson(first, `/v1/events?limit=20&cursor=${cursor}`);
    return { cursor, lastBlock: page1.body.items.at(-1).blockNumber, page2: page2.body };
  }

  it('serves page 2 from a node that has the cursor block when another replica asked a node behind it first', async () => {
    const { cursor, lastBlock, page2 } = await pagesFromA();
    expect(lastBlock).toBeGreaterThan(behindAt);
    const second = await replica();
    balancer.route(firstTryOnB);
    const answered = balancer.answeredBy.length;
    const response = await getJson(second, `/v1/events?limit=20&cursor=${cursor}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(page2);
    expect(balancer.answeredBy.slice(answered)).toEqual(['B', 'A']);
  });

  it('answers 503 saying the nodes are behind the cursor when every try reaches a node behind it', async () => {
    const { cursor, lastBlock } = await pagesFromA();
    const second = await replica();
    balancer.route(onlyB);
    expectNodesBehind(await getJson(second, `/v1/events?limit=20&cursor=${cursor}`), behindCursor(lastBlock));
  });
});

describe('dividends cursor paging across query nodes', () => {
  async function pagesFromA(): Promise<{ cursor: string; page2: unknown }> {
    balancer.route(onlyA);
    const first = await replica();
    const page1 = await getJson(first, `/v1/funds/${FUND}/dividends?limit=1`);
    expect(page1.body.items.map((r: { epoch: number }) => r.epoch)).toEqual([roundsNewestFirst()[0]!.epoch]);
    const cursor = page1.body.nextCursor as string;
    const page2 = await getJson(first, `/v1/funds/${FUND}/dividends?limit=1&cursor=${cursor}`);
    expect(page2.body.items.map((r: { epoch: number }) => r.epoch)).toEqual([roundsNewestFirst()[1]!.epoch]);
    return { cursor, page2: page2.body };
  }

  it('serves page 2 from a node that has the block page 1 was read at, not the round after the one it lacks', async () => {
    const { cursor, page2 } = await pagesFromA();
    const second = await replica();
    balancer.route(firstTryOnB);
    const response = await getJson(second, `/v1/funds/${FUND}/dividends?limit=1&cursor=${cursor}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(page2);
  });

  it('answers 503 saying the nodes are behind the cursor when every try reaches a node behind it', async () => {
    const { cursor } = await pagesFromA();
    const second = await replica();
    balancer.route(onlyB);
    expectNodesBehind(
      await getJson(second, `/v1/funds/${FUND}/dividends?limit=1&cursor=${cursor}`),
      behindCursor(head()),
    );
  });
});

describe('a cursor from a block past the chain head', () => {
  /** a block the devnet's chain has not reached */
  const beyondHead = 999_999;
  const vault = () => stack.registry.funds.find((f) => f.slug === FUND)!.vault;
  const pastHead = (head: number) =>
    `cursor continues from block ${beyondHead}, which the chain has not reached (its head is block ${head}), so it is no cursor this service returned. Start again from the first page: omit cursor.`;

  it('answers a dividends cursor from there with 400 asking to start again, and logs nothing', async () => {
    balancer.route(onlyA);
    const logged: unknown[] = [];
    const service = await replica({ logged });
    const cursor = dividendsCursor(vault(), { epoch: 180, block: beyondHead });
    const { status, body } = await getJson(service, `/v1/funds/${FUND}/dividends?cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      type: expect.stringMatching(/\/problems\/invalid-parameter$/),
      parameter: 'cursor',
      detail: pastHead(head()),
    });
    expect(logged).toEqual([]);
  });

  it('answers an events cursor from there with 400 asking to start again', async () => {
    balancer.route(onlyA);
    const service = await replica();
    const cursor = encodeCursor('e', BigInt(beyondHead) << 32n);
    const { status, body } = await getJson(service, `/v1/events?cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ parameter: 'cursor', detail: pastHead(head()) });
  });

  it('keeps the 503 of nodes behind where the service has no chain RPC to tell the head', async () => {
    balancer.route(onlyA);
    const service = await replica({ withoutChain: true });
    const cursor = dividendsCursor(vault(), { epoch: 180, block: beyondHead });
    expectNodesBehind(
      await getJson(service, `/v1/funds/${FUND}/dividends?cursor=${cursor}`),
      behindCursor(beyondHead),
    );
  });
});

describe('a replica that has served a block', () => {
  const roundPath = () => `/v1/funds/${FUND}/dividends/${roundsNewestFirst()[0]!.epoch}`;
  const paths = () => ['/v1/health', `/v1/funds/${FUND}/nav`, roundPath()];

  /** the bodies node A answers, less health's clock */
  async function bodiesFrom(base: string): Promise<unknown[]> {
    return Promise.all(
      paths().map(async (path) => {
        const { status, body } = await getJson(base, path);
        expect(status, path).toBe(200);
        return path === '/v1/health' ? { ...body, now: undefined } : body;
      }),
    );
  }

  it('answers from a node at its block when a query first reaches a node behind it, never with older data', async () => {
    balancer.route(onlyA);
    const service = await replica();
    const atHead = await bodiesFrom(service);
    expect((atHead[0] as { indexer: { maxIndexedBlock: number } }).indexer.maxIndexedBlock).toBe(head());
    balancer.route(firstTryOnB);
    expect(await bodiesFrom(service)).toEqual(atHead);
  });

  it('answers 503 saying the nodes are behind when every try reaches a node behind its block', async () => {
    balancer.route(onlyA);
    const service = await replica();
    await bodiesFrom(service);
    balancer.route(onlyB);
    for (const path of paths()) expectNodesBehind(await getJson(service, path), behindSeen(head()));
  });

  it('keeps serving a cached body built at its block when the subgraph is read from a node behind it', async () => {
    balancer.route(onlyA);
    const service = await replica({ cached: true });
    const path = `/v1/funds/${FUND}/nav`;
    const built = await getJson(service, path);
    balancer.route(onlyB);
    const cached = await getJson(service, path);
    expect(cached.status).toBe(200);
    expect(cached.body).toEqual(built.body);
    expect(cached.headers.get('x-indexed-block')).toBe(String(head()));
  });

  it('reads every part of one /graphql answer at or past its block', async () => {
    balancer.route(onlyA);
    const service = await replica();
    const query = '{ health { indexer { maxIndexedBlock } } events(limit: 1) { items { blockNumber } } }';
    const ask = async () =>
      (
        await fetch(`${service}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        })
      ).json();
    const atHead = await ask();
    expect(atHead.data.health.indexer.maxIndexedBlock).toBe(head());
    expect(atHead.data.events.items[0].blockNumber).toBeGreaterThan(behindAt);
    balancer.route(firstTryOnB);
    expect(await ask()).toEqual(atHead);
  });
});

describe('the indexing-errors flag of a cached health body', () => {
  it('outdates a cached health body once the subgraph reports indexing errors', async () => {
    balancer.route(onlyA);
    const service = await replica({ cached: true });
    expect((await getJson(service, '/v1/health')).body.status).toBe('ok');
    balancer.rewrite((answer) => {
      const { data } = answer as {
        data: Record<string, unknown> & { _meta: { hasIndexingErrors: boolean } };
      };
      data._meta.hasIndexingErrors = true;
      // graph-node adds `indexing_error` to an answer holding entity data; `_meta` alone gets none
      return Object.keys(data).length > 1 ? { data, errors: [{ message: 'indexing_error' }] } : { data };
    });
    try {
      const health = await getJson(service, '/v1/health');
      expect(health.body.status).toBe('degraded');
      expect(health.body.indexer.hasIndexingErrors).toBe(true);
    } finally {
      balancer.rewrite(undefined);
    }
  });
});
