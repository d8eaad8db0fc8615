// Mappings of the FundRegistry: each FundRegistered creates the Fund entity and starts
// indexing the fund's vault through the FundVault template.
import { FundRegistered } from '../generated/FundRegistry/FundRegistry';
import { Fund } from '../generated/schema';
import { FundVault } from '../generated/templates';
import { recordProtocolEvent } from './protocol-event';

export { handleOwnershipTransferred } from './protocol-event';

export function handleFundRegistered(event: FundRegistered): void {
  recordProtocolEvent(event, 'FundRegistered', event.params.vault);
  const fund = new Fund(event.params.vault);
  fund.slug = event.params.slug;
  fund.vault = event.params.vault;
  fund.shareToken = event.params.shareToken;
  fund.policy = event.params.policy;
  fund.closed = false;
  fund.pausedModules = [];
  fund.registeredAtBlock = event.block.number;
  fund.registeredAt = event.block.timestamp;
  fund.registeredTxHash = event.transaction.hash;
  fund.save();
  FundVault.create(event.params.vault);
}
