// The chain source behind a real misbehaving server: a read the node does not answer within
// RPC_TIMEOUT_MS is sent once, so the client's 503 comes after one timeout, not two; one the node
// refused with a 5xx is still sent again once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../gateway/errors.ts';
import { createChainLoaders, createChainSource } from '../../gateway/sources/chain.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { closedPort } from '../reliability/servers/ports.ts';

let proxy: FaultProxy;
beforeAll(async () => {
  // the target is never reached: every fault here answers (or not) by itself
  proxy = await startFaultProxy(`http://127.0.0.1:${await closedPort()}`);
});
afterAll(() => proxy.close());

async function failedHeadRead(): Promise<unknown> {
  const source = createChainSource({ rpcUrl: proxy.url, timeoutMs: 300, maxBatch: 10 });
  return createChainLoaders(source)
    .headBlock()
    .then(
      () => null,
      (error: unknown) => error,
    );
}

describe('the chain source', () => {
  it('sends a read that timed out only once', async () => {
    proxy.set({ kind: 'hang' });
    const before = proxy.requests;
    const error = await failedHeadRead();
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('UPSTREAM_UNAVAILABLE');
    expect(proxy.requests - before).toBe(1);
  });

  it('sends a read the node answered with a 503 once more', async () => {
    proxy.set({ kind: 'answer', status: 503, body: 'busy', contentType: 'text/plain' });
    const before = proxy.requests;
    const error = await failedHeadRead();
    expect((error as GatewayError).code).toBe('UPSTREAM_UNAVAILABLE');
    expect(proxy.requests - before).toBe(2);
  });
});
