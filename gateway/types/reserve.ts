// A fund's live reserve against its policy's bounds.
import { builder } from '../builder.ts';

export interface ReserveShape {
  fund: string;
  available: boolean;
  balance: string | null;
  percentOfAum: number | null;
  targetMinBps: number | null;
  targetMaxBps: number | null;
}

export const ReserveRef = builder.objectRef<ReserveShape>('Reserve').implement({
  description: 'Live reserve of a fund.',
  fields: (t) => ({
    fund: t.exposeString('fund', { description: 'fund slug' }),
    available: t.exposeBoolean('available', {
      description: 'false when the chain RPC or contract is not configured; the other fields are then null',
    }),
    balance: t.exposeString('balance', {
      nullable: true,
      description: 'FundVault.reserveBalance(), decimal',
    }),
    percentOfAum: t.exposeFloat('percentOfAum', {
      nullable: true,
      description: 'reserve as a percent of totalAssets, rounded to 2 decimals (0 when totalAssets is 0)',
    }),
    targetMinBps: t.exposeInt('targetMinBps', { nullable: true, description: "policy's reserve floor" }),
    targetMaxBps: t.exposeInt('targetMaxBps', { nullable: true, description: "policy's reserve cap" }),
  }),
});
