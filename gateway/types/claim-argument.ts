// One argument of the DividendDistributor.claim call a proof makes (see claim-call.ts).
import { builder } from '../builder.ts';
import { JsonScalar } from './json.ts';

export interface ClaimArgumentShape {
  name: string;
  type: string;
  value: string | string[];
}

export const ClaimArgumentRef = builder.objectRef<ClaimArgumentShape>('ClaimArgument').implement({
  description: 'One argument of DividendDistributor.claim, in the order the function takes them.',
  fields: (t) => ({
    name: t.exposeString('name', { description: "the parameter's name in the contract's ABI" }),
    type: t.exposeString('type', { description: 'its Solidity type, e.g. uint64' }),
    value: t.field({
      type: JsonScalar,
      description:
        'its value: a string (an address as 0x hex; an integer as a decimal string, which viem takes as a bigint and ethers as is), or for bytes32[] an array of 0x 32-byte hex strings',
      resolve: (a) => a.value,
    }),
  }),
});
