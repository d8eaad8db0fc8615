// The two rating families of a strategy.
import { builder } from '../builder.ts';
import type { RegistryStrategy } from '../sources/registry.ts';
import { QualitativeRatingRef } from './qualitative-rating.ts';
import { QuantitativeRatingRef } from './quantitative-rating.ts';

export const StrategyRatingsRef = builder
  .objectRef<RegistryStrategy['ratings']>('StrategyRatings')
  .implement({
    description: 'Quantitative and qualitative ratings of a strategy.',
    fields: (t) => ({
      quantitative: t.field({ type: QuantitativeRatingRef, resolve: (r) => r.quantitative }),
      qualitative: t.field({ type: QualitativeRatingRef, resolve: (r) => r.qualitative }),
    }),
  });
