// The seeded default scenario on the shared devnet (read-only) has the history the issue asks
// for, and the chain agrees with the scenario's ledger: funds and policies, daily settlements,
// the NAV lifecycle's end state and rejections, allocation changes, dividend rounds whose
// distribution files match the on-chain roots, claims, and pauses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  http,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { describe, expect, inject, it } from 'vitest';
import { abiOf } from '../../devnet/deploy.ts';
import { NAV_ORACLE_STATUSES } from '../../devnet/ledger.ts';

const { rpcUrl, deployment, ledger, dataDir } = inject('devnet');
const client = createPublicClient({ transport: http(rpcUrl) }) as PublicClient;
const DAY = 86_400;
const oracleAbi = abiOf('NavOracle');
const vaultAbi = abiOf('FundVault');
const distributorAbi = abiOf('DividendDistributor');
const read = <T>(address: Address, abi: Abi, functionName: string, args: unknown[] = []) =>
  client.readContract({ address, abi, functionName, args }) as Promise<T>;
const activeFunds = ledger.funds.filter((f) => f.status === 'active');

async function revertName(call: () => Promise<unknown>): Promise<string | null> {
  try {
    await call();
    return null;
  } catch (error) {
    const reverted =
      error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
    return reverted instanceof ContractFunctionRevertedError
      ? (reverted.data?.errorName ?? 'unknown')
      : 'not a revert';
  }
}

describe('the default devnet scenario', () => {
  it('has three funds, one per policy, and one of them closed on chain', async () => {
    expect(deployment.funds.length).toBeGreaterThanOrEqual(3);
    expect(new Set(deployment.funds.map((f) => f.policyName))).toEqual(
      new Set(['ThreePoolPolicy', 'KellyPolicy']),
    );
    const closed = await Promise.all(deployment.funds.map((f) => read<boolean>(f.vault, vaultAbi, 'closed')));
    expect(closed).toEqual(ledger.funds.map((f) => f.status === 'closed'));
    expect(closed.filter(Boolean)).toHaveLength(1);
  });

  it('settles at least 180 daily epochs per active fund, one day apart', async () => {
    for (const fund of activeFunds) {
      const settlements = ledger.settlements.filter((s) => s.fund === fund.slug);
      expect(settlements.length).toBeGreaterThanOrEqual(180);
      expect(settlements.map((s) => s.epoch)).toEqual(settlements.map((_, i) => i + 1));
      for (let i = 1; i < settlements.length; i++) {
        expect(settlements[i]!.timestamp - settlements[i - 1]!.timestamp).toBe(DAY);
      }
      const last = settlements.at(-1)!;
      const block = await client.getBlock({ blockNumber: BigInt(last.blockNumber) });
      expect(Number(block.timestamp)).toBe(last.timestamp);
      expect(await read<bigint>(fund.vault, vaultAbi, 'totalAssets')).toBe(BigInt(last.totalAssets));
      expect(await read<bigint>(fund.vault, vaultAbi, 'currentEpoch')).toBe(BigInt(last.epoch + 1));
    }
  });

  it("moves NAV with the strategies' P&L", () => {
    for (const fund of ledger.funds) {
      const navs = new Set(ledger.settlements.filter((s) => s.fund === fund.slug).map((s) => s.navPerShare));
      expect(navs.size).toBeGreaterThan(20);
    }
  });

  it('leaves the latest epochs of each active fund in Verified, PendingVerification and Draft', async () => {
    for (const fund of activeFunds) {
      const statuses = [];
      for (let epoch = fund.lastEpoch - 3; epoch <= fund.lastEpoch; epoch++) {
        const [status] = await read<readonly [number]>(deployment.contracts.navOracle, oracleAbi, 'record', [
          fund.vault,
          BigInt(epoch),
        ]);
        statuses.push(NAV_ORACLE_STATUSES[status]);
      }
      expect(statuses).toEqual(['Published', 'Verified', 'PendingVerification', 'Draft']);
      const ledgerStatuses = ledger.navRecords.filter((r) => r.fund === fund.slug).map((r) => r.status);
      expect(ledgerStatuses.slice(-4)).toEqual(statuses);
    }
  });

  it('agrees with the oracle on every NAV record and publishes in epoch order', async () => {
    const calls = ledger.navRecords.map((r) => ({
      address: deployment.contracts.navOracle,
      abi: oracleAbi,
      functionName: 'record',
      args: [r.vault, BigInt(r.epoch)],
    }));
    const records = await client.multicall({
      contracts: calls,
      allowFailure: false,
      multicallAddress: deployment.contracts.multicall3,
    });
    ledger.navRecords.forEach((r, i) => {
      const [status, navPerShare] = records[i] as readonly [number, bigint];
      expect([NAV_ORACLE_STATUSES[status], navPerShare.toString()]).toEqual([r.status, r.navPerShare]);
    });
    for (const fund of ledger.funds) {
      const published = ledger.navRecords
        .filter((r) => r.fund === fund.slug && r.publishedAt !== null)
        .sort((a, b) => a.publishedAt! - b.publishedAt! || a.epoch - b.epoch);
      expect(published.map((r) => r.epoch)).toEqual(published.map((_, i) => i + 1));
    }
  });

  it('rejects some NAVs from both PendingVerification and Verified, and publishes them after', () => {
    const rejected = ledger.navRecords.filter((r) => r.transitions.some((t) => t.action === 'reject'));
    expect(rejected.length).toBeGreaterThan(0);
    const from = new Set(
      rejected.flatMap((r) =>
        r.transitions.map((t, i) => (t.action === 'reject' ? r.transitions[i - 1]!.status : null)),
      ),
    );
    expect(from).toEqual(new Set(['PendingVerification', 'Verified', null]));
    expect(ledger.eventCounts.NavOracle?.NavRejected).toBe(
      rejected.reduce((n, r) => n + r.transitions.filter((t) => t.action === 'reject').length, 0),
    );
    expect(rejected.every((r) => r.transitions.at(-1)!.action !== 'reject')).toBe(true);
  });

  it('uses at least six strategies and changes allocations over time, as the vaults report', async () => {
    const used = new Set(ledger.allocations.map((a) => a.strategySlug));
    expect(used.size).toBeGreaterThanOrEqual(6);
    for (const fund of ledger.funds) {
      const blocks = new Set(
        ledger.allocations.filter((a) => a.fund === fund.slug).map((a) => a.blockNumber),
      );
      expect(blocks.size).toBeGreaterThan(2);
      const onChain = await read<readonly { strategy: Address }[]>(fund.vault, vaultAbi, 'strategies');
      expect(onChain).toEqual(
        fund.strategies.map(({ strategy, targetBps, capBps, active }) => ({
          strategy,
          targetBps,
          capBps,
          active,
        })),
      );
    }
  });

  it('posts at least six dividend rounds of at least 200 holders, each matching its distribution file', async () => {
    expect(ledger.rounds.length).toBeGreaterThanOrEqual(6);
    for (const round of ledger.rounds) {
      expect(round.leafCount).toBeGreaterThanOrEqual(200);
      const tree = StandardMerkleTree.load(JSON.parse(readFileSync(join(dataDir, round.uri), 'utf8')));
      expect(tree.root).toBe(round.merkleRoot);
      expect(tree.length).toBe(round.leafCount);
      let total = 0n;
      for (const [, [, amount]] of tree.entries()) total += BigInt(amount as string);
      expect(total.toString()).toBe(round.total);
      const [root, onChainTotal, , leafCount, uri] = await read<
        readonly [Hex, bigint, bigint, number, string]
      >(deployment.contracts.dividendDistributor, distributorAbi, 'round', [
        round.vault,
        BigInt(round.epoch),
      ]);
      expect([root, onChainTotal.toString(), leafCount, uri]).toEqual([
        round.merkleRoot,
        round.total,
        round.leafCount,
        round.uri,
      ]);
    }
  });

  it('records claims that the distributor marks claimed, and leaves other leaves claimable', async () => {
    expect(ledger.claims.length).toBeGreaterThan(0);
    const claimed = await Promise.all(
      ledger.claims.map((c) =>
        read<boolean>(deployment.contracts.dividendDistributor, distributorAbi, 'isClaimed', [
          c.vault,
          BigInt(c.epoch),
          c.account,
        ]),
      ),
    );
    expect(claimed.every(Boolean)).toBe(true);

    const round = ledger.rounds.at(-1)!;
    const tree = StandardMerkleTree.load(JSON.parse(readFileSync(join(dataDir, round.uri), 'utf8')));
    const claimedHere = new Set(
      ledger.claims.filter((c) => c.vault === round.vault && c.epoch === round.epoch).map((c) => c.account),
    );
    const simulate = (i: number) => {
      const [account, amount] = tree.at(i)! as [Address, string];
      return client.simulateContract({
        account,
        address: deployment.contracts.dividendDistributor,
        abi: distributorAbi,
        functionName: 'claim',
        args: [round.vault, BigInt(round.epoch), account, BigInt(amount), tree.getProof(i)],
      });
    };
    const indices = [...Array(tree.length).keys()];
    const open = indices.find((i) => !claimedHere.has(tree.at(i)![0] as Address));
    expect(await revertName(() => simulate(open!))).toBeNull();
    const done = indices.find((i) => claimedHere.has(tree.at(i)![0] as Address));
    if (done !== undefined) expect(await revertName(() => simulate(done))).toBe('AlreadyClaimed');
  });

  it('pauses and unpauses modules, and the vaults report the final paused state', async () => {
    expect(ledger.moduleChanges.some((m) => m.paused)).toBe(true);
    expect(ledger.moduleChanges.some((m) => !m.paused)).toBe(true);
    for (const fund of ledger.funds) {
      const paused = await read<readonly boolean[]>(fund.vault, vaultAbi, 'pausedModules');
      expect(paused).toEqual([
        fund.pausedModules.subscriptions,
        fund.pausedModules.redemptions,
        fund.pausedModules.claims,
      ]);
    }
  });

  it('counts the same events as the chain holds', async () => {
    const settled = await client.getLogs({
      address: deployment.funds.map((f) => f.vault),
      event: vaultAbi.find((e) => e.type === 'event' && e.name === 'EpochSettled') as never,
      fromBlock: BigInt(deployment.startBlock),
      toBlock: BigInt(ledger.endBlock),
    });
    expect(settled.length).toBe(ledger.settlements.length);
    expect(ledger.eventCounts.FundVault?.EpochSettled).toBe(ledger.settlements.length);
    expect(ledger.eventCounts.DividendDistributor?.DividendClaimed).toBe(ledger.claims.length);
    expect(ledger.eventCounts.FundRegistry?.FundRegistered).toBe(deployment.funds.length);
    expect(ledger.eventCounts.unknown).toBeUndefined();
  });
});
