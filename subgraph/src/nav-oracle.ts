// Mappings of the NavOracle: one NavRecord per fund and epoch, following the record through
// Draft -> PendingVerification -> Verified -> Published (and back to Draft on rejection),
// with the time and transaction of each transition, and the fund's latest NAV pointers. A draft whose
// epoch does not fit the schema's Int is skipped with a warning (int-range.ts), and so is a draft for
// an address the FundRegistry never registered: the oracle checks no registry, and a record whose
// `fund` names no Fund would fail every query that lists NAV records with their fund.
import { Address, BigInt, ethereum, log } from '@graphprotocol/graph-ts';
import {
  NavDrafted,
  NavPublished,
  NavRejected,
  NavSubmitted,
  NavVerified,
} from '../generated/NavOracle/NavOracle';
import { Fund, NavRecord } from '../generated/schema';
import { fundEpochId } from './entity-ids';
import { fitsInt } from './int-range';
import { recordProtocolEvent } from './protocol-event';

export { handleRoleAdminChanged, handleRoleGranted, handleRoleRevoked } from './protocol-event';

export function handleNavDrafted(event: NavDrafted): void {
  recordProtocolEvent(event, 'NavDrafted', event.params.fund);
  // a skipped draft's later transitions find no record, and say so (loadRecord)
  const tx = event.transaction.hash.toHexString();
  const fund = Fund.load(event.params.fund);
  if (fund == null) {
    log.warning('NavDrafted skipped: {} is no fund the FundRegistry registered, tx {}', [
      event.params.fund.toHexString(),
      tx,
    ]);
    return;
  }
  if (!fitsInt(event.params.epoch, 'epoch', 'NavDrafted', tx)) return;
  const id = fundEpochId(event.params.fund, event.params.epoch);
  let record = NavRecord.load(id);
  if (record == null) {
    record = new NavRecord(id);
    record.fund = event.params.fund;
    record.epoch = event.params.epoch.toI32();
    record.rejectionCount = 0;
  }
  // A first draft, or a re-draft of a Draft (also one sent back by a rejection).
  record.status = 'Draft';
  record.navPerShare = event.params.navPerShare;
  record.totalAssets = event.params.totalAssets;
  record.totalSupply = event.params.totalSupply;
  record.draftedAt = event.block.timestamp;
  record.draftedTxHash = event.transaction.hash;
  record.updatedAtBlock = event.block.number;
  record.save();

  if (isLaterEpoch(fund.latestNav, record.epoch)) {
    fund.latestNav = id;
    fund.save();
  }
}

export function handleNavSubmitted(event: NavSubmitted): void {
  recordProtocolEvent(event, 'NavSubmitted', event.params.fund);
  const record = loadRecord(event.params.fund, event.params.epoch, event);
  if (record == null) return;
  record.status = 'PendingVerification';
  record.submittedAt = event.block.timestamp;
  record.submittedTxHash = event.transaction.hash;
  record.updatedAtBlock = event.block.number;
  record.save();
}

export function handleNavVerified(event: NavVerified): void {
  recordProtocolEvent(event, 'NavVerified', event.params.fund);
  const record = loadRecord(event.params.fund, event.params.epoch, event);
  if (record == null) return;
  record.status = 'Verified';
  record.verifiedAt = event.block.timestamp;
  record.verifiedTxHash = event.transaction.hash;
  record.verifier = event.params.verifier;
  record.updatedAtBlock = event.block.number;
  record.save();
}

export function handleNavPublished(event: NavPublished): void {
  recordProtocolEvent(event, 'NavPublished', event.params.fund);
  const record = loadRecord(event.params.fund, event.params.epoch, event);
  if (record == null) return;
  record.status = 'Published';
  record.navPerShare = event.params.navPerShare;
  record.publishedAt = event.block.timestamp;
  record.publishedTxHash = event.transaction.hash;
  record.publishedBlock = event.block.number;
  record.updatedAtBlock = event.block.number;
  record.save();

  const fund = Fund.load(event.params.fund);
  if (fund == null) return;
  if (isLaterEpoch(fund.latestPublishedNav, record.epoch)) {
    fund.latestPublishedNav = record.id;
    fund.save();
  }
}

export function handleNavRejected(event: NavRejected): void {
  recordProtocolEvent(event, 'NavRejected', event.params.fund);
  const record = loadRecord(event.params.fund, event.params.epoch, event);
  if (record == null) return;
  // Rejection sends the record back to Draft: the status stays within the four states.
  record.status = 'Draft';
  record.rejectionCount = record.rejectionCount + 1;
  record.lastRejectedAt = event.block.timestamp;
  record.lastRejectedTxHash = event.transaction.hash;
  record.lastRejectionReason = event.params.reason;
  record.updatedAtBlock = event.block.number;
  record.save();
}

/** The record a transition applies to; the oracle only emits transitions of drafted records. */
function loadRecord(fund: Address, epoch: BigInt, event: ethereum.Event): NavRecord | null {
  const id = fundEpochId(fund, epoch);
  const record = NavRecord.load(id);
  if (record == null) {
    log.warning('NAV transition for undrafted record {} in tx {}', [
      id,
      event.transaction.hash.toHexString(),
    ]);
  }
  return record;
}

/** Whether `epoch` is above the epoch of the record a fund pointer references (or there is none). */
function isLaterEpoch(currentId: string | null, epoch: i32): boolean {
  if (currentId == null) return true;
  const current = NavRecord.load(currentId!);
  return current == null || epoch > current.epoch;
}
