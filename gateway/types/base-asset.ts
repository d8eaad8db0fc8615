// The ERC-20 asset a fund is denominated in.
import { builder } from '../builder.ts';
import type { RegistryFund } from '../sources/registry.ts';

export const BaseAssetRef = builder.objectRef<RegistryFund['baseAsset']>('BaseAsset').implement({
  description: 'The ERC-20 asset a fund is denominated in.',
  fields: (t) => ({
    symbol: t.exposeString('symbol', { description: 'ERC-20 symbol, e.g. USDC' }),
    address: t.exposeString('address', {
      description: 'ERC-20 contract address, 0x hex as the registry writes it (compare case-insensitively)',
    }),
    decimals: t.exposeInt('decimals', {
      description:
        "ERC-20 decimals: the fund's decimal amounts have this many fraction digits, and 10^decimals base units (amountRaw, event args) make one token",
    }),
  }),
});
