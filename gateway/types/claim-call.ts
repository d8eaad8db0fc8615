// The GraphQL type ClaimCall: the DividendDistributor.claim transaction a dividend proof makes, as
// claim-function.ts builds it from the distributor's ABI.
import { builder } from '../builder.ts';
import { CLAIM_SENDER, CLAIM_SIGNATURE, type ClaimCallShape } from '../claim-function.ts';
import { ClaimArgumentRef } from './claim-argument.ts';

export const ClaimCallRef = builder.objectRef<ClaimCallShape>('ClaimCall').implement({
  description: `The DividendDistributor.claim transaction that pays a proof's dividend, ready to send as it stands: \`to\` and \`data\` (no value). ${CLAIM_SENDER}. Built from the distributor's ABI: ${CLAIM_SIGNATURE}.`,
  fields: (t) => ({
    to: t.exposeString('to', {
      description: "the DividendDistributor's address (the registry's): the transaction's `to`",
    }),
    signature: t.exposeString('signature', {
      description: `the function's canonical signature, ${CLAIM_SIGNATURE}: epoch is a uint64 and amount a uint256, in base units`,
    }),
    selector: t.exposeString('selector', {
      description: "the function's 4-byte selector, 0x hex: the first 4 bytes of `data`",
    }),
    args: t.field({
      type: [ClaimArgumentRef],
      description: "claim's arguments in order: fund (the vault), epoch, account, amount (amountRaw), proof",
      resolve: (c) => c.args,
    }),
    data: t.exposeString('data', {
      description: 'the calldata, 0x hex: the selector followed by the ABI-encoded arguments',
    }),
  }),
});
