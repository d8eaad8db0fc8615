// The REST cache's ages and check intervals against a step of the wall clock: NTP, an operator or a
// resumed VM can set Date.now() back, and the cache measured both with it, so after a step back of
// an hour every cached body and every watch reading looked younger than its interval for an hour:
// /v1/health answered the old state with Age 0 while the subgraph had moved. The service runs on
// loopback over the harness's indexer, behind a proxy (load-balanced-subgraph.ts, one node) that
// can change what the subgraph says of itself; the wall clock is stepped back in this process,
// where the REST app runs.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { indexedStack, listenRest, testGateway } from '../harness/stack.ts';
import { startLoadBalancedSubgraph, type LoadBalancedSubgraph } from './load-balanced-subgraph.ts';

const HOUR_MS = 3_600_000;

let subgraph: LoadBalancedSubgraph;
let base: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const stack = await indexedStack();
  subgraph = await startLoadBalancedSubgraph({ A: stack.subgraphUrl, B: stack.subgraphUrl });
  const gateway = testGateway(stack, { subgraph: { url: subgraph.url, timeoutMs: 10_000, maxBatch: 1000 } });
  // every cache hit may ask the subgraph's state: the test waits out no interval
  ({ url: base, close } = await listenRest(gateway, { responseCacheEntries: 100, blockCheckMs: 0 }));
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
  subgraph.rewrite(undefined);
});

afterAll(async () => {
  await close?.();
  await subgraph?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function health(): Promise<any> {
  const response = await fetch(`${base}/v1/health`);
  expect(response.status).toBe(200);
  return response.json();
}

/** The subgraph's answers from now on say it has indexing errors, as graph-node's `_meta` does. */
function subgraphReportsIndexingErrors(): void {
  subgraph.rewrite((answer) => {
    const meta = (answer as { data?: { _meta?: { hasIndexingErrors: boolean } } }).data?._meta;
    if (meta) meta.hasIndexingErrors = true;
    return answer;
  });
}

describe('the REST cache after the wall clock steps back', () => {
  it('rebuilds cached health as soon as the subgraph reports indexing errors, an hour of wall clock earlier', async () => {
    const before = await health();
    expect(before.indexer.hasIndexingErrors).toBe(false);
    const wallClock = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => wallClock() - HOUR_MS);
    subgraphReportsIndexingErrors();
    const after = await health();
    expect(after.indexer.hasIndexingErrors).toBe(true);
    expect(after.status).toBe('degraded');
  });
});
