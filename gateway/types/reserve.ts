// A fund's live reserve against its policy's bounds, with the total assets its percent is of.
import { builder } from '../builder.ts';
import { formatUnits } from '../format.ts';

export interface ReserveShape {
  fund: string;
  available: boolean;
  balance: string | null;
  percentOfAum: number | null;
  targetMinBps: number | null;
  targetMaxBps: number | null;
}

/** why percentOfAum can be far above 100, which would otherwise read as an error */
export const RESERVE_OVER_ASSETS =
  "The reserve is held beside the fund's total assets, not inside them: a fund whose holders redeemed nearly everything (a closed fund, say) can hold a reserve many times its remaining assets, so a percentOfAum far above 100 is a real reading.";

export const ReserveRef = builder.objectRef<ReserveShape>('Reserve').implement({
  description: `Live reserve of a fund. ${RESERVE_OVER_ASSETS}`,
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
    totalAssets: t.string({
      nullable: true,
      description:
        'FundVault.totalAssets(), read live in the same chain read as balance: decimal string in the base asset (BaseAsset.decimals applied), the whole that percentOfAum, targetMinBps and targetMaxBps are of; null when available is false',
      // the fund's resolver read it for percentOfAum in this request: the loader answers from that read
      resolve: async (r, _args, ctx) => {
        const fund = ctx.registry.fundBySlug.get(r.fund);
        if (!r.available || !ctx.chain || !fund) return null;
        return formatUnits(await ctx.chain.totalAssets(fund.vault as `0x${string}`), fund.baseAsset.decimals);
      },
    }),
    percentOfAum: t.exposeFloat('percentOfAum', {
      nullable: true,
      description:
        'balance / totalAssets x 100: a percent (not bps), computed on the raw integers and rounded half up to 2 decimals; may exceed 100 (see Reserve); null when available is false, or when totalAssets is 0 (no percent of nothing)',
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
