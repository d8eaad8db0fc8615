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
      quantitative: t.field({
        type: QuantitativeRatingRef,
        description: 'performance figures',
        resolve: (r) => r.quantitative,
      }),
      qualitative: t.field({
        type: QualitativeRatingRef,
        description: "an analyst's assessment",
        resolve: (r) => r.qualitative,
      }),
    }),
  });
