// NavRecord.settledAt, the date of the epoch a NAV values: the block time of the vault's
// settlement of that epoch, which publishedAt (days later, and null before publication) is not.
// Over the indexed devnet every record's settledAt is its ledger settlement's time; on a private
// devnet a record the NavOracle holds for an epoch its vault has not settled has none.
import { encodeFunctionData, parseAbi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/server.ts';
import type { Indexer } from '../../indexer/indexer.ts';
import { createRpcClient } from '../../devnet/rpc.ts';
import { startPrivateDevnet, type SeededPrivateDevnet } from '../harness/private-devnet.ts';
import { indexedGateway, transact } from '../harness/private-gateway.ts';
import { graphql, indexedStack, testGateway, type IndexedStack } from '../harness/stack.ts';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe('settledAt over the indexed devnet', () => {
  let stack: IndexedStack;
  let gateway: Gateway;
  beforeAll(async () => {
    stack = await indexedStack();
    gateway = testGateway(stack);
  });

  /** the ledger's settlement time of each epoch of `slug`, ISO */
  const settledAtByEpoch = (slug: string) =>
    new Map(
      stack.devnet.ledger.settlements.filter((s) => s.fund === slug).map((s) => [s.epoch, iso(s.timestamp)]),
    );

  it("dates every record of every fund's history by its epoch's settlement, whatever its status", async () => {
    for (const fund of stack.devnet.ledger.funds) {
      const { data, errors } = await graphql(
        gateway,
        `{ fund(slug: "${fund.slug}") { navHistory(from: 0, limit: 500) { epoch status settledAt } } }`,
      );
      expect(errors).toBeUndefined();
      const settled = settledAtByEpoch(fund.slug);
      const records = stack.devnet.ledger.navRecords.filter((r) => r.fund === fund.slug);
      expect(data?.fund.navHistory).toEqual(
        records.map((r) => ({ epoch: r.epoch, status: r.status, settledAt: settled.get(r.epoch) })),
      );
    }
  });

  it('gives the records not yet published the date publishedAt lacks', async () => {
    const slug = stack.devnet.ledger.funds[0]!.slug;
    const { data } = await graphql(
      gateway,
      `{ fund(slug: "${slug}") { latestRecordedNav { epoch status publishedAt settledAt } } }`,
    );
    const latest = data?.fund.latestRecordedNav;
    expect(latest.status).toBe('Draft');
    expect(latest.publishedAt).toBeNull();
    expect(latest.settledAt).toBe(settledAtByEpoch(slug).get(latest.epoch));
  });

  it("dates harbor-stable-yield's epoch 180 June 30, the day it was settled, not July 3, when it was published", async () => {
    const { data } = await graphql(
      gateway,
      '{ fund(slug: "harbor-stable-yield") { navHistory(from: 180, to: 180) { epoch settledAt publishedAt } } }',
    );
    expect(data?.fund.navHistory).toEqual([
      { epoch: 180, settledAt: '2025-06-30T00:00:00.000Z', publishedAt: '2025-07-03T01:00:00.000Z' },
    ]);
  });

  it("dates the latest published record by its settlement, as the fund's history does", async () => {
    const slug = 'harbor-stable-yield';
    const { data } = await graphql(gateway, `{ fund(slug: "${slug}") { latestNav { epoch settledAt } } }`);
    const latest = data?.fund.latestNav;
    expect(latest.settledAt).toBe(settledAtByEpoch(slug).get(latest.epoch));
  });
});

describe('settledAt of an epoch the vault has not settled', () => {
  let devnet: SeededPrivateDevnet;
  let indexer: Indexer;
  let gateway: Gateway;
  beforeAll(async () => {
    devnet = await startPrivateDevnet({
      scenario: {
        epochs: 3,
        investorsPerFund: 2,
        requestsPerEpoch: 1,
        onboardingDays: 1,
        roundInterval: 10,
        claimBps: 0,
      },
      dirPrefix: 'nav-settled-at-',
    });
    ({ indexer, gateway } = await indexedGateway(devnet));
  }, 300_000);
  afterAll(async () => {
    await indexer?.stop();
    await devnet?.stop();
  });

  it('is null for a record the NavOracle holds for an epoch its vault has not settled', async () => {
    const fund = devnet.ledger.funds[0]!;
    const open = fund.lastEpoch + 1;
    const draft = encodeFunctionData({
      abi: parseAbi([
        'function draft(address fund, uint64 epoch, uint256 navPerShare, uint256 totalAssets, uint256 totalSupply)',
      ]),
      functionName: 'draft',
      args: [fund.vault, BigInt(open), 1_000_000n, 0n, 0n],
    });
    const { status, blockNumber } = await transact(
      createRpcClient(devnet.rpcUrl),
      devnet.deployment.accounts.navOperator,
      devnet.deployment.contracts.navOracle,
      draft,
    );
    expect(status).toBe('0x1');
    await indexer.waitForBlock(blockNumber);
    const { data, errors } = await graphql(
      gateway,
      `{ fund(slug: "${fund.slug}") { navHistory(from: ${fund.lastEpoch}) { epoch status settledAt } } }`,
    );
    expect(errors).toBeUndefined();
    const settled = devnet.ledger.settlements.find(
      (s) => s.fund === fund.slug && s.epoch === fund.lastEpoch,
    )!;
    expect(data?.fund.navHistory).toEqual([
      { epoch: fund.lastEpoch, status: 'Draft', settledAt: iso(settled.timestamp) },
      { epoch: open, status: 'Draft', settledAt: null },
    ]);
  });
});
