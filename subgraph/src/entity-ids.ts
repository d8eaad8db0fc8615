// Entity ids shared by every mapping, so that the gateway and the tests can derive the
// same ids from (vault, epoch), (vault, strategy) or (transaction, log index).
import { Address, BigInt, Bytes, ethereum } from '@graphprotocol/graph-ts';

/** "<vault lowercase hex>-<epoch>": NavRecord, DividendRound and Settlement. */
export function fundEpochId(fund: Address, epoch: BigInt): string {
  return fund.toHexString() + '-' + epoch.toString();
}

/** "<vault lowercase hex>-<strategy lowercase hex>": StrategyAllocation. */
export function allocationId(fund: Address, strategy: Address): string {
  return fund.toHexString() + '-' + strategy.toHexString();
}

/**
 * Transaction hash ++ log index (4 bytes, little-endian, the graph-ts `concatI32` layout):
 * the id of every per-log immutable entity (ProtocolEvent, DividendClaim, AllocationChange, Request,
 * PauseChange).
 */
export function eventId(event: ethereum.Event): Bytes {
  return event.transaction.hash.concatI32(event.logIndex.toI32());
}
