// Dividend rounds and their claims. Every `roundInterval` epochs a fund shares out the holders'
// dividends its policy accumulated in the distributor, pro rata to share balances: the leaves go
// into an OpenZeppelin StandardMerkleTree whose dump is written under the data dir (the round's
// uri points there), the root is posted on chain, and a seeded share of the leaves is scheduled to
// claim over the next days.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import type { MinedBlock, TxRequest } from '../tx-queue.ts';
import { contractCall, eventTopic, minedLogs, USDC, type ScenarioContext } from './context.ts';
import { MODULE, type FundRun } from './funds.ts';

/**
 * The distributor's unallocated dividends of the fund and the share balance of every account that
 * ever held its shares, read from the chain. The scenario's own balances must agree: the rounds are
 * computed from the chain, the next days' redemptions from the scenario's balances.
 */
async function holdingsOnChain(
  ctx: ScenarioContext,
  fund: FundRun,
): Promise<{ available: bigint; balances: (readonly [Address, bigint])[] }> {
  const { vault, shareToken, slug } = fund.deployed;
  const holders = [...fund.balances.keys()];
  const calls = [
    {
      to: ctx.deployment.contracts.dividendDistributor,
      data: encodeFunctionData({ abi: ctx.abis.distributor, functionName: 'unallocated', args: [vault] }),
    },
    ...holders.map((h) => ({
      to: shareToken,
      data: encodeFunctionData({ abi: ctx.abis.share, functionName: 'balanceOf', args: [h] }),
    })),
  ];
  const results = await ctx.rpc.batch<Hex>(calls.map((c) => ({ method: 'eth_call', params: [c, 'latest'] })));
  const balances = holders.map((h, i) => [h, BigInt(results[i + 1]!)] as const);
  for (const [holder, balance] of balances) {
    if (balance !== fund.balances.get(holder)) {
      throw new Error(
        `${slug}: share balance of ${holder} is ${balance} on chain, ${fund.balances.get(holder)} in the scenario`,
      );
    }
  }
  return { available: BigInt(results[0]!), balances };
}

/**
 * The postRound of the fund's round at `epoch`, with its distribution file written and its claims
 * scheduled; null when the dividends are too small and roll over to the next round.
 */
export async function dividendRound(
  ctx: ScenarioContext,
  fund: FundRun,
  epoch: number,
  day: number,
): Promise<TxRequest | null> {
  const { random, params } = ctx;
  const { vault, multisig, slug } = fund.deployed;
  const { available, balances } = await holdingsOnChain(ctx, fund);
  const positive = balances.filter(([, b]) => b > 0n);
  const supply = positive.reduce((sum, [, b]) => sum + b, 0n);
  // A round pays at least one base unit (1 USDC) per holder on average; less rolls over.
  if (supply === 0n || available < BigInt(positive.length) * USDC) return null;
  const leaves = positive
    .map(([holder, balance]) => [holder, (available * balance) / supply] as const)
    .filter(([, amount]) => amount > 0n);
  if (leaves.length === 0) return null;
  const tree = StandardMerkleTree.of(
    leaves.map(([holder, amount]) => [holder, amount.toString()]),
    ['address', 'uint256'],
  );
  const total = leaves.reduce((sum, [, amount]) => sum + amount, 0n);
  const uri = `distributions/${slug}/${epoch}.json`;
  const file = join(params.dataDir, uri);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(tree.dump()));
  for (const [i, [account, amount]] of tree.entries()) {
    if (random.chance(params.claimBps)) {
      fund.claims.push({
        epoch,
        account: account as Address,
        amount: BigInt(amount as string),
        proof: tree.getProof(i) as Hex[],
        dueDay: day + random.int(1, 10),
      });
    }
  }
  return contractCall(
    multisig,
    ctx.deployment.contracts.dividendDistributor,
    ctx.abis.distributor,
    'postRound',
    [vault, BigInt(epoch), tree.root as Hex, total, leaves.length, uri],
    `${slug}: dividend round e${epoch}`,
  );
}

/** The claims due by `day`; while the fund's claims module is paused they wait. */
export function dueClaims(ctx: ScenarioContext, fund: FundRun, day: number): TxRequest[] {
  if (fund.paused[MODULE.claims]) return [];
  const due = fund.claims.filter((c) => c.dueDay <= day);
  fund.claims = fund.claims.filter((c) => c.dueDay > day);
  return due.map((c) =>
    contractCall(
      c.account,
      ctx.deployment.contracts.dividendDistributor,
      ctx.abis.distributor,
      'claim',
      [fund.deployed.vault, BigInt(c.epoch), c.account, c.amount, c.proof],
      `${fund.deployed.slug}: claim e${c.epoch}`,
    ),
  );
}

/** The distributor's `topic` events among the transactions `hashes` of a mined block. */
function* distributorEvents(ctx: ScenarioContext, block: MinedBlock, hashes: Set<Hex>, topic: Hex) {
  const distributor = ctx.deployment.contracts.dividendDistributor.toLowerCase();
  for (const { log, ref } of minedLogs(block, hashes)) {
    if (log.topics[0] !== topic || log.address.toLowerCase() !== distributor) continue;
    yield { ref, args: ctx.decodeDistributorLog(log)!.args };
  }
}

function fundSlug(ctx: ScenarioContext, vault: Address): string {
  return ctx.funds.find((f) => f.deployed.vault === vault)!.deployed.slug;
}

/** Books the claims among the investors' transactions `hashes` of a mined block. */
export function recordClaims(ctx: ScenarioContext, block: MinedBlock, hashes: Set<Hex>): void {
  const topic = eventTopic(ctx.abis.distributor, 'DividendClaimed');
  for (const { ref, args } of distributorEvents(ctx, block, hashes, topic)) {
    const claim = args as unknown as { fund: Address; epoch: bigint; account: Address; amount: bigint };
    ctx.ledger.claims.push({
      fund: fundSlug(ctx, claim.fund),
      vault: claim.fund,
      epoch: Number(claim.epoch),
      account: claim.account,
      amount: claim.amount.toString(),
      ...ref,
    });
  }
}

/** Books the rounds among the postRound transactions `hashes` of a mined block. */
export function recordRounds(ctx: ScenarioContext, block: MinedBlock, hashes: Set<Hex>): void {
  const topic = eventTopic(ctx.abis.distributor, 'DividendRoundPosted');
  for (const { ref, args } of distributorEvents(ctx, block, hashes, topic)) {
    const round = args as unknown as {
      fund: Address;
      epoch: bigint;
      merkleRoot: Hex;
      total: bigint;
      leafCount: number;
      uri: string;
    };
    ctx.ledger.rounds.push({
      fund: fundSlug(ctx, round.fund),
      vault: round.fund,
      epoch: Number(round.epoch),
      merkleRoot: round.merkleRoot,
      total: round.total.toString(),
      leafCount: round.leafCount,
      uri: round.uri,
      ...ref,
    });
  }
}
