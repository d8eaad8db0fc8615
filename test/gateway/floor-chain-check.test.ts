// The subgraph source's floor (the newest block it has served, which no query reads below) when every
// query node that answers is behind it, told the chain RPC: the harness's subgraph behind a
// load-balanced front whose node B is stuck some blocks back (load-balanced-subgraph.ts). A floor
// block the chain holds stands, whatever the nodes answer; so does one the chain RPC has not reached
// yet, which is an RPC node behind as much as a reorg to a shorter chain. (That a block a reorg took
// away stops being the floor is tested on a chain that reorgs: test/rest/reorg-freshness.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChainSource } from '../../gateway/sources/chain.ts';
import { createSubgraphClient, NodesBehindError } from '../../gateway/sources/subgraph.ts';
import {
  startLoadBalancedSubgraph,
  startNodeBehind,
  type LoadBalancedSubgraph,
} from '../rest/load-balanced-subgraph.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { indexedStack, type IndexedStack } from '../harness/stack.ts';

let stack: IndexedStack;
let balancer: LoadBalancedSubgraph;
let nodeB: { queryUrl: string; stop(): Promise<void> };
/** the block node B stays at */
let behindAt: number;
/** the chain RPC, which answers as a node some blocks behind once told to (see rpcAt) */
let rpc: FaultProxy;

beforeAll(async () => {
  stack = await indexedStack();
  behindAt = stack.devnet.ledger.endBlock - 10;
  nodeB = await startNodeBehind(stack.devnet, behindAt);
  balancer = await startLoadBalancedSubgraph({ A: stack.subgraphUrl, B: nodeB.queryUrl });
  rpc = await startFaultProxy(stack.devnet.rpcUrl);
}, 120_000);

afterAll(async () => {
  await balancer?.close();
  await nodeB?.stop();
  await rpc?.close();
});

/** Makes the chain RPC a node whose head is block `head`: later blocks are unknown to it. */
async function rpcAt(head: number): Promise<void> {
  const block = await fetch(stack.devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getBlockByNumber',
      params: [`0x${head.toString(16)}`, false],
    }),
  }).then(async (response) => ((await response.json()) as { result: unknown }).result);
  rpc.set({
    kind: 'rewrite',
    rewrite: (answer, request) => {
      const { method, params } = JSON.parse(request) as { method: string; params: [string, boolean] };
      if (method !== 'eth_getBlockByNumber') return answer;
      if (params[0] === 'latest') return { ...(answer as object), result: block };
      return Number(params[0]) > head ? { ...(answer as object), result: null } : answer;
    },
  });
}

/** A subgraph source of its own (no block seen yet) over the balancer, told the chain through `rpc`. */
function subgraphSource() {
  const chain = createChainSource({ rpcUrl: rpc.url, timeoutMs: 10_000, maxBatch: 200 });
  return createSubgraphClient({ url: balancer.url, timeoutMs: 10_000, maxBatch: 1000 }, chain);
}

const behindSeen = (block: number) =>
  `The subgraph's query nodes are behind: the node that answered has not indexed block ${block}, the newest this service has read, and older data is not served in its place. Retry in a few seconds.`;

/** What indexedBlock() failed with. */
async function refusal(source: ReturnType<typeof subgraphSource>): Promise<NodesBehindError> {
  const error = await source.indexedBlock().then(
    () => null,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(NodesBehindError);
  return error as NodesBehindError;
}

describe('the floor when the query nodes are behind it', () => {
  it('stands at a block the chain holds, refused as nodes behind', async () => {
    rpc.set({ kind: 'pass' });
    const source = subgraphSource();
    balancer.route(() => 'A');
    expect((await source.indexedBlock()).number).toBe(stack.devnet.ledger.endBlock);
    balancer.route(() => 'B');
    const error = await refusal(source);
    expect(error.message).toBe(behindSeen(stack.devnet.ledger.endBlock));
    expect(error.onChain).toBe(true);
    balancer.route(() => 'A');
    expect((await source.indexedBlock()).number).toBe(stack.devnet.ledger.endBlock);
  });

  it('stands at a block the chain RPC has not reached while the nodes are not at its head either', async () => {
    rpc.set({ kind: 'pass' });
    const source = subgraphSource();
    balancer.route(() => 'A');
    await source.indexedBlock();
    await rpcAt(behindAt - 1);
    try {
      balancer.route(() => 'B');
      const error = await refusal(source);
      expect(error.message).toBe(behindSeen(stack.devnet.ledger.endBlock));
      expect(error.onChain).toBe(false);
    } finally {
      rpc.set({ kind: 'pass' });
    }
  });
});
