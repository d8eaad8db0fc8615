// The on-chain addresses that make up one fund.
import { builder } from '../builder.ts';
import type { RegistryFund } from '../sources/registry.ts';

export const FundAddressesRef = builder.objectRef<RegistryFund>('FundAddresses').implement({
  description: 'Addresses of the contracts and accounts of a fund.',
  fields: (t) => ({
    vault: t.exposeString('vault'),
    shareToken: t.exposeString('shareToken'),
    policy: t.string({ resolve: (fund, _a, ctx) => ctx.registry.policyOf(fund).address }),
    multisig: t.exposeString('multisig'),
    baseAsset: t.string({ resolve: (fund) => fund.baseAsset.address }),
  }),
});
