// A registered contract of the protocol, with its explorer link.
import { builder } from '../builder.ts';
import { explorerAddressUrl } from '../format.ts';
import type { RegistryContract } from '../sources/registry.ts';

export const ContractRef = builder.objectRef<RegistryContract>('Contract').implement({
  description: 'A contract of the protocol as listed in the registry.',
  fields: (t) => ({
    name: t.exposeString('name'),
    kind: t.exposeString('kind', { description: 'contract type, e.g. NavOracle or FundVault' }),
    address: t.exposeString('address'),
    chainId: t.int({ resolve: (_c, _a, ctx) => ctx.registry.registry.chain.id }),
    role: t.exposeString('role', { description: 'role description in Chinese' }),
    roleEn: t.exposeString('roleEn', { description: 'role description in English' }),
    category: t.exposeString('category'),
    explorer: t.string({
      description: 'block-explorer URL of the address',
      resolve: (c, _a, ctx) => explorerAddressUrl(ctx.registry.registry.chain.explorer, c.address),
    }),
  }),
});
