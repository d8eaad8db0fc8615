// Mappings of a FundVault (one template instance per registered fund; the vault address is
// the Fund id): subscription and redemption requests, settlements and each fund's latest one,
// strategy allocations with their change history, module pauses with their history, and closure.
// A request or settlement whose epoch does not fit the schema's Int is skipped with a warning
// (int-range.ts), and so are a second settlement of an epoch and a pause of a module id the vault
// does not have: the FundRegistry's owner registers vaults, but nothing checks what a registered
// contract emits.
import { BigInt, Bytes, ethereum, log } from '@graphprotocol/graph-ts';
import {
  EpochSettled,
  FundClosed,
  ModulePaused,
  OwnershipTransferred,
  ModuleUnpaused,
  RedemptionRequested,
  StrategyAllocationSet,
  SubscriptionRequested,
} from '../generated/templates/FundVault/FundVault';
import {
  AllocationChange,
  Fund,
  PauseChange,
  Request,
  Settlement,
  StrategyAllocation,
} from '../generated/schema';
import { allocationId, eventId, fundEpochId } from './entity-ids';
import { fitsInt } from './int-range';
import { recordProtocolEvent } from './protocol-event';

/** The vault's own OwnershipTransferred: unlike the protocol contracts', it concerns its fund. */
export function handleOwnershipTransferred(event: OwnershipTransferred): void {
  recordProtocolEvent(event, 'OwnershipTransferred', event.address);
}

export function handleSubscriptionRequested(event: SubscriptionRequested): void {
  recordProtocolEvent(event, 'SubscriptionRequested', event.address);
  recordRequest(event, 'Subscription', event.params.investor, event.params.epoch, event.params.assets);
}

export function handleRedemptionRequested(event: RedemptionRequested): void {
  recordProtocolEvent(event, 'RedemptionRequested', event.address);
  recordRequest(event, 'Redemption', event.params.investor, event.params.epoch, event.params.shares);
}

/**
 * The request names its epoch's Settlement by id before that settlement exists: the vault settles
 * every request of an epoch in the one EpochSettled, so the reference resolves from then on.
 */
function recordRequest(
  event: ethereum.Event,
  kind: string,
  account: Bytes,
  epoch: BigInt,
  amount: BigInt,
): void {
  if (!fitsInt(epoch, 'epoch', kind + 'Requested', event.transaction.hash.toHexString())) return;
  const request = new Request(eventId(event));
  request.fund = event.address;
  request.kind = kind;
  request.account = account;
  request.epoch = epoch.toI32();
  request.amount = amount;
  request.settlement = fundEpochId(event.address, epoch);
  request.blockNumber = event.block.number;
  request.timestamp = event.block.timestamp;
  request.txHash = event.transaction.hash;
  request.save();
}

export function handleEpochSettled(event: EpochSettled): void {
  recordProtocolEvent(event, 'EpochSettled', event.address);
  const tx = event.transaction.hash.toHexString();
  if (!fitsInt(event.params.epoch, 'epoch', 'EpochSettled', tx)) return;
  const id = fundEpochId(event.address, event.params.epoch);
  // Settlement is immutable: a second one for the epoch, with other values, would fail the block
  if (Settlement.load(id) != null) {
    log.warning('EpochSettled skipped: epoch {} of {} is settled already, tx {}', [
      event.params.epoch.toString(),
      event.address.toHexString(),
      tx,
    ]);
    return;
  }
  const settlement = new Settlement(id);
  settlement.fund = event.address;
  settlement.epoch = event.params.epoch.toI32();
  settlement.navPerShare = event.params.navPerShare;
  settlement.assetsIn = event.params.assetsIn;
  settlement.sharesMinted = event.params.sharesMinted;
  settlement.sharesBurned = event.params.sharesBurned;
  settlement.assetsOut = event.params.assetsOut;
  settlement.totalAssets = event.params.totalAssets;
  settlement.totalSupply = event.params.totalSupply;
  settlement.reserveBalance = event.params.reserveBalance;
  settlement.blockNumber = event.block.number;
  settlement.timestamp = event.block.timestamp;
  settlement.txHash = event.transaction.hash;
  settlement.save();

  const fund = loadFund(event.address);
  if (fund == null) return;
  const latest = fund.latestSettlement;
  const latestEpoch = latest == null ? -1 : loadSettlementEpoch(latest!);
  if (settlement.epoch > latestEpoch) {
    fund.latestSettlement = settlement.id;
    fund.save();
  }
}

export function handleStrategyAllocationSet(event: StrategyAllocationSet): void {
  recordProtocolEvent(event, 'StrategyAllocationSet', event.address);
  const id = allocationId(event.address, event.params.strategy);
  let allocation = StrategyAllocation.load(id);
  if (allocation == null) {
    allocation = new StrategyAllocation(id);
    allocation.fund = event.address;
    allocation.strategy = event.params.strategy;
  }
  allocation.targetBps = event.params.targetBps;
  allocation.capBps = event.params.capBps;
  allocation.active = event.params.active;
  allocation.updatedAtBlock = event.block.number;
  allocation.updatedAt = event.block.timestamp;
  allocation.save();

  const change = new AllocationChange(eventId(event));
  change.allocation = id;
  change.fund = event.address;
  change.strategy = event.params.strategy;
  change.targetBps = event.params.targetBps;
  change.capBps = event.params.capBps;
  change.active = event.params.active;
  change.blockNumber = event.block.number;
  change.timestamp = event.block.timestamp;
  change.txHash = event.transaction.hash;
  change.save();
}

export function handleModulePaused(event: ModulePaused): void {
  recordProtocolEvent(event, 'ModulePaused', event.address);
  setModulePaused(event, event.params.module, true);
}

export function handleModuleUnpaused(event: ModuleUnpaused): void {
  recordProtocolEvent(event, 'ModuleUnpaused', event.address);
  setModulePaused(event, event.params.module, false);
}

export function handleFundClosed(event: FundClosed): void {
  recordProtocolEvent(event, 'FundClosed', event.address);
  const fund = loadFund(event.address);
  if (fund == null) return;
  fund.closed = true;
  fund.closedAt = event.block.timestamp;
  fund.closedTxHash = event.transaction.hash;
  fund.save();
}

/** Module ids of the vault: 0 subscriptions, 1 redemptions, 2 claims (it reverts on any other). */
const MODULE_COUNT: i32 = 3;

/** The FundModule value of a module id below MODULE_COUNT. */
function moduleName(module: i32): string {
  if (module == 0) return 'subscriptions';
  if (module == 1) return 'redemptions';
  return 'claims';
}

/**
 * Records the change, and rewrites the fund's paused list in module-id order, so it reads the same
 * however it was reached.
 */
function setModulePaused(event: ethereum.Event, module: i32, paused: boolean): void {
  if (module >= MODULE_COUNT) {
    // the vault reverts on such an id; a registered contract that emits one anyway pauses nothing
    log.warning("{} skipped: module {} is none of the vault's {} modules, tx {}", [
      paused ? 'ModulePaused' : 'ModuleUnpaused',
      module.toString(),
      MODULE_COUNT.toString(),
      event.transaction.hash.toHexString(),
    ]);
    return;
  }
  const fund = loadFund(event.address);
  if (fund == null) return;
  const change = new PauseChange(eventId(event));
  change.fund = event.address;
  change.module = moduleName(module);
  change.paused = paused;
  change.blockNumber = event.block.number;
  change.timestamp = event.block.timestamp;
  change.txHash = event.transaction.hash;
  change.save();

  const current = fund.pausedModules;
  const next = new Array<string>(0);
  for (let id = 0; id < MODULE_COUNT; id++) {
    const name = moduleName(id);
    if (id == module ? paused : current.includes(name)) next.push(name);
  }
  fund.pausedModules = next;
  fund.save();
}

/** The epoch of a stored settlement (the fund's latest), -1 if the store has none under that id. */
function loadSettlementEpoch(id: string): i32 {
  const settlement = Settlement.load(id);
  return settlement == null ? -1 : settlement.epoch;
}

function loadFund(vault: Bytes): Fund | null {
  const fund = Fund.load(vault);
  if (fund == null) {
    log.warning('FundVault event from unregistered vault {}', [vault.toHexString()]);
  }
  return fund;
}
