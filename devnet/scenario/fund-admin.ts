// What a fund's multisig does to its own vault besides settling: funding itself, the strategy
// table (set up at the start, reweighted and rotated every 15-35 days), the plan's pauses and the
// close, and the booking of the vault events these calls emit.
import { maxUint256, type Address } from 'viem';
import { MODULE_NAMES } from '../ledger.ts';
import { strategyAddress } from '../protocol-config.ts';
import type { Random } from '../random.ts';
import type { MinedBlock, TxRequest } from '../tx-queue.ts';
import { contractCall, eventTopic, minedLogs, USDC, type ScenarioContext } from './context.ts';
import type { FundRun, StrategyRun } from './funds.ts';

/** Targets for `count` active strategies summing to 90-100%, each with some headroom to its cap. */
function allocationTargets(random: Random, count: number): { targetBps: number; capBps: number }[] {
  const weights = Array.from({ length: count }, () => random.int(1, 10));
  const sum = weights.reduce((a, b) => a + b, 0);
  const total = random.int(9_000, 10_000);
  return weights.map((w) => {
    const targetBps = Math.floor((total * w) / sum);
    return { targetBps, capBps: Math.min(10_000, targetBps + random.int(500, 2_500)) };
  });
}

function strategySlug(ctx: ScenarioContext, address: Address): string {
  return ctx.deployment.strategies.find((s) => s.address.toLowerCase() === address.toLowerCase())?.slug ?? '';
}

/** The fund multisig's setStrategy call for one row of the strategy table. */
function setStrategyTx(
  ctx: ScenarioContext,
  { deployed }: FundRun,
  s: StrategyRun,
  purpose: string,
): TxRequest {
  return contractCall(
    deployed.multisig,
    deployed.vault,
    ctx.abis.vault,
    'setStrategy',
    [s.address, s.targetBps, s.capBps, s.active],
    `${deployed.slug}: ${purpose}`,
  );
}

/**
 * The setup block's calls of one fund: its multisig, which pays in profits and receives losses at
 * each settlement, gets the USDC for it and approves the vault, then the initial strategy table.
 */
export function fundSetupTxs(ctx: ScenarioContext, fund: FundRun): TxRequest[] {
  const { baseAsset } = ctx.deployment.contracts;
  const { multisig, vault, slug } = fund.deployed;
  const txs = [
    contractCall(
      multisig,
      baseAsset,
      ctx.abis.usdc,
      'mint',
      [multisig, 1_000_000_000n * USDC],
      `${slug}: fund multisig`,
    ),
    contractCall(
      multisig,
      baseAsset,
      ctx.abis.usdc,
      'approve',
      [vault, maxUint256],
      `${slug}: multisig approves vault`,
    ),
  ];
  const targets = allocationTargets(ctx.random, fund.plan.initialStrategies.length);
  fund.plan.initialStrategies.forEach((slug, i) => {
    fund.strategies.push({ slug, address: strategyAddress(slug), ...targets[i]!, active: true });
  });
  for (const s of fund.strategies) txs.push(setStrategyTx(ctx, fund, s, 'strategy'));
  return txs;
}

/** On the fund's allocation day: new targets, sometimes with a strategy rotated out and one in. */
export function scheduledReallocation(ctx: ScenarioContext, fund: FundRun, day: number): TxRequest[] {
  if (day < fund.nextAllocationDay) return [];
  const txs = reallocate(ctx, fund);
  fund.nextAllocationDay = day + ctx.random.int(15, 35);
  return txs;
}

function reallocate(ctx: ScenarioContext, fund: FundRun): TxRequest[] {
  const { random } = ctx;
  const before = new Map(fund.strategies.map((s) => [s.address, { ...s }]));
  const active = fund.strategies.filter((s) => s.active);
  const inactive = fund.strategies.filter((s) => !s.active);
  const spare = fund.plan.spareStrategies.filter((s) => !fund.strategies.some((f) => f.slug === s));
  if (random.chance(3_500) && active.length > 2) {
    // Rotate: retire one strategy, bring in a spare (or a retired one).
    const retired = random.pick(active);
    retired.active = false;
    const candidates = [
      ...inactive,
      ...spare.map((slug) => ({
        slug,
        address: strategyAddress(slug),
        targetBps: 0,
        capBps: 0,
        active: false,
      })),
    ];
    if (candidates.length > 0) {
      const joining = random.pick(candidates);
      joining.active = true;
      if (!fund.strategies.includes(joining)) fund.strategies.push(joining);
    }
  }
  const nowActive = fund.strategies.filter((s) => s.active);
  const targets = allocationTargets(random, nowActive.length);
  nowActive.forEach((s, i) => Object.assign(s, targets[i]));
  // Lower or retire first, raise after: the active targets never pass 100% on the way.
  const changes = fund.strategies.filter((s) => {
    const old = before.get(s.address);
    return !old || old.targetBps !== s.targetBps || old.capBps !== s.capBps || old.active !== s.active;
  });
  const weight = (s: StrategyRun): number => (s.active ? s.targetBps : 0);
  const oldWeight = (s: StrategyRun): number => {
    const old = before.get(s.address);
    return old?.active ? old.targetBps : 0;
  };
  changes.sort((a, b) => weight(a) - oldWeight(a) - (weight(b) - oldWeight(b)));
  return changes.map((s) => setStrategyTx(ctx, fund, s, 'reallocate'));
}

/**
 * The plan's pauses (or unpauses) due on `day`. The day loop asks for the unpauses before the
 * day's requests and for the pauses after them, so a module reopens in time for the day's
 * requests and closes only after them.
 */
export function scheduledModuleChanges(
  ctx: ScenarioContext,
  fund: FundRun,
  day: number,
  change: 'pause' | 'unpause',
): TxRequest[] {
  const { multisig, vault, slug } = fund.deployed;
  const due = fund.plan.pauses.filter((p) => (change === 'pause' ? p.from : p.to) === day);
  return due.map(({ module }) => {
    fund.paused[module] = change === 'pause';
    return contractCall(
      multisig,
      vault,
      ctx.abis.vault,
      change,
      [module],
      `${slug}: ${change} ${MODULE_NAMES[module]}`,
    );
  });
}

export function closeTx(ctx: ScenarioContext, fund: FundRun): TxRequest {
  const { multisig, vault, slug } = fund.deployed;
  return contractCall(multisig, vault, ctx.abis.vault, 'close', [], `${slug}: close`);
}

/** Books allocation changes, pauses and closes from a mined block. */
export function recordFundAdmin(ctx: ScenarioContext, block: MinedBlock): void {
  const settledTopic = eventTopic(ctx.abis.vault, 'EpochSettled');
  for (const { request, log, ref } of minedLogs(block)) {
    // Only a multisig's calls to its own vault change allocations, modules or the fund's state.
    const fund = ctx.funds.find(
      (f) => f.deployed.vault === request.to && f.deployed.multisig === request.from,
    );
    if (!fund || log.address.toLowerCase() !== fund.deployed.vault.toLowerCase()) continue;
    if (log.topics[0] === settledTopic) continue;
    const event = ctx.decodeVaultLog(log)!;
    if (event.eventName === 'StrategyAllocationSet') {
      const a = event.args as unknown as {
        strategy: Address;
        targetBps: number;
        capBps: number;
        active: boolean;
      };
      ctx.ledger.allocations.push({
        fund: fund.deployed.slug,
        vault: fund.deployed.vault,
        strategy: a.strategy,
        strategySlug: strategySlug(ctx, a.strategy),
        targetBps: a.targetBps,
        capBps: a.capBps,
        active: a.active,
        ...ref,
      });
    } else if (event.eventName === 'ModulePaused' || event.eventName === 'ModuleUnpaused') {
      const module = Number((event.args as unknown as { module: number }).module);
      ctx.ledger.moduleChanges.push({
        fund: fund.deployed.slug,
        vault: fund.deployed.vault,
        module,
        moduleName: MODULE_NAMES[module]!,
        paused: event.eventName === 'ModulePaused',
        ...ref,
      });
    } else if (event.eventName === 'FundClosed') {
      fund.closedAt = ref;
    }
  }
}
