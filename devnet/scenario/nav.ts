// The NAV lifecycle on the oracle: each settled epoch's record is drafted the day it settles, then
// moves one step per day (submit, verify, publish in epoch order), so at the end of the run the
// last epochs are still on their way. Some records are rejected once (from PendingVerification or
// Verified), which sends them back to Draft to be re-drafted and published late.
import type { Hex } from 'viem';
import type { LedgerNavRecord, NavStatus, NavTransition } from '../ledger.ts';
import type { MinedBlock, TxRequest } from '../tx-queue.ts';
import { contractCall, txRef, type ScenarioContext } from './context.ts';
import type { FundRun, RecordRun } from './funds.ts';

type NavAction = NavTransition['action'];

/** One oracle transaction for one record, to be booked once its block is mined. */
interface OracleStep {
  record: RecordRun;
  request: TxRequest;
  action: NavAction;
  reason: string;
}

const REJECTION_REASONS = [
  'stale price feed for a strategy position',
  'totalAssets does not match the custodian report',
  'share supply differs from the settlement record',
];

const nextStatus: Record<NavAction, NavStatus> = {
  draft: 'Draft',
  submit: 'PendingVerification',
  verify: 'Verified',
  reject: 'Draft',
  publish: 'Published',
};

/**
 * The record of a just-settled epoch, in the ledger as Draft and drafted in today's oracle block.
 * Whether it will be rejected is drawn now. The last 10 epochs are never rejected at random: a late
 * rejection would still hold up publication at the end, where the run is to leave the regular
 * staircase (last epoch Draft, the one before PendingVerification, the one before Verified).
 * A forced or late epoch draws nothing: the short-circuits below are part of the draw order.
 */
export function openNavRecord(
  ctx: ScenarioContext,
  fund: FundRun,
  epoch: number,
  values: { navPerShare: string; totalAssets: string; totalSupply: string },
  day: number,
): void {
  const { random } = ctx;
  const forced = fund.plan.forcedRejections.find((r) => r.epoch === epoch);
  const lateEpoch = epoch > fund.lastEpoch - 10;
  const rejectAt: NavStatus | null =
    forced?.stage ??
    (!lateEpoch && random.chance(300) ? random.pick(['PendingVerification', 'Verified'] as const) : null);
  const record: LedgerNavRecord = {
    fund: fund.deployed.slug,
    vault: fund.deployed.vault,
    epoch,
    status: 'Draft',
    navPerShare: values.navPerShare,
    totalAssets: values.totalAssets,
    totalSupply: values.totalSupply,
    publishedAt: null,
    publishTxHash: null,
    transitions: [],
  };
  ctx.ledger.navRecords.push(record);
  fund.records.push({ ledger: record, lastStepDay: day - 1, rejectAt, needsRedraft: true });
}

function oracleTx(ctx: ScenarioContext, record: RecordRun, action: NavAction, reason: string): TxRequest {
  const { navOracle } = ctx.deployment.contracts;
  const { navOperator, verifier } = ctx.deployment.accounts;
  const abi = ctx.abis.oracle;
  const r = record.ledger;
  const epoch = BigInt(r.epoch);
  const label = `${r.fund}: ${action} NAV e${r.epoch}`;
  switch (action) {
    case 'draft':
      return contractCall(
        navOperator,
        navOracle,
        abi,
        'draft',
        [r.vault, epoch, BigInt(r.navPerShare), BigInt(r.totalAssets), BigInt(r.totalSupply)],
        label,
      );
    case 'reject':
      return contractCall(verifier, navOracle, abi, 'reject', [r.vault, epoch, reason], label);
    case 'verify':
      return contractCall(verifier, navOracle, abi, 'verify', [r.vault, epoch], label);
    default:
      return contractCall(navOperator, navOracle, abi, action, [r.vault, epoch], label);
  }
}

/** The day's next step of each of the fund's records, oldest first; publishes only in epoch order. */
export function advanceRecords(ctx: ScenarioContext, fund: FundRun, day: number): OracleStep[] {
  const steps: OracleStep[] = [];
  for (const record of fund.records) {
    const status = record.ledger.status;
    if (status === 'Published' || record.lastStepDay >= day) continue;
    let action: NavAction | null = null;
    if (status === 'Draft') action = record.needsRedraft ? 'draft' : 'submit';
    else if (status === 'PendingVerification') action = record.rejectAt === status ? 'reject' : 'verify';
    else if (status === 'Verified') {
      if (record.rejectAt === status) action = 'reject';
      else if (record.ledger.epoch === fund.lastPublished + 1) action = 'publish';
    }
    if (!action) continue;
    if (action === 'publish') fund.lastPublished = record.ledger.epoch;
    record.lastStepDay = day;
    const reason = action === 'reject' ? ctx.random.pick(REJECTION_REASONS) : '';
    steps.push({ record, request: oracleTx(ctx, record, action, reason), action, reason });
  }
  return steps;
}

/** Books the mined oracle steps (`hashes` in the order of `steps`) into their records and the ledger. */
export function applyOracleSteps(block: MinedBlock, steps: OracleStep[], hashes: Hex[]): void {
  steps.forEach((step, i) => {
    const record = step.record;
    const status = nextStatus[step.action];
    if (step.action === 'draft') record.needsRedraft = false;
    if (step.action === 'reject') {
      record.rejectAt = null;
      record.needsRedraft = true;
    }
    const ref = txRef(block, hashes[i]!);
    record.ledger.status = status;
    if (status === 'Published') {
      record.ledger.publishedAt = ref.timestamp;
      record.ledger.publishTxHash = ref.txHash;
    }
    record.ledger.transitions.push({
      action: step.action,
      status,
      ...(step.action === 'reject' ? { reason: step.reason } : {}),
      ...ref,
    });
  });
}
