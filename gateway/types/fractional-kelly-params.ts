// On-chain parameters of the fractional-Kelly policy (KellyPolicy.params()).
import { builder } from '../builder.ts';

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

export type FractionalKellyParamsShape = { kind: 'fractional-kelly' } & Record<
  keyof typeof FRACTIONAL_KELLY_PARAMS.fields,
  number
>;

const described = FRACTIONAL_KELLY_PARAMS.fields;

export const FractionalKellyParamsRef = builder
  .objectRef<FractionalKellyParamsShape>('FractionalKellyParams')
  .implement({
    description: FRACTIONAL_KELLY_PARAMS.description,
    // every parameter the table describes, in its order
    fields: (t) =>
      Object.fromEntries(
        Object.entries(described).map(([name, description]) => [
          name,
          t.exposeInt(name as keyof typeof described, { description }),
        ]),
      ),
  });
