// The daily settlement of a fund: the P&L its multisig reports (a seeded return on the last settled
// assets) and the booking of the mined EpochSettled: subscriptions turn into shares at the epoch's
// NAV, the settlement goes into the ledger, and the epoch's NAV record starts its way through the oracle.
import type { TxRef } from '../ledger.ts';
import type { TxReceipt, TxRequest } from '../tx-queue.ts';
import { contractCall, eventTopic, type ScenarioContext } from './context.ts';
import type { FundRun } from './funds.ts';
import { openNavRecord } from './nav.ts';

const NAV_ONE = 1_000_000n;

/** A settle sent for `fund`'s `epoch`, remembered until its block is mined. */
export interface Settle {
  fund: FundRun;
  epoch: number;
  pnl: bigint;
}

interface EpochSettledArgs {
  epoch: bigint;
  navPerShare: bigint;
  assetsIn: bigint;
  sharesMinted: bigint;
  sharesBurned: bigint;
  assetsOut: bigint;
  totalAssets: bigint;
  totalSupply: bigint;
  reserveBalance: bigint;
}

type SettledAmounts = Record<Exclude<keyof EpochSettledArgs, 'epoch'>, string>;

/** The strategies' P&L for one day, from the last settled assets and a seeded daily return. */
export function dailyPnl(ctx: ScenarioContext, fund: FundRun): bigint {
  const dailyMean = Math.round(fund.plan.meanPpm / 365);
  const dailyVol = Math.round((fund.plan.volPpm * 1_000) / 19_105); // vol / sqrt(365)
  const shock = ctx.random.chance(100) ? -3 * dailyVol : 0;
  const returnPpm = dailyMean + Math.round((dailyVol * ctx.random.normalMilli()) / 1_000) + shock;
  return (fund.totalAssets * BigInt(returnPpm)) / 1_000_000n;
}

export function settleTx(ctx: ScenarioContext, { fund, epoch, pnl }: Settle): TxRequest {
  const { multisig, vault, slug } = fund.deployed;
  return contractCall(multisig, vault, ctx.abis.vault, 'settle', [pnl], `${slug}: settle e${epoch}`);
}

/** Books a mined settlement: NAV, share balances, the ledger, and the NAV record to draft next. */
export function applySettlement(
  ctx: ScenarioContext,
  { fund, epoch, pnl }: Settle,
  receipt: TxReceipt,
  ref: TxRef,
  day: number,
): void {
  const settledTopic = eventTopic(ctx.abis.vault, 'EpochSettled');
  const log = receipt.logs.find((l) => l.topics[0] === settledTopic);
  if (!log) throw new Error(`${fund.deployed.slug}: settle e${epoch} emitted no EpochSettled`);
  const settled = ctx.decodeVaultLog(log)!.args as unknown as EpochSettledArgs;
  if (settled.epoch !== BigInt(epoch)) throw new Error(`${fund.deployed.slug}: settled the wrong epoch`);
  for (const { investor, amount } of fund.openSubscriptions) {
    fund.balances.set(
      investor,
      (fund.balances.get(investor) ?? 0n) + (amount * NAV_ONE) / settled.navPerShare,
    );
  }
  fund.openSubscriptions = [];
  fund.totalAssets = settled.totalAssets;
  fund.nextEpoch = epoch + 1;
  if (epoch >= fund.lastEpoch) fund.finished = true;
  const amounts = Object.fromEntries(
    (
      [
        'navPerShare',
        'assetsIn',
        'sharesMinted',
        'sharesBurned',
        'assetsOut',
        'totalAssets',
        'totalSupply',
        'reserveBalance',
      ] as const
    ).map((key) => [key, settled[key].toString()]),
  ) as SettledAmounts;
  ctx.ledger.settlements.push({
    fund: fund.deployed.slug,
    vault: fund.deployed.vault,
    epoch,
    pnl: pnl.toString(),
    ...amounts,
    ...ref,
  });
  openNavRecord(ctx, fund, epoch, amounts, day);
}
