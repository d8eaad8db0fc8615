// A reorg made with anvil snapshots on the test's own chain: the indexer indexes a branch, the chain
// is reverted to a snapshot and a different, longer branch is mined. The indexer must drop every
// entity version the lost branch wrote (including dynamic data source effects), index the new one,
// and end with exactly the versions a fresh indexer builds from the final chain. An indexer keeping
// two blocks of history meets a reorg deeper than that and indexes the chain again from the start.
// A new branch shorter than the lost one (the node's head below the last block indexed) is a reorg
// too, not a node behind.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import { devAccount } from '../../devnet/protocol-config.ts';
import type { Indexer } from '../../indexer/indexer.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { ChainActions, type TestFund } from './chain-actions.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { devnetIndexers } from './devnet-indexers.ts';
import { queryIndexer } from './graphql-client.ts';
import { dumpEntityVersions } from './store-dump.ts';

let devnet: PrivateDevnet;
let deployment: Deployment;
let actions: ChainActions;
const indexers = devnetIndexers(() => devnetContracts(deployment), 'indexer-reorg-');
/** log lines of the indexer under test (fresh indexers started for comparison keep following the chain) */
const logLines: string[] = [];

const startIndexer = (lines: string[] = []) =>
  indexers.start(devnet.rpcUrl, { log: (line) => lines.push(line) });

interface NavRow {
  epoch: number;
  navPerShare: string;
}

const navsOfEpoch = async (url: string, epoch: number, block?: number) =>
  (
    await queryIndexer<{ navRecords: NavRow[] }>(
      url,
      `{ navRecords(where: { epoch: ${epoch} }${block === undefined ? '' : `, block: { number: ${block} }`}) { epoch navPerShare } }`,
    )
  ).navRecords;

const pausedOf = async (url: string, vault: string) =>
  (
    await queryIndexer<{ fund: { pausedModules: string[] } }>(
      url,
      `{ fund(id: "${vault}") { pausedModules } }`,
    )
  ).fund.pausedModules;

/** The dynamic data sources the store holds (its __data_sources table), in creation order. */
function storedDataSources(storePath: string): { address: string; createdBlock: number }[] {
  const db = new Database(storePath, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(`SELECT "address", "created_block" FROM "__data_sources" ORDER BY "seq"`)
      .all() as { address: Buffer; created_block: bigint }[];
    return rows.map((r) => ({
      address: '0x' + r.address.toString('hex'),
      createdBlock: Number(r.created_block),
    }));
  } finally {
    db.close();
  }
}

const eventsOf = async (url: string, contract: string) =>
  (
    await queryIndexer<{ protocolEvents: { eventName: string; blockNumber: string }[] }>(
      url,
      `{ protocolEvents(where: { contract: "${contract}" }, orderBy: sortKey) { eventName blockNumber } }`,
    )
  ).protocolEvents;

let indexer: Indexer;
let firstBranchBlock: number;
let secondBranch: number[];

beforeAll(async () => {
  devnet = await startPrivateDevnet();
  deployment = devnet.deployment;
  actions = new ChainActions(devnet.rpcUrl, deployment);
  firstBranchBlock = await actions.draftAll(1, 1_000_000n);
  indexer = await startIndexer(logLines);
  await indexer.waitForBlock(firstBranchBlock);
});

afterAll(async () => {
  await indexers.stopAll();
  await devnet?.stop();
});

describe('indexer: chain reorganisations', () => {
  it('reverts a dropped branch and re-indexes the new one exactly as a fresh run would', async () => {
    const funds = deployment.funds;
    const snapshot = await actions.snapshot();
    await actions.draftAll(2, 1_100_000n);
    await actions.pause(0, 1);
    const lostHead = await actions.draftAll(3, 1_300_000n);
    await indexer.waitForBlock(lostHead);
    // the lost branch was really indexed
    expect(await navsOfEpoch(indexer.queryUrl, 3)).toHaveLength(funds.length);
    expect(await pausedOf(indexer.queryUrl, funds[0]!.vault.toLowerCase())).toEqual(['redemptions']);

    await actions.revert(snapshot);
    secondBranch = [
      await actions.draftAll(2, 1_200_000n),
      await actions.pause(1, 2),
      await actions.draftAll(4, 1_400_000n),
      await actions.draftAll(5, 1_500_000n),
    ];
    const head = await actions.head();
    expect(head.number).toBeGreaterThan(lostHead);
    await indexer.waitForBlock(head.number);

    const meta = await queryIndexer<{ _meta: { block: { number: number; hash: string } } }>(
      indexer.queryUrl,
      '{ _meta { block { number hash } } }',
    );
    expect(meta._meta.block).toEqual({ number: head.number, hash: head.hash });
    // the common ancestor found is the last block both branches share
    expect(logLines.filter((l) => l.startsWith('reorg:'))).toEqual([
      expect.stringMatching(new RegExp(`reverted to block ${firstBranchBlock}$`)),
    ]);
    expect(await navsOfEpoch(indexer.queryUrl, 3)).toEqual([]);
    expect((await navsOfEpoch(indexer.queryUrl, 2)).map((n) => n.navPerShare)).toEqual(
      funds.map(() => '1200000'),
    );
    expect(await pausedOf(indexer.queryUrl, funds[0]!.vault.toLowerCase())).toEqual([]);
    expect(await pausedOf(indexer.queryUrl, funds[1]!.vault.toLowerCase())).toEqual(['claims']);
    const lostEvents = await queryIndexer<{ protocolEvents: unknown[] }>(
      indexer.queryUrl,
      `{ protocolEvents(where: { blockNumber: "${lostHead}", eventName: "NavDrafted", args_contains: "\\"epoch\\":\\"3\\"" }) { id } }`,
    );
    expect(lostEvents.protocolEvents).toEqual([]);

    const fresh = await startIndexer();
    await fresh.waitForBlock(head.number);
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(fresh.storePath));
  });

  it('answers a query at a past block with that block’s state after the reorg', async () => {
    expect((await navsOfEpoch(indexer.queryUrl, 2, firstBranchBlock)).length).toBe(0);
    expect((await navsOfEpoch(indexer.queryUrl, 1, firstBranchBlock)).map((n) => n.navPerShare)).toEqual(
      deployment.funds.map(() => '1000000'),
    );
    expect(await pausedOf(indexer.queryUrl, deployment.funds[1]!.vault.toLowerCase())).toEqual(['claims']);
    const before = await queryIndexer<{ fund: { pausedModules: string[] } }>(
      indexer.queryUrl,
      `{ fund(id: "${deployment.funds[1]!.vault.toLowerCase()}", block: { number: ${secondBranch[0]} }) { pausedModules } }`,
    );
    expect(before.fund.pausedModules).toEqual([]);
  });
});

describe('indexer: a reorg that drops a fund registered on the lost branch', () => {
  const slug = 'reorged-fund';
  let vaultFund: TestFund;
  let vault: string;
  /** the deployment's funds, registered in the deployment block */
  const registeredVaults = () => deployment.funds.map((f) => f.vault.toLowerCase());
  const registeredSources = () =>
    registeredVaults().map((address) => ({ address, createdBlock: deployment.startBlock }));

  /** the last block both branches share */
  let ancestor: number;
  /** the reorg lines logged before this reorg */
  let reorgLinesBefore: number;
  /** the block the unregistered vault paused a module in on the new branch */
  let pausedOnNewBranch: number;
  let head: number;

  // The lost branch registers the fund (the vault then a data source, with entities of its own); the
  // new branch deploys an unregistered vault at the same address, which emits events there.
  beforeAll(async () => {
    ancestor = (await actions.head()).number;
    await indexer.waitForBlock(ancestor);
    reorgLinesBefore = logLines.filter((l) => l.startsWith('reorg:')).length;
    const snapshot = await actions.snapshot();

    const lost = await actions.deployFund(slug, devAccount(5), true);
    vault = lost.vault.toLowerCase();
    const lostPaused = await actions.pauseVault(lost.vault, lost.multisig, 0);
    const lostHead = await actions.draft([lost.vault], 1, 1_000_000n);
    await indexer.waitForBlock(lostHead);
    // the lost branch really registered the fund and ran its vault as a data source
    expect(storedDataSources(indexer.storePath)).toEqual([
      ...registeredSources(),
      { address: vault, createdBlock: lost.block },
    ]);
    const registered = await queryIndexer<{
      fund: { slug: string; shareToken: string; pausedModules: string[]; latestNav: { epoch: number } };
    }>(indexer.queryUrl, `{ fund(id: "${vault}") { slug shareToken pausedModules latestNav { epoch } } }`);
    expect(registered.fund).toEqual({
      slug,
      shareToken: lost.shareToken.toLowerCase(),
      pausedModules: ['subscriptions'],
      latestNav: { epoch: 1 },
    });
    // as in graph-node, the new data source also ran the vault's constructor event of its creation block
    expect(await eventsOf(indexer.queryUrl, vault)).toEqual([
      { eventName: 'OwnershipTransferred', blockNumber: String(lost.block) },
      { eventName: 'ModulePaused', blockNumber: String(lostPaused) },
    ]);

    await actions.revert(snapshot);
    // the same deployer nonce puts an unregistered vault at the same address, which then emits events
    vaultFund = await actions.deployFund(slug, devAccount(5), false);
    expect(vaultFund.vault).toBe(lost.vault);
    pausedOnNewBranch = await actions.pauseVault(vaultFund.vault, vaultFund.multisig, 0);
    await actions.draftAll(6, 1_600_000n);
    await actions.draftAll(7, 1_700_000n);
    head = (await actions.head()).number;
    expect(head).toBeGreaterThan(lostHead);
    await indexer.waitForBlock(head);
  });

  it('forgets the fund’s vault data source and its entities, as a fresh run never had them', async () => {
    expect(logLines.filter((l) => l.startsWith('reorg:')).slice(reorgLinesBefore)).toEqual([
      expect.stringMatching(new RegExp(`reverted to block ${ancestor}$`)),
    ]);
    expect(storedDataSources(indexer.storePath)).toEqual(registeredSources());
    const after = await queryIndexer<{ fund: unknown; navRecords: unknown[]; funds: { id: string }[] }>(
      indexer.queryUrl,
      `{ fund(id: "${vault}") { id } navRecords(where: { fund: "${vault}" }) { id } funds(orderBy: id) { id } }`,
    );
    expect(after).toEqual({
      fund: null,
      navRecords: [],
      funds: registeredVaults()
        .sort()
        .map((id) => ({ id })),
    });

    const fresh = await startIndexer();
    await fresh.waitForBlock(head);
    expect(storedDataSources(fresh.storePath)).toEqual(registeredSources());
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(fresh.storePath));
  });

  it('ignores the vault’s events on the new branch, where it is not a data source', async () => {
    const vaultLogs = await actions.rpc.request<{ blockNumber: string; topics: string[] }[]>('eth_getLogs', [
      { address: vaultFund.vault, fromBlock: `0x${(ancestor + 1).toString(16)}`, toBlock: 'latest' },
    ]);
    expect(vaultLogs.map((l) => Number(l.blockNumber))).toContain(pausedOnNewBranch);
    // neither the lost branch's events nor the new branch's
    expect(await eventsOf(indexer.queryUrl, vault)).toEqual([]);
    expect((await navsOfEpoch(indexer.queryUrl, 7)).map((n) => n.navPerShare)).toEqual(
      deployment.funds.map(() => '1700000'),
    );
  });

  it('indexes the vault registered again on the new branch from its new registration block only', async () => {
    const earlierLogs = await actions.rpc.request<unknown[]>('eth_getLogs', [
      { address: vaultFund.vault, fromBlock: `0x${vaultFund.block.toString(16)}`, toBlock: 'latest' },
    ]);
    // the constructor's OwnershipTransferred and the subscriptions pause, both before the registration
    expect(earlierLogs.length).toBeGreaterThanOrEqual(2);
    const registeredBlock = await actions.registerFund(vaultFund.vault, slug);
    const pausedBlock = await actions.pauseVault(vaultFund.vault, vaultFund.multisig, 1);
    await indexer.waitForBlock(pausedBlock);

    expect(storedDataSources(indexer.storePath)).toEqual([
      ...registeredSources(),
      { address: vault, createdBlock: registeredBlock },
    ]);
    const fund = await queryIndexer<{ fund: { pausedModules: string[]; registeredAtBlock: string } }>(
      indexer.queryUrl,
      `{ fund(id: "${vault}") { pausedModules registeredAtBlock } }`,
    );
    // on chain subscriptions are paused too, but that happened before the vault was a data source
    expect(fund.fund).toEqual({ pausedModules: ['redemptions'], registeredAtBlock: String(registeredBlock) });
    expect(await eventsOf(indexer.queryUrl, vault)).toEqual([
      { eventName: 'ModulePaused', blockNumber: String(pausedBlock) },
    ]);

    const fresh = await startIndexer();
    await fresh.waitForBlock(pausedBlock);
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(fresh.storePath));
  });
});

describe('indexer: a reorg deeper than the history the store keeps', () => {
  it('indexes the chain again from the start, to the state a fresh run builds', async () => {
    const lines: string[] = [];
    const pruned = await indexers.start(devnet.rpcUrl, {
      historyBlocks: 2,
      reorgThreshold: 1,
      log: (l) => lines.push(l),
    });
    const snapshot = await actions.snapshot();
    await actions.draftAll(20, 2_000_000n);
    await actions.rpc.request('anvil_mine', ['0x5']);
    const lostHead = (await actions.head()).number;
    await pruned.waitForBlock(lostHead);
    await actions.revert(snapshot);
    await actions.draftAll(20, 2_100_000n);
    await actions.rpc.request('anvil_mine', ['0x6']);
    const head = await actions.head();
    await pruned.waitForBlock(head.number);

    expect(lines.filter((l) => l.startsWith('reorg:'))).toEqual([
      expect.stringMatching(
        /reverted to block \d+ \(the reorg goes deeper than the history the store keeps: indexing starts over\)$/,
      ),
    ]);
    const fresh = await startIndexer();
    await fresh.waitForBlock(head.number);
    const current = `{
      funds(orderBy: id) { id closed pausedModules latestNav { id navPerShare } }
      navRecords(first: 1000, orderBy: id) { id status navPerShare }
    }`;
    expect(await queryIndexer(pruned.queryUrl, current)).toEqual(await queryIndexer(fresh.queryUrl, current));
    expect((await navsOfEpoch(pruned.queryUrl, 20)).map((n) => n.navPerShare)).toEqual(
      deployment.funds.map(() => '2100000'),
    );
  });
});

describe('indexer: a reorg to a shorter chain', () => {
  it('reverts to the common ancestor when the node’s head is below the last block indexed, and indexes the new branch as a fresh run would', async () => {
    const ancestor = (await actions.head()).number;
    await indexer.waitForBlock(ancestor);
    const reorgLinesBefore = logLines.filter((l) => l.startsWith('reorg:')).length;
    const snapshot = await actions.snapshot();
    await actions.draftAll(30, 3_000_000n);
    await actions.rpc.request('anvil_mine', ['0x5']);
    const lostHead = (await actions.head()).number;
    await indexer.waitForBlock(lostHead);

    await actions.revert(snapshot);
    const newHead = await actions.draftAll(30, 3_100_000n);
    expect(newHead).toBe(ancestor + 1);
    const { hash } = await actions.head();
    const metaBlock = async () =>
      (
        await queryIndexer<{ _meta: { block: { number: number; hash: string } } }>(
          indexer.queryUrl,
          '{ _meta { block { number hash } } }',
        )
      )._meta.block;
    await vi.waitFor(async () => expect(await metaBlock()).toEqual({ number: newHead, hash }), {
      timeout: 20_000,
      interval: 50,
    });

    expect(logLines.filter((l) => l.startsWith('reorg:')).slice(reorgLinesBefore)).toEqual([
      `reorg: block ${lostHead} is no longer canonical (the node's head is block ${newHead}); reverted to block ${ancestor}`,
    ]);
    expect((await navsOfEpoch(indexer.queryUrl, 30)).map((n) => n.navPerShare)).toEqual(
      deployment.funds.map(() => '3100000'),
    );
    const fresh = await startIndexer();
    await fresh.waitForBlock(newHead);
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(fresh.storePath));
  });
});
