// The ERC-20 asset a fund is denominated in.
import { builder } from '../builder.ts';
import type { RegistryFund } from '../sources/registry.ts';

export const BaseAssetRef = builder.objectRef<RegistryFund['baseAsset']>('BaseAsset').implement({
  description: 'The ERC-20 asset a fund is denominated in.',
  fields: (t) => ({
    symbol: t.exposeString('symbol'),
    address: t.exposeString('address'),
    decimals: t.exposeInt('decimals'),
  }),
});
