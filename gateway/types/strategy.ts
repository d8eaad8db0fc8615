// A strategy of the catalogue.
import { builder } from '../builder.ts';
import { explorerAddressUrl } from '../format.ts';
import type { RegistryStrategy } from '../sources/registry.ts';
import { StrategyRatingsRef } from './strategy-ratings.ts';

export const StrategyRef = builder.objectRef<RegistryStrategy>('Strategy').implement({
  description: 'An investment strategy funds allocate to, with its ratings.',
  fields: (t) => ({
    slug: t.exposeString('slug', { description: 'identifier: strategy(slug) takes it' }),
    name: t.exposeString('name', { description: 'display name in English' }),
    nameCn: t.exposeString('nameCn', { description: 'name in Chinese' }),
    address: t.exposeString('address', {
      description:
        'strategy address as the registry writes it; StrategyAllocation.strategy names it (compare case-insensitively)',
    }),
    category: t.exposeString('category', {
      description: 'kind of strategy, e.g. fixed-income, lending, derivatives, staking',
    }),
    description: t.exposeString('description', { description: 'what the strategy does, in English' }),
    explorer: t.string({
      description: 'block-explorer URL of its address',
      resolve: (s, _a, ctx) => explorerAddressUrl(ctx.registry.document.chain.explorer, s.address),
    }),
    ratings: t.field({
      type: StrategyRatingsRef,
      description: "its ratings, from the registry's catalogue",
      resolve: (s) => s.ratings,
    }),
  }),
});
