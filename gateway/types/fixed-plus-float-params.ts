// On-chain parameters of the fixed-plus-float policy (ThreePoolPolicy.params()).
import { builder } from '../builder.ts';

export interface FixedPlusFloatParamsShape {
  kind: 'fixed-plus-float';
  annualBaseBps: number;
  profitToHolderBps: number;
  profitToReserveBps: number;
  profitToNavBps: number;
  reserveTargetMaxBps: number;
  reserveTargetMinBps: number;
}

export const FixedPlusFloatParamsRef = builder
  .objectRef<FixedPlusFloatParamsShape>('FixedPlusFloatParams')
  .implement({
    description:
      'Parameters of the fixed-plus-float policy (ThreePoolPolicy.params(), read live), all integer basis points (10000 = 100%). Each day the NAV is credited the base return; profit above it is split between holders, reserve and NAV (the three shares sum to 10000).',
    fields: (t) => ({
      annualBaseBps: t.exposeInt('annualBaseBps', {
        description: 'fixed annual base return credited to the NAV, 1/365 of it each day',
      }),
      profitToHolderBps: t.exposeInt('profitToHolderBps', {
        description: 'share of the profit above the base paid to holders as dividends',
      }),
      profitToReserveBps: t.exposeInt('profitToReserveBps', {
        description: 'share of the profit above the base sent to the reserve',
      }),
      profitToNavBps: t.exposeInt('profitToNavBps', {
        description: 'share of the profit above the base compounded into the NAV',
      }),
      reserveTargetMaxBps: t.exposeInt('reserveTargetMaxBps', {
        description: "reserve cap, of the fund's total assets: reserve above it flows into the NAV",
      }),
      reserveTargetMinBps: t.exposeInt('reserveTargetMinBps', {
        description: "reserve floor, of the fund's total assets: shortfalls are covered down to it",
      }),
    }),
  });
