// Quantitative rating of a strategy, from the registry's catalogue.
import { builder } from '../builder.ts';
import type { RegistryStrategy } from '../sources/registry.ts';

export const QuantitativeRatingRef = builder
  .objectRef<RegistryStrategy['ratings']['quantitative']>('QuantitativeRating')
  .implement({
    description:
      "Measured performance figures of a strategy, from the registry's catalogue (not computed by the service).",
    fields: (t) => ({
      sharpe: t.exposeFloat('sharpe', { description: 'annualised Sharpe ratio, a plain number' }),
      maxDrawdownBps: t.exposeInt('maxDrawdownBps', {
        description: 'largest peak-to-trough loss, basis points (0..10000)',
      }),
      volatilityBps: t.exposeInt('volatilityBps', {
        description: 'annualised volatility of the returns, basis points (0..10000)',
      }),
      annualReturnBps: t.exposeInt('annualReturnBps', {
        description: 'annualised return, basis points; negative for a loss',
      }),
      score: t.exposeFloat('score', { description: 'overall score from 0 to 100, higher is better' }),
    }),
  });
