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
    description: 'Parameters of the fixed-plus-float policy, all in basis points.',
    fields: (t) => ({
      annualBaseBps: t.exposeInt('annualBaseBps', { description: 'fixed annual base return' }),
      profitToHolderBps: t.exposeInt('profitToHolderBps', { description: 'share of profit paid to holders' }),
      profitToReserveBps: t.exposeInt('profitToReserveBps', {
        description: 'share of profit sent to the reserve',
      }),
      profitToNavBps: t.exposeInt('profitToNavBps', {
        description: 'share of profit compounded into the NAV',
      }),
      reserveTargetMaxBps: t.exposeInt('reserveTargetMaxBps', { description: 'reserve cap' }),
      reserveTargetMinBps: t.exposeInt('reserveTargetMinBps', { description: 'reserve floor' }),
    }),
  });
