// What the REST service answers while the chain reorgs and moves under it, on a private devnet
// (own anvil, deployment, small scenario and indexer) with the server cache on and every hit
// checking the blocks: a reorg to a shorter chain leaves neither orphaned data served (nor 304'd)
// nor every indexed answer refused as "nodes behind" for good; live reads are rebuilt when a reorg
// replaces their block at the same height or the chain head goes lower; and a cached body's
// X-Indexed-Block-Lag grows as the chain moves on while the index stalls.
import { encodeFunctionData, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import type { Ledger } from '../../devnet/ledger.ts';
import { createRpcClient, type RpcClient } from '../../devnet/rpc.ts';
import type { Indexer } from '../../indexer/indexer.ts';
import { listenRest } from '../harness/stack.ts';
import { startPrivateDevnet, type SeededPrivateDevnet } from '../harness/private-devnet.ts';
import {
  chainHead,
  indexedGateway,
  indexedHead,
  transact,
  VAULT_OWNER_ABI,
} from '../harness/private-gateway.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';

let devnet: SeededPrivateDevnet;
let rpc: RpcClient;
let deployment: Deployment;
let ledger: Ledger;
/** the indexer's way to the chain: set down, the index stalls while the chain moves on */
let indexerRpc: FaultProxy;
let indexer: Indexer;
let base: string;
let close: () => Promise<void>;

/** Sends an owner's call from any account (anvil impersonates), mined in a block of its own; that block. */
async function transactOk(from: string, to: string, data: Hex): Promise<{ number: number; hash: Hex }> {
  const receipt = await transact(rpc, from, to, data);
  if (receipt.status !== '0x1') throw new Error(`a transaction to ${to} reverted`);
  return { number: receipt.blockNumber, hash: receipt.blockHash };
}

beforeAll(async () => {
  devnet = await startPrivateDevnet({
    scenario: {
      epochs: 20,
      investorsPerFund: 4,
      requestsPerEpoch: 2,
      onboardingDays: 2,
      roundInterval: 5,
      claimBps: 0,
    },
    dirPrefix: 'reorg-freshness-',
  });
  ({ deployment, ledger } = devnet);
  rpc = createRpcClient(devnet.rpcUrl);
  indexerRpc = await startFaultProxy(devnet.rpcUrl);
  const { gateway, ...service } = await indexedGateway(devnet, indexerRpc.url);
  indexer = service.indexer;
  // every cache hit asks whether the indexer or the chain has moved, so the test need not wait out an interval
  ({ url: base, close } = await listenRest(gateway, { responseCacheEntries: 100, blockCheckMs: 0 }));
}, 300_000);

afterAll(async () => {
  await close?.();
  await indexer?.stop();
  await indexerRpc?.close();
  await devnet?.stop();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function get(path: string, etag?: string): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(base + path, { headers: etag ? { 'If-None-Match': etag } : {} });
  return {
    status: response.status,
    body: response.status === 304 ? null : await response.json(),
    headers: response.headers,
  };
}

/** An active fund whose subscriptions are running, and its deployment. */
function activeFund(): Deployment['funds'][number] {
  const fund = ledger.funds.find((f) => f.status === 'active' && !f.pausedModules.subscriptions);
  const spec = deployment.funds.find((f) => f.slug === fund?.slug);
  if (!spec) throw new Error('scenario left no active fund with subscriptions running');
  return spec;
}

describe('a reorg under cached live reads', () => {
  it('rebuilds cached allocations whose block a reorg replaced at the same height', async () => {
    const fund = activeFund();
    const path = `/v1/funds/${fund.slug}/allocations`;
    const before = (await get(path)).body;
    const strategy = before.strategies.find((s: { targetBps: number }) => s.targetBps > 0);
    const changed = await transactOk(
      fund.multisig,
      fund.vault,
      encodeFunctionData({
        abi: VAULT_OWNER_ABI,
        functionName: 'setStrategy',
        args: [strategy.strategy, strategy.targetBps - 1, strategy.capBps, strategy.active],
      }),
    );
    const built = await get(path);
    expect(built.headers.get('x-chain-block')).toBe(String(changed.number));
    expect(built.body.strategies).not.toEqual(before.strategies);

    // the block holding setStrategy is replaced by an empty one: the allocations are as before it
    await rpc.request('anvil_reorg', [1, []]);
    const replaced = await chainHead(rpc);
    expect(replaced.number).toBe(changed.number);
    expect(replaced.hash).not.toBe(changed.hash);
    const after = await get(path, built.headers.get('etag')!);
    expect(after.status).toBe(200);
    expect(after.headers.get('x-chain-block')).toBe(String(changed.number));
    expect(after.body.strategies).toEqual(before.strategies);
    await indexedHead(rpc, indexer);
  });

  it('rebuilds a cached health body once the chain head is below the block it read', async () => {
    const snapshot = await rpc.request<Hex>('evm_snapshot', []);
    const start = await indexedHead(rpc, indexer);
    for (let i = 0; i < 3; i++) await rpc.request('evm_mine', []);
    const higher = await get('/v1/health');
    expect(higher.body.indexer.chainHeadBlock).toBe(start.number + 3);

    expect(await rpc.request<boolean>('evm_revert', [snapshot])).toBe(true);
    const lower = await get('/v1/health', higher.headers.get('etag')!);
    expect(lower.status).toBe(200);
    expect(lower.body.indexer.chainHeadBlock).toBe(start.number);
    expect(lower.headers.get('x-chain-block')).toBe(String(start.number));
    // the new branch grows past the abandoned one, and the indexer follows it, for the next test
    for (let i = 0; i < 4; i++) await rpc.request('evm_mine', []);
    await indexedHead(rpc, indexer);
  });
});

describe('a reorg to a shorter chain', () => {
  it('serves the new branch, rebuilding the bodies cached from the abandoned one, where the chain makes no more blocks', async () => {
    const fund = activeFund();
    const start = await indexedHead(rpc, indexer);
    const snapshot = await rpc.request<Hex>('evm_snapshot', []);
    // two blocks of indexed events on the branch about to be abandoned
    await transactOk(
      fund.multisig,
      fund.vault,
      encodeFunctionData({ abi: VAULT_OWNER_ABI, functionName: 'pause', args: [0] }),
    );
    const abandoned = await transactOk(
      fund.multisig,
      fund.vault,
      encodeFunctionData({ abi: VAULT_OWNER_ABI, functionName: 'unpause', args: [0] }),
    );
    await indexedHead(rpc, indexer);
    const events = await get('/v1/events?limit=1');
    expect(events.body.items[0]).toMatchObject({
      eventName: 'ModuleUnpaused',
      blockNumber: abandoned.number,
    });
    expect((await get('/v1/health')).body.indexer.maxIndexedBlock).toBe(abandoned.number);

    // back to before them, and one block on the new branch: a chain shorter than the abandoned one
    expect(await rpc.request<boolean>('evm_revert', [snapshot])).toBe(true);
    const transfer = await transactOk(
      deployment.accounts.deployer,
      '0x000000000000000000000000000000000000dEaD',
      '0x',
    );
    expect(transfer.number).toBe(start.number + 1);
    await indexedHead(rpc, indexer);

    const rebuilt = await get('/v1/events?limit=1', events.headers.get('etag')!);
    expect(rebuilt.status).toBe(200);
    expect(rebuilt.headers.get('x-indexed-block')).toBe(String(transfer.number));
    expect(rebuilt.body.items[0].id).not.toBe(events.body.items[0].id);
    expect(rebuilt.body.items[0].blockNumber).toBeLessThanOrEqual(start.number);

    const health = await get('/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.indexer.maxIndexedBlock).toBe(transfer.number);
    expect(health.body.indexer.lagBlocks).toBe(0);

    const graphql = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ health { indexer { maxIndexedBlock } } }' }),
    });
    expect(await graphql.json()).toEqual({
      data: { health: { indexer: { maxIndexedBlock: transfer.number } } },
    });
  });
});

describe('a stalled index', () => {
  it('tells the X-Indexed-Block-Lag of a cached body as of each answer, growing as the chain moves on', async () => {
    const indexed = await indexedHead(rpc, indexer);
    const built = await get('/v1/events?limit=1');
    expect(built.headers.get('x-indexed-block')).toBe(String(indexed.number));
    expect(built.headers.get('x-indexed-block-lag')).toBe('0');
    indexerRpc.set({ kind: 'down' });
    try {
      for (let i = 0; i < 3; i++) await rpc.request('evm_mine', []);
      const cached = await get('/v1/events?limit=1');
      expect(cached.headers.get('age')).not.toBeNull();
      expect(cached.headers.get('etag')).toBe(built.headers.get('etag'));
      expect(cached.headers.get('x-indexed-block')).toBe(String(indexed.number));
      expect(cached.headers.get('x-indexed-block-lag')).toBe('3');
      await rpc.request('evm_mine', []);
      expect((await get('/v1/events?limit=1')).headers.get('x-indexed-block-lag')).toBe('4');
    } finally {
      indexerRpc.set({ kind: 'pass' });
    }
  });
});
