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
      description:
        'false when the service has no chain RPC configured; the other fields but fund are then null. A configured RPC that fails gives an UPSTREAM_UNAVAILABLE error instead',
    }),
    balance: t.exposeString('balance', {
      nullable: true,
      description:
        'FundVault.reserveBalance(): decimal string in the base asset (BaseAsset.decimals applied); null when available is false',
    }),
    percentOfAum: t.exposeFloat('percentOfAum', {
      nullable: true,
      description:
        'balance as a percent (not bps) of FundVault.totalAssets(), rounded half up to 2 decimals; null when available is false, or when totalAssets is 0 (no percent of nothing)',
    }),
    targetMinBps: t.exposeInt('targetMinBps', {
      nullable: true,
      description: "the policy's reserve floor, bps of total assets; null when available is false",
    }),
    targetMaxBps: t.exposeInt('targetMaxBps', {
      nullable: true,
      description: "the policy's reserve cap, bps of total assets; null when available is false",
    }),
  }),
});
