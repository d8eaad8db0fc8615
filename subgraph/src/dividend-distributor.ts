// Mappings of the DividendDistributor: one DividendRound per fund and epoch (its Merkle root,
// total, leaf count and distribution URI) and one immutable DividendClaim per claim, with the
// round's claimed count and amount kept current. A round whose epoch or leaf count does not fit the
// schema's Int is skipped with a warning (int-range.ts), and so are its claims. So is a round of a
// contract the FundRegistry never registered: postRound accepts a round from any contract whose
// owner() is the sender, and such a round's `fund` would name no Fund, which fails every query
// that lists rounds with their fund (graph-node: "Null value resolved for non-null field"). Its
// event is still recorded as a ProtocolEvent.
import { BigInt, log } from '@graphprotocol/graph-ts';
import { DividendClaimed, DividendRoundPosted } from '../generated/DividendDistributor/DividendDistributor';
import { DividendClaim, DividendRound, Fund } from '../generated/schema';
import { eventId, fundEpochId } from './entity-ids';
import { fitsInt } from './int-range';
import { recordProtocolEvent } from './protocol-event';

export function handleDividendRoundPosted(event: DividendRoundPosted): void {
  recordProtocolEvent(event, 'DividendRoundPosted', event.params.fund);
  const tx = event.transaction.hash.toHexString();
  if (Fund.load(event.params.fund) == null) {
    log.warning('DividendRoundPosted skipped: {} is no fund the FundRegistry registered, tx {}', [
      event.params.fund.toHexString(),
      tx,
    ]);
    return;
  }
  if (
    !fitsInt(event.params.epoch, 'epoch', 'DividendRoundPosted', tx) ||
    !fitsInt(event.params.leafCount, 'leafCount', 'DividendRoundPosted', tx)
  ) {
    return;
  }
  const round = new DividendRound(fundEpochId(event.params.fund, event.params.epoch));
  round.fund = event.params.fund;
  round.epoch = event.params.epoch.toI32();
  round.merkleRoot = event.params.merkleRoot;
  round.total = event.params.total;
  round.leafCount = event.params.leafCount.toI32();
  round.uri = event.params.uri;
  round.claimedCount = 0;
  round.claimedAmount = BigInt.zero();
  round.postedAtBlock = event.block.number;
  round.postedAt = event.block.timestamp;
  round.postedTxHash = event.transaction.hash;
  round.save();
}

export function handleDividendClaimed(event: DividendClaimed): void {
  recordProtocolEvent(event, 'DividendClaimed', event.params.fund);
  const roundId = fundEpochId(event.params.fund, event.params.epoch);
  const round = DividendRound.load(roundId);
  if (round == null) {
    // The distributor verifies claims against a posted root: only a round skipped for its values
    // or its unregistered fund (see handleDividendRoundPosted) has claims and no entity.
    log.warning('DividendClaimed for unposted round {} in tx {}', [
      roundId,
      event.transaction.hash.toHexString(),
    ]);
    return;
  }
  round.claimedCount = round.claimedCount + 1;
  round.claimedAmount = round.claimedAmount.plus(event.params.amount);
  round.save();

  const claim = new DividendClaim(eventId(event));
  claim.round = roundId;
  claim.fund = event.params.fund;
  claim.epoch = event.params.epoch.toI32();
  claim.account = event.params.account;
  claim.amount = event.params.amount;
  claim.blockNumber = event.block.number;
  claim.timestamp = event.block.timestamp;
  claim.txHash = event.transaction.hash;
  claim.save();
}
