// Which upstream failed, as /graphql tells it: an UPSTREAM_UNAVAILABLE error names it in
// `extensions.upstream` (gateway/errors.ts), so that a client can tell a subgraph outage from a
// chain RPC outage without parsing the message. The upstreams fail for real: fault proxies in front
// of the indexed devnet's subgraph and anvil's RPC, as in upstream-faults.test.ts, reset every
// connection.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { indexedStack, testGateway, type IndexedStack } from '../harness/stack.ts';
import { publicRestService } from './public-rest-service.ts';
import { startFaultProxy, type FaultProxy } from './servers/fault-proxy.ts';

const TIMEOUT_MS = 20_000;

let stack: IndexedStack;
let subgraph: FaultProxy;
let rpc: FaultProxy;
let service: { url: string; close(): Promise<void> };

beforeAll(async () => {
  stack = await indexedStack();
  [subgraph, rpc] = await Promise.all([
    startFaultProxy(stack.subgraphUrl),
    startFaultProxy(stack.devnet.rpcUrl),
  ]);
  // no response cache (publicRestService): every request reaches the upstreams
  service = await publicRestService(
    testGateway(stack, {
      subgraph: { url: subgraph.url, timeoutMs: TIMEOUT_MS, maxBatch: 1000 },
      chain: { rpcUrl: rpc.url, timeoutMs: TIMEOUT_MS, maxBatch: 200 },
    }),
  );
});

afterEach(() => {
  subgraph.set({ kind: 'pass' });
  rpc.set({ kind: 'pass' });
});

afterAll(async () => {
  await service?.close();
  await Promise.all([subgraph?.close(), rpc?.close()]);
});

async function postQuery(query: string): Promise<{ data?: unknown; errors?: unknown[] }> {
  const response = await fetch(`${service.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { data?: unknown; errors?: unknown[] };
}

describe('the upstream named by an UPSTREAM_UNAVAILABLE error on /graphql', () => {
  it("is 'subgraph' while the subgraph is down", async () => {
    subgraph.set({ kind: 'down' });
    expect(await postQuery('{ events(limit: 1) { nextCursor } }')).toEqual({
      data: { events: null },
      errors: [
        {
          message: 'The subgraph is unavailable; retry later.',
          locations: [{ line: 1, column: 3 }],
          path: ['events'],
          extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: 'subgraph' },
        },
      ],
    });
  });

  it("is 'chain RPC' while the chain RPC is down", async () => {
    rpc.set({ kind: 'down' });
    expect(await postQuery('{ fund(slug: "harbor-stable-yield") { slug reserve { balance } } }')).toEqual({
      data: { fund: { slug: 'harbor-stable-yield', reserve: null } },
      errors: [
        {
          message: 'The chain RPC is unavailable; retry later.',
          locations: [{ line: 1, column: 44 }],
          path: ['fund', 'reserve'],
          extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: 'chain RPC' },
        },
      ],
    });
  });
});
