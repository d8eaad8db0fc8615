// The subgraph source behind a real misbehaving server: a query the subgraph does not answer
// within SUBGRAPH_TIMEOUT_MS is asked once, so the client's 503 comes after one timeout, not two;
// one the subgraph refused with a 5xx is still asked again once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../gateway/errors.ts';
import { createSubgraphClient, Freshness } from '../../gateway/sources/subgraph.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { closedPort } from '../reliability/servers/ports.ts';

let proxy: FaultProxy;
beforeAll(async () => {
  // the target is never reached: every fault here answers (or not) by itself
  proxy = await startFaultProxy(`http://127.0.0.1:${await closedPort()}`);
});
afterAll(() => proxy.close());

async function failedQuery(): Promise<unknown> {
  const client = createSubgraphClient({ url: proxy.url, timeoutMs: 300, maxBatch: 10 });
  return client
    .query(() => 'funds { id }', new Freshness())
    .then(
      () => null,
      (error: unknown) => error,
    );
}

describe('the subgraph source', () => {
  it('asks a query that timed out only once', async () => {
    proxy.set({ kind: 'hang' });
    const before = proxy.requests;
    const error = await failedQuery();
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('UPSTREAM_UNAVAILABLE');
    expect(proxy.requests - before).toBe(1);
  });

  it('asks a query the subgraph answered with a 503 once more', async () => {
    proxy.set({ kind: 'answer', status: 503, body: 'busy' });
    const before = proxy.requests;
    const error = await failedQuery();
    expect((error as GatewayError).code).toBe('UPSTREAM_UNAVAILABLE');
    expect(proxy.requests - before).toBe(2);
  });
});
