// The schema's Int fields (epochs, leaf counts) hold 32-bit signed integers, while the contracts emit
// them as uint64 (uint32 for leaf counts). graph-ts's toI32 aborts the handler on a value of 2^32
// or more, and an aborted handler stops the subgraph for good (on graph-node as in the embedded
// indexer); from 2^31 it would store the value wrapped negative. So every such value is checked
// before it is converted. DividendDistributor.postRound accepts a round from any contract whose
// owner() is the sender: one transaction would be enough.
import { BigInt, log } from '@graphprotocol/graph-ts';

const INT_MAX = BigInt.fromI32(i32.MAX_VALUE);

/**
 * Whether `value` (an unsigned contract value) fits a schema Int; if not, a warning names the event
 * and the field whose value is skipped, with its transaction.
 */
export function fitsInt(value: BigInt, field: string, eventName: string, txHash: string): boolean {
  if (value.le(INT_MAX)) return true;
  log.warning('{} skipped: {} {} does not fit a schema Int (at most 2147483647), tx {}', [
    eventName,
    field,
    value.toString(),
    txHash,
  ]);
  return false;
}
