// The REST cache after a redeploy under the same name: graph-node switches /subgraphs/name/… to
// the new deployment, which re-indexes from its start block; on a quiet chain it comes back to the
// very block the cached bodies reflect, with data its changed mapping computed differently. Bodies
// built from the old deployment were served, and revalidated with 304, for their tier's lifetime
// (300 s for NAV history) while /graphql answered the new data. The service runs on loopback over
// the harness's indexer, behind a proxy (load-balanced-subgraph.ts, one node) that answers as the
// new deployment would: another `_meta.deployment` at the same block, NAV records' navPerShare
// doubled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexedStack, type IndexedStack, listenRest, testGateway } from '../harness/stack.ts';
import { startLoadBalancedSubgraph, type LoadBalancedSubgraph } from './load-balanced-subgraph.ts';

const HISTORY = '/v1/funds/harbor-stable-yield/nav/history?limit=3';
const NEW_DEPLOYMENT = 'QmNewDeploymentOfTheSameNameXXXXXXXXXXXXXXXXXX';

let stack: IndexedStack;
let subgraph: LoadBalancedSubgraph;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  stack = await indexedStack();
  subgraph = await startLoadBalancedSubgraph({ A: stack.subgraphUrl, B: stack.subgraphUrl });
}, 120_000);

afterAll(async () => {
  for (const close of closers) await close();
  await subgraph?.close();
});

/** A REST service over the proxy; `cached`: with the server cache, each hit checking the subgraph. */
async function service(cached: boolean): Promise<string> {
  const gateway = testGateway(stack, { subgraph: { url: subgraph.url, timeoutMs: 10_000, maxBatch: 1000 } });
  const { url, close } = await listenRest(gateway, {
    responseCacheEntries: cached ? 100 : 0,
    blockCheckMs: 0,
  });
  closers.push(close);
  return url;
}

/** From now on the subgraph answers as the new deployment: its id in `_meta`, navPerShare doubled. */
function answerAsNewDeployment(): void {
  subgraph.rewrite((answer) => {
    const data = (answer as { data?: Record<string, unknown> }).data;
    const meta = data?._meta as { deployment: string } | undefined;
    if (meta) meta.deployment = NEW_DEPLOYMENT;
    for (const record of (data?.navRecords as { navPerShare: string }[] | undefined) ?? [])
      record.navPerShare = String(BigInt(record.navPerShare) * 2n);
    return answer;
  });
}

describe('the REST cache after a redeploy that reached the same block', () => {
  it('answers the new deployment’s data in place of a body cached from the old one, not 304', async () => {
    const cachedService = await service(true);
    const before = await fetch(`${cachedService}${HISTORY}`);
    expect(before.status).toBe(200);
    const oldBody = await before.json();
    const oldBlock = before.headers.get('x-indexed-block');

    answerAsNewDeployment();
    const expected = await (await fetch(`${await service(false)}${HISTORY}`)).json();
    expect(expected).not.toEqual(oldBody);

    const after = await fetch(`${cachedService}${HISTORY}`, {
      headers: { 'If-None-Match': before.headers.get('etag')! },
    });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-indexed-block')).toBe(oldBlock);
    expect(await after.json()).toEqual(expected);
  });
});
