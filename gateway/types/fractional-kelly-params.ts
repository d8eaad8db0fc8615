// On-chain parameters of the fractional-Kelly policy (KellyPolicy.params()).
import { policyParamsObject, type PolicyParamsShape } from './policy-params-object.ts';

/** The type and each parameter, in the words GraphQL's FractionalKellyParams and the REST schema both use. */
export const FRACTIONAL_KELLY_PARAMS = {
  description:
    'Parameters of the fractional-Kelly policy (KellyPolicy.params(), read live), all integer basis points (10000 = 100%): exposure = min(maxExposure, kellyFraction * expectedEdge / variance); the reserve target is 1 - exposure clamped to [reserveTargetMin, reserveTargetMax].',
  fields: {
    kellyFractionBps: 'fraction of full Kelly run (5000 = half Kelly)',
    expectedEdgeBps: 'expected annual excess return',
    varianceBps: 'annual variance of the return (400 = 0.04)',
    maxExposureBps: 'hard cap on the exposure',
    reserveTargetMinBps: "reserve floor, of the fund's total assets",
    reserveTargetMaxBps: "reserve cap, of the fund's total assets",
  },
} as const;

export type FractionalKellyParamsShape = PolicyParamsShape<
  'fractional-kelly',
  typeof FRACTIONAL_KELLY_PARAMS
>;

export const FractionalKellyParamsRef = policyParamsObject<
  'fractional-kelly',
  typeof FRACTIONAL_KELLY_PARAMS
>('FractionalKellyParams', FRACTIONAL_KELLY_PARAMS);
