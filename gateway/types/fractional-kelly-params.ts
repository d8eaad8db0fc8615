// On-chain parameters of the fractional-Kelly policy (KellyPolicy.params()).
import { builder } from '../builder.ts';

export interface FractionalKellyParamsShape {
  kind: 'fractional-kelly';
  kellyFractionBps: number;
  expectedEdgeBps: number;
  varianceBps: number;
  maxExposureBps: number;
  reserveTargetMinBps: number;
  reserveTargetMaxBps: number;
}

export const FractionalKellyParamsRef = builder
  .objectRef<FractionalKellyParamsShape>('FractionalKellyParams')
  .implement({
    description:
      'Parameters of the fractional-Kelly policy (KellyPolicy.params(), read live), all integer basis points (10000 = 100%): exposure = min(maxExposure, kellyFraction * expectedEdge / variance); the reserve target is 1 - exposure clamped to [reserveTargetMin, reserveTargetMax].',
    fields: (t) => ({
      kellyFractionBps: t.exposeInt('kellyFractionBps', {
        description: 'fraction of full Kelly run (5000 = half Kelly)',
      }),
      expectedEdgeBps: t.exposeInt('expectedEdgeBps', { description: 'expected annual excess return' }),
      varianceBps: t.exposeInt('varianceBps', { description: 'annual variance of the return (400 = 0.04)' }),
      maxExposureBps: t.exposeInt('maxExposureBps', { description: 'hard cap on the exposure' }),
      reserveTargetMinBps: t.exposeInt('reserveTargetMinBps', {
        description: "reserve floor, of the fund's total assets",
      }),
      reserveTargetMaxBps: t.exposeInt('reserveTargetMaxBps', {
        description: "reserve cap, of the fund's total assets",
      }),
    }),
  });
