// Tests that change the chain run on a private devnet (own anvil, deployment, small scenario
// and indexer) so the shared harness stays exactly as its ledger says. Cursor paging through
// /v1/events stays gap- and repeat-free while new events are indexed between pages, the claim
// transaction a /v1 proof carries pays on-chain as sent (inside a snapshot that is reverted), and a
// claim shows in cached responses as soon as it is indexed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeFunctionData, erc20Abi, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import type { Ledger } from '../../devnet/ledger.ts';
import { createRpcClient, type RpcClient } from '../../devnet/rpc.ts';
import type { Indexer } from '../../indexer/indexer.ts';
import { listenRest } from '../harness/stack.ts';
import { startPrivateDevnet, type SeededPrivateDevnet } from '../harness/private-devnet.ts';
import {
  holdsBlock,
  indexedGateway,
  indexedHead,
  transact,
  VAULT_OWNER_ABI,
} from '../harness/private-gateway.ts';
import { call } from './openapi-responses.ts';

let devnet: SeededPrivateDevnet;
let rpc: RpcClient;
let indexer: Indexer;
let deployment: Deployment;
let ledger: Ledger;
let dataDir: string;
let base: string;
/** the same service with the server response cache on */
let cachedBase: string;
let close: () => Promise<void>;
let closeCached: () => Promise<void>;

/**
 * Waits until the indexer holds the block `hash` at `number`. Reaching the number is not enough
 * after the reverted snapshot of another test: the indexer may still hold that number from the
 * abandoned branch until the new branch grows past it.
 */
async function indexedBlock(number: number, hash: Hex): Promise<void> {
  while (!(await holdsBlock(indexer, number, hash))) {
    // the new branch must grow past the abandoned one for the follower to see the reorg
    await rpc.request('evm_mine', []);
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
    dirPrefix: 'h4-live-',
  });
  ({ deployment, ledger, dataDir } = devnet);
  rpc = createRpcClient(devnet.rpcUrl);
  const { gateway, ...service } = await indexedGateway(devnet);
  indexer = service.indexer;
  // no server-side cache: every page is read from the indexer as it is now
  ({ url: base, close } = await listenRest(gateway));
  // every cache hit asks whether the indexer or the chain has moved on, so the test need not wait out an interval
  ({ url: cachedBase, close: closeCached } = await listenRest(gateway, {
    responseCacheEntries: 100,
    blockCheckMs: 0,
  }));
}, 300_000);

afterAll(async () => {
  await close?.();
  await closeCached?.();
  await indexer?.stop();
  await devnet?.stop();
});

/** A round of an active fund whose claims are not paused, and the account of its `index`th leaf. */
function claimableRecipient(index: number): { round: Ledger['rounds'][number]; account: Hex } {
  const round = ledger.rounds.find((r) => {
    const fund = ledger.funds.find((f) => f.slug === r.fund);
    return fund?.status === 'active' && !fund.pausedModules.claims;
  });
  if (!round) throw new Error('scenario posted no claimable round');
  const dump = readFileSync(join(dataDir, round.uri), 'utf8');
  const [account] = JSON.parse(dump).values[index].value as [Hex, string];
  return { round, account };
}

describe('while the chain moves', () => {
  it('pages /v1/events to the end with no gaps or repeats while new events arrive', async () => {
    const everything: string[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page = await call(base, `/v1/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      everything.push(...page.body.items.map((e: { id: string }) => e.id));
      cursor = page.body.nextCursor;
    }
    expect(everything.length).toBe(ledger.trackedEvents);

    const fund = ledger.funds.find((f) => f.status === 'active' && !f.pausedModules.subscriptions);
    const spec = deployment.funds.find((f) => f.slug === fund?.slug);
    if (!spec) throw new Error('scenario left no active fund with subscriptions running');
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const response = await call(base, `/v1/events?limit=37${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...response.body.items.map((e: { id: string }) => e.id));
      cursor = response.body.nextCursor;
      if (page++ < 3) {
        // new events land between pages: a pause and an unpause of the vault's subscriptions
        await transact(
          rpc,
          spec.multisig,
          spec.vault,
          encodeFunctionData({ abi: VAULT_OWNER_ABI, functionName: 'pause', args: [0] }),
        );
        const { blockNumber } = await transact(
          rpc,
          spec.multisig,
          spec.vault,
          encodeFunctionData({ abi: VAULT_OWNER_ABI, functionName: 'unpause', args: [0] }),
        );
        await indexer.waitForBlock(blockNumber);
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(everything);

    const newest = await call(base, '/v1/events?limit=6');
    expect(newest.body.items.map((e: { eventName: string }) => e.eventName)).toEqual([
      'ModuleUnpaused',
      'ModulePaused',
      'ModuleUnpaused',
      'ModulePaused',
      'ModuleUnpaused',
      'ModulePaused',
    ]);
  });

  it('serves with a proof the claim transaction that pays it as sent, from a wallet not the holder (in a reverted snapshot)', async () => {
    const { round, account } = claimableRecipient(0);
    const { body } = await call(
      base,
      `/v1/funds/${round.fund}/dividends/${round.epoch}/proof?address=${account}`,
    );
    const proof = body.data;
    expect(proof.claimed).toBe(false);

    const snapshot = await rpc.request<Hex>('evm_snapshot', []);
    try {
      const balance = async () =>
        BigInt(
          await rpc.request<Hex>('eth_call', [
            {
              to: deployment.contracts.baseAsset,
              data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [account] }),
            },
            'latest',
          ]),
        );
      const before = await balance();
      // any wallet may send it: the dividend goes to the account all the same
      const relayer = deployment.funds[0]?.multisig as Hex;
      const receipt = await transact(rpc, relayer, proof.claim.to, proof.claim.data);
      expect(receipt.status).toBe('0x1');
      expect((await balance()) - before).toBe(BigInt(proof.amountRaw));
      // the same proof a second time is a double claim, which the distributor refuses
      const again = await transact(rpc, account, proof.claim.to, proof.claim.data);
      expect(again.status).toBe('0x0');
    } finally {
      expect(await rpc.request<boolean>('evm_revert', [snapshot])).toBe(true);
      // the indexer holds the abandoned branch until it sees the revert: the next test starts
      // once it is back on the chain, not while its checkpoint is about to move back under it. The
      // snapshot's own block is on both branches, so the wait is for the new branch's head
      await indexedHead(rpc, indexer, { mine: true });
    }
  });

  it('serves a claim in the cached proof and round as soon as it is indexed, not when their bodies expire', async () => {
    const { round, account } = claimableRecipient(1);
    const roundPath = `/v1/funds/${round.fund}/dividends/${round.epoch}`;
    const proofPath = `${roundPath}/proof?address=${account}`;
    const proof = (await call(cachedBase, proofPath)).body.data;
    const claimedBefore = (await call(cachedBase, roundPath)).body.data.claimedCount;
    expect(proof.claimed).toBe(false);
    // the second request is answered from the cache
    const cached = await fetch(cachedBase + proofPath);
    expect(cached.headers.get('x-indexed-block')).toBe(String(indexer.status().checkpoint));
    expect(cached.headers.get('age')).toMatch(/^\d+$/);
    expect((await cached.json()).data.claimed).toBe(false);

    const receipt = await transact(rpc, account, proof.claim.to, proof.claim.data);
    expect(receipt.status).toBe('0x1');
    await indexedBlock(receipt.blockNumber, receipt.blockHash);
    const after = await fetch(cachedBase + proofPath);
    expect(Number(after.headers.get('x-indexed-block'))).toBeGreaterThanOrEqual(receipt.blockNumber);
    expect((await after.json()).data.claimed).toBe(true);
    expect((await call(cachedBase, roundPath)).body.data.claimedCount).toBe(claimedBefore + 1);
  });

  it('serves a change to live chain data in the cached allocations as soon as it is mined, not when the body expires', async () => {
    const fund = ledger.funds.find((f) => f.status === 'active');
    const spec = deployment.funds.find((f) => f.slug === fund?.slug);
    if (!spec) throw new Error('scenario left no active fund');
    const path = `/v1/funds/${spec.slug}/allocations`;
    const before = (await call(cachedBase, path)).body;
    const strategy = before.strategies.find((s: { targetBps: number }) => s.targetBps > 0);
    // the second request is answered from the cache
    expect((await fetch(cachedBase + path)).headers.get('age')).not.toBeNull();

    const receipt = await transact(
      rpc,
      spec.multisig,
      spec.vault,
      encodeFunctionData({
        abi: VAULT_OWNER_ABI,
        functionName: 'setStrategy',
        args: [strategy.strategy, strategy.targetBps - 1, strategy.capBps, strategy.active],
      }),
    );
    expect(receipt.status).toBe('0x1');
    const after = (await call(cachedBase, path)).body;
    const changed = after.strategies.find((s: { strategy: string }) => s.strategy === strategy.strategy);
    expect(changed.targetBps).toBe(strategy.targetBps - 1);
  });

  it('tells the data lag of a cached body as of each answer, not as of when the body was built', async () => {
    await indexer.waitForBlock(Number(await rpc.request<Hex>('eth_blockNumber', [])));
    const first = await fetch(`${cachedBase}/v1/events?limit=1`);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const cached = await fetch(`${cachedBase}/v1/events?limit=1`);
    expect(cached.headers.get('x-indexed-block')).toBe(first.headers.get('x-indexed-block'));
    expect(Number(cached.headers.get('age'))).toBeGreaterThanOrEqual(1);
    const lag = (response: Response) => Number(response.headers.get('x-data-lag-seconds'));
    expect(lag(cached) - lag(first)).toBeGreaterThanOrEqual(1);
  });
});
