// Qualitative rating of a strategy, from the registry's catalogue.
import { builder } from '../builder.ts';
import type { RegistryStrategy } from '../sources/registry.ts';

export const QualitativeRatingRef = builder
  .objectRef<RegistryStrategy['ratings']['qualitative']>('QualitativeRating')
  .implement({
    description: "An analyst's assessment of a strategy, from the registry's catalogue.",
    fields: (t) => ({
      grade: t.exposeString('grade', { description: 'A (best), B, C, D or E' }),
      risk: t.exposeString('risk', { description: 'low, medium or high' }),
      liquidity: t.exposeString('liquidity', {
        description: 'how soon capital can be withdrawn, e.g. daily',
      }),
      summary: t.exposeString('summary', { description: 'one-sentence assessment, in English' }),
    }),
  });
