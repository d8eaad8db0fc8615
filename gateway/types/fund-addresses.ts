// The on-chain addresses that make up one fund.
import { builder } from '../builder.ts';
import type { RegistryFund } from '../sources/registry.ts';

export const FundAddressesRef = builder.objectRef<RegistryFund>('FundAddresses').implement({
  description:
    'Addresses of the contracts and accounts of a fund, 0x hex as the registry writes them (compare case-insensitively).',
  fields: (t) => ({
    vault: t.exposeString('vault', {
      description:
        'FundVault: takes subscriptions and redemptions, holds the assets; the `fund` argument of NavOracle and DividendDistributor calls, and a `contract` of Query.events',
    }),
    shareToken: t.exposeString('shareToken', {
      description: 'ERC-20 share token of the fund (same decimals as the base asset)',
    }),
    policy: t.string({
      description: 'settlement policy contract (Fund.policy.address)',
      resolve: (fund, _a, ctx) => ctx.registry.policyOf(fund).address,
    }),
    multisig: t.exposeString('multisig', {
      description:
        "the vault's owner, the fund's multisig: it settles epochs, sets allocations and pauses modules",
    }),
    baseAsset: t.string({
      description: 'ERC-20 the fund is denominated in (Fund.baseAsset.address)',
      resolve: (fund) => fund.baseAsset.address,
    }),
  }),
});
