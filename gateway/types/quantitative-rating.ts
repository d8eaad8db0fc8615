// Quantitative rating of a strategy, from the registry's catalogue.
import { builder } from '../builder.ts';
import type { RegistryStrategy } from '../sources/registry.ts';

export const QuantitativeRatingRef = builder
  .objectRef<RegistryStrategy['ratings']['quantitative']>('QuantitativeRating')
  .implement({
    description: 'Measured performance figures of a strategy.',
    fields: (t) => ({
      sharpe: t.exposeFloat('sharpe', { description: 'annualised Sharpe ratio' }),
      maxDrawdownBps: t.exposeInt('maxDrawdownBps'),
      volatilityBps: t.exposeInt('volatilityBps', { description: 'annualised volatility' }),
      annualReturnBps: t.exposeInt('annualReturnBps'),
      score: t.exposeFloat('score', { description: '0..100, higher is better' }),
    }),
  });
