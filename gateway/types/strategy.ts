// A strategy of the catalogue.
import { builder } from '../builder.ts';
import { explorerAddressUrl } from '../format.ts';
import type { RegistryStrategy } from '../sources/registry.ts';
import { StrategyRatingsRef } from './strategy-ratings.ts';

export const StrategyRef = builder.objectRef<RegistryStrategy>('Strategy').implement({
  description: 'An investment strategy funds allocate to, with its ratings.',
  fields: (t) => ({
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    nameCn: t.exposeString('nameCn', { description: 'name in Chinese' }),
    address: t.exposeString('address', { description: 'strategy address as used in FundVault allocations' }),
    category: t.exposeString('category'),
    description: t.exposeString('description'),
    explorer: t.string({
      resolve: (s, _a, ctx) => explorerAddressUrl(ctx.registry.registry.chain.explorer, s.address),
    }),
    ratings: t.field({ type: StrategyRatingsRef, resolve: (s) => s.ratings }),
  }),
});
