// A registered contract of the protocol, with its explorer link.
import { builder } from '../builder.ts';
import { explorerAddressUrl } from '../format.ts';
import type { RegistryContract } from '../sources/registry.ts';

export const ContractRef = builder.objectRef<RegistryContract>('Contract').implement({
  description: 'A contract of the protocol as listed in the registry.',
  fields: (t) => ({
    name: t.exposeString('name', {
      description: 'display name, e.g. "NAV Oracle"; ProtocolEvent.contractName carries it',
    }),
    kind: t.exposeString('kind', {
      description: 'Solidity contract type, e.g. NavOracle, FundVault, FundShareToken, KellyPolicy',
    }),
    address: t.exposeString('address', {
      description: '0x address as the registry writes it (compare case-insensitively)',
    }),
    chainId: t.int({
      description: 'chain id of the network it is deployed on (Chain.id)',
      resolve: (_c, _a, ctx) => ctx.registry.document.chain.id,
    }),
    role: t.exposeString('role', { description: 'role description in Chinese' }),
    roleEn: t.exposeString('roleEn', { description: 'role description in English' }),
    category: t.exposeString('category', {
      description: 'grouping in the registry, e.g. oracle, registry, distribution, policy, vault, token',
    }),
    explorer: t.string({
      description: 'block-explorer URL of the address',
      resolve: (c, _a, ctx) => explorerAddressUrl(ctx.registry.document.chain.explorer, c.address),
    }),
  }),
});
