// Catch-up over a long stretch of empty blocks, where the follower fetches several ranges at once:
// on the test's own anvil, a few events, hundreds of empty blocks in ranges of five blocks, more events; the RPC is
// behind a proxy that delays every request, as a distant node would. The store must be exactly what
// a run fetching one range at a time builds, also when the chain reorgs while ranges are fetched
// ahead of the checkpoint.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import type { Indexer } from '../../indexer/indexer.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { ChainActions } from './chain-actions.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { devnetIndexers } from './devnet-indexers.ts';
import { dumpEntityVersions } from './store-dump.ts';

const EMPTY_BLOCKS = 600;
const MAX_RANGE = 5;
const RPC_DELAY_MS = 10;

let devnet: PrivateDevnet;
let deployment: Deployment;
let actions: ChainActions;
let proxy: FaultProxy;
const indexers = devnetIndexers(() => devnetContracts(deployment), 'indexer-sparse-');

const startIndexer = (rpcUrl: string, maxRangesAhead?: number) =>
  indexers.start(rpcUrl, { maxRange: MAX_RANGE, maxRangesAhead });

async function stopped(indexer: Indexer): Promise<Indexer> {
  await indexer.stop();
  return indexer;
}

beforeAll(async () => {
  devnet = await startPrivateDevnet();
  deployment = devnet.deployment;
  actions = new ChainActions(devnet.rpcUrl, deployment);
  await actions.draftAll(1, 1_000_000n);
  await actions.rpc.request('anvil_mine', [`0x${EMPTY_BLOCKS.toString(16)}`]);
  await actions.draftAll(2, 1_010_000n);
  proxy = await startFaultProxy(devnet.rpcUrl);
  proxy.set({ kind: 'delay', ms: RPC_DELAY_MS });
});

afterAll(async () => {
  await indexers.stopAll();
  await proxy?.close();
  await devnet?.stop();
});

describe('catch-up over a sparse stretch', () => {
  it('fetches several ranges at once and builds exactly the store of a run fetching one at a time', async () => {
    const { number: head } = await actions.head();
    const oneAtATime = await startIndexer(devnet.rpcUrl, 1);
    await oneAtATime.waitForBlock(head);
    const ahead = await startIndexer(proxy.url);
    await ahead.waitForBlock(head);
    expect(proxy.peakInFlight('eth_getLogs')).toBe(4);
    expect(dumpEntityVersions((await stopped(ahead)).storePath)).toEqual(
      dumpEntityVersions((await stopped(oneAtATime)).storePath),
    );
  });

  it('drops the ranges fetched ahead on a reorg and ends with the store a fresh run builds', async () => {
    const { number: base } = await actions.head();
    const snapshot = await actions.snapshot();
    // the first branch's event comes first, so the indexer has written it when the reorg lands
    await actions.draftAll(3, 1_020_000n);
    await actions.rpc.request('anvil_mine', [`0x${EMPTY_BLOCKS.toString(16)}`]);
    const indexer = await startIndexer(proxy.url);
    // the reorg lands while the indexer is inside the empty stretch of the first branch
    while (indexer.status().checkpoint < base + EMPTY_BLOCKS / 4) await sleep(5);
    await actions.revert(snapshot);
    await actions.rpc.request('anvil_mine', [`0x${(EMPTY_BLOCKS + 100).toString(16)}`]);
    await actions.draftAll(3, 1_030_000n);
    const { number: head } = await actions.head();
    await indexer.waitForBlock(head);
    const fresh = await startIndexer(devnet.rpcUrl, 1);
    await fresh.waitForBlock(head);
    expect(dumpEntityVersions((await stopped(indexer)).storePath)).toEqual(
      dumpEntityVersions((await stopped(fresh)).storePath),
    );
  });
});
