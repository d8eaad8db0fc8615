// The lag at which health turns degraded: only past HEALTH_MAX_LAG_BLOCKS blocks behind the chain
// head, as README and the health status's description say, so a lag of exactly that many blocks is
// still ok; and as far ahead of the head the chain RPC reports, the lag then negative. The subgraph lags by a chosen number of blocks: a fault proxy in front of the indexed
// devnet's subgraph rewrites the block its _meta answers with, as in upstream-faults.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexedStack, testGateway, type IndexedStack } from '../harness/stack.ts';
import { publicRestService } from './public-rest-service.ts';
import { get } from './problems.ts';
import { startFaultProxy, type FaultProxy } from './servers/fault-proxy.ts';

/** the service's HEALTH_MAX_LAG_BLOCKS, other than the default so that it is this value that counts */
const MAX_LAG_BLOCKS = 7;

let stack: IndexedStack;
let subgraph: FaultProxy;
let service: { url: string; close(): Promise<void> };

beforeAll(async () => {
  stack = await indexedStack();
  subgraph = await startFaultProxy(stack.subgraphUrl);
  // no response cache (publicRestService): every health request asks the subgraph again
  service = await publicRestService(
    testGateway(stack, {
      subgraph: { url: subgraph.url, timeoutMs: 20_000, maxBatch: 1000 },
      healthMaxLagBlocks: MAX_LAG_BLOCKS,
    }),
  );
});

afterAll(async () => {
  await service?.close();
  await subgraph?.close();
});

interface Health {
  status: string;
  indexer: { maxIndexedBlock: number; chainHeadBlock: number; lagBlocks: number };
}

async function health(): Promise<Health> {
  const response = await get(service.url, '/v1/health');
  expect(response.status, response.text.slice(0, 200)).toBe(200);
  return JSON.parse(response.text) as Health;
}

/** Health while the subgraph answers that it has indexed `lag` blocks less than the chain head. */
async function healthLagging(lag: number): Promise<Health> {
  subgraph.set({ kind: 'pass' });
  const head = (await health()).indexer.chainHeadBlock;
  subgraph.set({
    kind: 'rewrite',
    rewrite: (json) => {
      const meta = (json as { data?: { _meta?: { block: { number: number } } } }).data?._meta;
      if (meta) meta.block.number = head - lag;
      return json;
    },
  });
  return health();
}

describe('health at the lag limit', () => {
  it('is ok at a lag of exactly HEALTH_MAX_LAG_BLOCKS blocks', async () => {
    const { status, indexer } = await healthLagging(MAX_LAG_BLOCKS);
    expect(indexer.lagBlocks).toBe(MAX_LAG_BLOCKS);
    expect(status).toBe('ok');
  });

  it('is degraded at a lag of one block more', async () => {
    const { status, indexer } = await healthLagging(MAX_LAG_BLOCKS + 1);
    expect(indexer.lagBlocks).toBe(MAX_LAG_BLOCKS + 1);
    expect(status).toBe('degraded');
  });

  // last: the subgraph's answers then name a block the chain does not have, which the service remembers
  it('is degraded, its lag negative, with the index that many blocks and one more ahead of the chain head', async () => {
    const { status, indexer } = await healthLagging(-(MAX_LAG_BLOCKS + 1));
    expect(indexer.lagBlocks).toBe(-(MAX_LAG_BLOCKS + 1));
    expect(status).toBe('degraded');
  });
});
