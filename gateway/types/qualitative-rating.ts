// Qualitative rating of a strategy, from the registry's catalogue.
import { builder } from '../builder.ts';
import type { RegistryStrategy } from '../sources/registry.ts';

export const QualitativeRatingRef = builder
  .objectRef<RegistryStrategy['ratings']['qualitative']>('QualitativeRating')
  .implement({
    description: "An analyst's assessment of a strategy.",
    fields: (t) => ({
      grade: t.exposeString('grade', { description: 'A (best) .. E' }),
      risk: t.exposeString('risk', { description: 'low, medium or high' }),
      liquidity: t.exposeString('liquidity'),
      summary: t.exposeString('summary'),
    }),
  });
