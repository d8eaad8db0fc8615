// Mappings of the DividendDistributor: one DividendRound per fund and epoch (its Merkle root,
// total, leaf count and distribution URI) and one immutable DividendClaim per claim, with the
// round's claimed count and amount kept current.
import { BigInt, log } from '@graphprotocol/graph-ts';
import { DividendClaimed, DividendRoundPosted } from '../generated/DividendDistributor/DividendDistributor';
import { DividendClaim, DividendRound } from '../generated/schema';
import { eventId, fundEpochId } from './entity-ids';
import { recordProtocolEvent } from './protocol-event';

export function handleDividendRoundPosted(event: DividendRoundPosted): void {
  recordProtocolEvent(event, 'DividendRoundPosted');
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
  recordProtocolEvent(event, 'DividendClaimed');
  const roundId = fundEpochId(event.params.fund, event.params.epoch);
  const round = DividendRound.load(roundId);
  if (round == null) {
    // The distributor verifies claims against a posted root, so this cannot happen on-chain.
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
