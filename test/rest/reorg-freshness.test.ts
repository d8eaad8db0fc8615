// What the REST service answers while the chain reorgs and moves under it, on a private devnet
// (own anvil, deployment, small scenario and indexer) with the server cache on and every hit
// checking the blocks: a reorg to a shorter chain leaves neither orphaned data served (nor 304'd)
// nor every indexed answer refused as "nodes behind" for good; live reads are rebuilt when a reorg
// replaces their block at the same height or the chain head goes lower; and a cached body's
// X-Indexed-Block-Lag grows as the chain moves on while the index stalls.
import { encodeFunctionData, parseAbi, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import type { Ledger } from '../../devnet/ledger.ts';
import { createGateway } from '../../gateway/server.ts';
import { loadRegistry } from '../../gateway/sources/registry.ts';
import { createIndexer, type Indexer } from '../../indexer/indexer.ts';
import { createRestApp } from '../../rest/app.ts';
import { listen, REGISTRY_FILE } from '../gateway/stack.ts';
import { startPrivateDevnet, type SeededPrivateDevnet } from '../harness/private-devnet.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';

let devnet: SeededPrivateDevnet;
let deployment: Deployment;
let ledger: Ledger;
/** the indexer's way to the chain: set down, the index stalls while the chain moves on */
let indexerRpc: FaultProxy;
let indexer: Indexer;
let base: string;
let close: () => Promise<void>;

async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function head(): Promise<{ number: number; hash: Hex }> {
  const block = await rpc<{ number: Hex; hash: Hex }>('eth_getBlockByNumber', ['latest', false]);
  return { number: Number(block.number), hash: block.hash };
}

/** Sends a transaction from any account (anvil impersonates) and mines it in a block of its own. */
async function transact(from: string, to: string, data: Hex): Promise<{ number: number; hash: Hex }> {
  const tx = await rpc<Hex>('eth_sendTransaction', [{ from, to, data, gas: '0x1e8480', gasPrice: '0x0' }]);
  await rpc('evm_mine');
  const receipt = await rpc<{ status: string; blockNumber: Hex; blockHash: Hex }>(
    'eth_getTransactionReceipt',
    [tx],
  );
  if (receipt.status !== '0x1') throw new Error(`transaction ${tx} reverted`);
  return { number: Number(receipt.blockNumber), hash: receipt.blockHash };
}

/** Resolves once the indexer holds the chain's head block, that very block (not another at its height). */
async function indexedHead(): Promise<{ number: number; hash: Hex }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const block = await head();
    // graph-node's dialect answers a block given by hash only when it holds that very block
    const response = await fetch(indexer.queryUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ _meta(block: { hash: "${block.hash}" }) { block { number } } }` }),
    });
    const body = (await response.json()) as { data?: { _meta: { block: { number: number } } | null } | null };
    if (body.data?._meta?.block.number === block.number) return block;
    if (Date.now() > deadline)
      throw new Error(`the indexer did not reach block ${block.number} (${block.hash})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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
  indexerRpc = await startFaultProxy(devnet.rpcUrl);
  indexer = await createIndexer({
    rpcUrl: indexerRpc.url,
    network: 'devnet',
    dataDir: devnet.dataDir,
    port: 0,
    pollIntervalMs: 50,
    log: () => {},
  });
  await indexer.start();
  await indexer.waitForBlock(ledger.endBlock);
  const subgraph = { url: indexer.queryUrl, timeoutMs: 10_000, maxBatch: 1000 };
  const gateway = createGateway({
    registry: loadRegistry(REGISTRY_FILE),
    subgraph,
    chain: { rpcUrl: devnet.rpcUrl, timeoutMs: 10_000, maxBatch: 200 },
    distributions: { base: devnet.dataDir, timeoutMs: 5_000, cacheSize: 8 },
    logError: () => {},
  });
  // every cache hit asks whether the indexer or the chain has moved, so the test need not wait out an interval
  const app = createRestApp({
    gateway,
    trustProxy: false,
    rateLimit: false,
    responseCacheEntries: 100,
    blockCheckMs: 0,
    logError: () => {},
  });
  ({ url: base, close } = await listen(app));
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

const vaultAbi = parseAbi([
  'function pause(uint8 module)',
  'function unpause(uint8 module)',
  'function setStrategy(address strategy, uint16 targetBps, uint16 capBps, bool active)',
]);

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
    const changed = await transact(
      fund.multisig,
      fund.vault,
      encodeFunctionData({
        abi: vaultAbi,
        functionName: 'setStrategy',
        args: [strategy.strategy, strategy.targetBps - 1, strategy.capBps, strategy.active],
      }),
    );
    const built = await get(path);
    expect(built.headers.get('x-chain-block')).toBe(String(changed.number));
    expect(built.body.strategies).not.toEqual(before.strategies);

    // the block holding setStrategy is replaced by an empty one: the allocations are as before it
    await rpc('anvil_reorg', [1, []]);
    const replaced = await head();
    expect(replaced.number).toBe(changed.number);
    expect(replaced.hash).not.toBe(changed.hash);
    const after = await get(path, built.headers.get('etag')!);
    expect(after.status).toBe(200);
    expect(after.headers.get('x-chain-block')).toBe(String(changed.number));
    expect(after.body.strategies).toEqual(before.strategies);
    await indexedHead();
  });

  it('rebuilds a cached health body once the chain head is below the block it read', async () => {
    const snapshot = await rpc<Hex>('evm_snapshot');
    const start = await indexedHead();
    for (let i = 0; i < 3; i++) await rpc('evm_mine');
    const higher = await get('/v1/health');
    expect(higher.body.indexer.chainHeadBlock).toBe(start.number + 3);

    expect(await rpc<boolean>('evm_revert', [snapshot])).toBe(true);
    const lower = await get('/v1/health', higher.headers.get('etag')!);
    expect(lower.status).toBe(200);
    expect(lower.body.indexer.chainHeadBlock).toBe(start.number);
    expect(lower.headers.get('x-chain-block')).toBe(String(start.number));
    // the new branch grows past the abandoned one, and the indexer follows it, for the next test
    for (let i = 0; i < 4; i++) await rpc('evm_mine');
    await indexedHead();
  });
});

describe('a reorg to a shorter chain', () => {
  it('serves the new branch, rebuilding the bodies cached from the abandoned one, where the chain makes no more blocks', async () => {
    const fund = activeFund();
    const start = await indexedHead();
    const snapshot = await rpc<Hex>('evm_snapshot');
    // two blocks of indexed events on the branch about to be abandoned
    await transact(
      fund.multisig,
      fund.vault,
      encodeFunctionData({ abi: vaultAbi, functionName: 'pause', args: [0] }),
    );
    const abandoned = await transact(
      fund.multisig,
      fund.vault,
      encodeFunctionData({ abi: vaultAbi, functionName: 'unpause', args: [0] }),
    );
    await indexedHead();
    const events = await get('/v1/events?limit=1');
    expect(events.body.items[0]).toMatchObject({
      eventName: 'ModuleUnpaused',
      blockNumber: abandoned.number,
    });
    expect((await get('/v1/health')).body.indexer.maxIndexedBlock).toBe(abandoned.number);

    // back to before them, and one block on the new branch: a chain shorter than the abandoned one
    expect(await rpc<boolean>('evm_revert', [snapshot])).toBe(true);
    const transfer = await transact(
      deployment.accounts.deployer,
      '0x000000000000000000000000000000000000dEaD',
      '0x',
    );
    expect(transfer.number).toBe(start.number + 1);
    await indexedHead();

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
    const indexed = await indexedHead();
    const built = await get('/v1/events?limit=1');
    expect(built.headers.get('x-indexed-block')).toBe(String(indexed.number));
    expect(built.headers.get('x-indexed-block-lag')).toBe('0');
    indexerRpc.set({ kind: 'down' });
    try {
      for (let i = 0; i < 3; i++) await rpc('evm_mine');
      const cached = await get('/v1/events?limit=1');
      expect(cached.headers.get('age')).not.toBeNull();
      expect(cached.headers.get('etag')).toBe(built.headers.get('etag'));
      expect(cached.headers.get('x-indexed-block')).toBe(String(indexed.number));
      expect(cached.headers.get('x-indexed-block-lag')).toBe('3');
      await rpc('evm_mine');
      expect((await get('/v1/events?limit=1')).headers.get('x-indexed-block-lag')).toBe('4');
    } finally {
      indexerRpc.set({ kind: 'pass' });
    }
  });
});
