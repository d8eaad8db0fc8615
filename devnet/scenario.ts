// Seeds a deployed devnet with a realistic, reproducible history: investors subscribing and
// redeeming, daily settlements with the strategies' P&L split by each fund's policy, the NAV
// lifecycle (with rejections) lagging one step per day, allocation changes, dividend rounds with
// Merkle distributions and claims, pauses, and one fund closing. Each day is two blocks, both
// mined explicitly: the settlement block at midnight UTC and the oracle block one hour later.
//
// This file is the day loop: it decides what goes into each block and in which order. The parts
// live in scenario/ (funds.ts holds the per-fund plan and state, context.ts what they all share).
// The order of the calls here is the order of the random draws, which the same seed must replay:
// moving a call changes the chain.
import { DEVNET_GENESIS_TIMESTAMP } from './anvil.ts';
import type { Deployment } from './deploy.ts';
import type { Ledger } from './ledger.ts';
import type { ScenarioParams } from './scenario-params.ts';
import type { TxRequest } from './tx-queue.ts';
import { createScenarioContext, txRef, type ScenarioContext } from './scenario/context.ts';
import { dividendRound, dueClaims, recordClaims, recordRounds } from './scenario/dividends.ts';
import { recordEndState } from './scenario/end-state.ts';
import {
  closeTx,
  fundSetupTxs,
  recordFundAdmin,
  scheduledModuleChanges,
  scheduledReallocation,
} from './scenario/fund-admin.ts';
import type { FundRun } from './scenario/funds.ts';
import { investorRequests, recordRequests, redeemEveryHolder } from './scenario/investors.ts';
import { advanceRecords, applyOracleSteps } from './scenario/nav.ts';
import { applySettlement, dailyPnl, settleTx, type Settle } from './scenario/settlement.ts';

const DAY = 86_400n;

export async function runScenario(
  rpcUrl: string,
  deployment: Deployment,
  params: ScenarioParams,
): Promise<Ledger> {
  const started = Date.now();
  const ctx = createScenarioContext(rpcUrl, deployment, params);
  await setupBlock(ctx);
  for (let day = 1; day <= params.epochs; day++) {
    const dayStart = BigInt(DEVNET_GENESIS_TIMESTAMP) + BigInt(day) * DAY;
    const settled = await settlementBlock(ctx, day, dayStart);
    await oracleBlock(ctx, day, dayStart + 3600n, settled);
  }
  await recordEndState(ctx);
  ctx.ledger.seedingMs = Date.now() - started;
  return ctx.ledger;
}

/** An hour after the deployment: the multisigs funded and the initial strategy tables. */
async function setupBlock(ctx: ScenarioContext): Promise<void> {
  await ctx.queue.send(ctx.funds.flatMap((fund) => fundSetupTxs(ctx, fund)));
  recordFundAdmin(ctx, await ctx.queue.mine(BigInt(ctx.deployment.deployedAt) + 3600n));
}

/** A settlement block's transactions in the three groups it holds, in block order. */
interface SettlementDay {
  /** The multisigs' unpauses, reallocations and closes: in force for the day's requests. */
  adminBefore: TxRequest[];
  /** Claims, subscriptions and redemptions. */
  investorTxs: TxRequest[];
  /** The multisigs' pauses, then the settles, which close each epoch on the day's requests. */
  adminAfter: TxRequest[];
  /** Each settle with its position in adminAfter. */
  settles: (Settle & { index: number })[];
}

function planFundDay(ctx: ScenarioContext, fund: FundRun, day: number, txs: SettlementDay): void {
  if (day < fund.plan.launchDay) return;
  // Holders of a closed fund still claim their past dividends.
  txs.investorTxs.push(...dueClaims(ctx, fund, day));
  if (fund.finished) return;
  const epoch = fund.nextEpoch;
  txs.adminBefore.push(...scheduledModuleChanges(ctx, fund, day, 'unpause'));
  txs.adminBefore.push(...scheduledReallocation(ctx, fund, day));
  if (fund.plan.closeDay === day) {
    txs.adminBefore.push(closeTx(ctx, fund));
    txs.investorTxs.push(...redeemEveryHolder(ctx, fund, epoch));
  } else {
    txs.investorTxs.push(...investorRequests(ctx, fund, day, epoch));
  }
  txs.adminAfter.push(...scheduledModuleChanges(ctx, fund, day, 'pause'));
  const settle = { fund, epoch, pnl: dailyPnl(ctx, fund) };
  txs.settles.push({ ...settle, index: txs.adminAfter.length });
  txs.adminAfter.push(settleTx(ctx, settle));
}

/** Midnight: every fund's day planned in fund order, mined as one block, then booked. Returns the settles. */
async function settlementBlock(ctx: ScenarioContext, day: number, timestamp: bigint): Promise<Settle[]> {
  const txs: SettlementDay = { adminBefore: [], investorTxs: [], adminAfter: [], settles: [] };
  for (const fund of ctx.funds) planFundDay(ctx, fund, day, txs);
  await ctx.queue.send(txs.adminBefore);
  const investorHashes = new Set(await ctx.queue.send(txs.investorTxs));
  const adminHashes = await ctx.queue.send(txs.adminAfter);
  const settling = new Map(txs.settles.map((s) => [adminHashes[s.index]!, s]));
  const block = await ctx.queue.mine(timestamp);
  recordFundAdmin(ctx, block);
  recordRequests(ctx, block, investorHashes);
  recordClaims(ctx, block, investorHashes);
  for (const { hash, receipt } of block.txs) {
    const settled = settling.get(hash);
    if (settled) applySettlement(ctx, settled, receipt, txRef(block, hash), day);
  }
  return txs.settles;
}

/** 01:00: each NAV record's next step, then the dividend rounds due, computed on the settled state. */
async function oracleBlock(
  ctx: ScenarioContext,
  day: number,
  timestamp: bigint,
  settled: Settle[],
): Promise<void> {
  const steps = ctx.funds.flatMap((fund) => advanceRecords(ctx, fund, day));
  const roundTxs: TxRequest[] = [];
  for (const { fund, epoch } of settled) {
    if (epoch % ctx.params.roundInterval !== 0) continue;
    const round = await dividendRound(ctx, fund, epoch, day);
    if (round) roundTxs.push(round);
  }
  const stepHashes = await ctx.queue.send(steps.map((s) => s.request));
  const roundHashes = await ctx.queue.send(roundTxs);
  const block = await ctx.queue.mine(timestamp);
  applyOracleSteps(block, steps, stepHashes);
  recordRounds(ctx, block, new Set(roundHashes));
}
