// On-chain parameters of the fixed-plus-float policy (ThreePoolPolicy.params()).
import { policyParamsObject, type PolicyParamsShape } from './policy-params-object.ts';

/** The type and each parameter, in the words GraphQL's FixedPlusFloatParams and the REST schema both use. */
export const FIXED_PLUS_FLOAT_PARAMS = {
  description:
    'Parameters of the fixed-plus-float policy (ThreePoolPolicy.params(), read live), all integer basis points (10000 = 100%). Each day the NAV is credited the base return; profit above it is split between holders, reserve and NAV (the three shares sum to 10000).',
  fields: {
    annualBaseBps: 'fixed annual base return credited to the NAV, 1/365 of it each day',
    profitToHolderBps: 'share of the profit above the base paid to holders as dividends',
    profitToReserveBps: 'share of the profit above the base sent to the reserve',
    profitToNavBps: 'share of the profit above the base compounded into the NAV',
    reserveTargetMaxBps: "reserve cap, of the fund's total assets: reserve above it flows into the NAV",
    reserveTargetMinBps: "reserve floor, of the fund's total assets: shortfalls are covered down to it",
  },
} as const;

export type FixedPlusFloatParamsShape = PolicyParamsShape<'fixed-plus-float', typeof FIXED_PLUS_FLOAT_PARAMS>;

export const FixedPlusFloatParamsRef = policyParamsObject<'fixed-plus-float', typeof FIXED_PLUS_FLOAT_PARAMS>(
  'FixedPlusFloatParams',
  FIXED_PLUS_FLOAT_PARAMS,
);
