// A fund's NAV for one epoch, with amounts formatted exactly from the indexed integers. The epoch
// is dated by its settlement: the vault settles the epoch at its NAV per share, from which the
// NavOracle record is drafted and, days later, published; so the settlement's time (settledAt,
// read from the subgraph's Settlement of the same id) says what moment the NAV is of, and
// publishedAt only when it became final.
import { builder } from '../builder.ts';
import { formatUnits, isoFromSeconds } from '../format.ts';
import type { RegistryFund } from '../sources/registry.ts';
import type { NavRow } from '../sources/subgraph.ts';
import { NavStatusRef } from './nav-status.ts';

/** NAV per share is a 6-decimal fixed-point value on the NavOracle. */
const NAV_DECIMALS = 6;

/** What a NAV record's epoch is, in the words GraphQL and the REST documents both use. */
export const NAV_EPOCH_MEANING =
  "the fund's settlement epoch: its vault counts its own daily settlements from 1, so epoch numbers are per fund (two funds' epoch 1 may be different days) and are not dates; settledAt dates the epoch";

/** What a NAV record's settledAt is, in the words GraphQL and the REST documents both use. */
export const NAV_SETTLED_AT_MEANING =
  "block time of the vault's settlement of the epoch (EpochSettled), the moment this NAV values the fund at: it dates the epoch (the NAV as of a given time is that of the latest epoch settled at or before it), where publishedAt, the NavOracle's publication, comes days later. Null when the vault has not settled the epoch";

/** What a NAV record's publishedAt is, in the words GraphQL and the REST documents both use. */
export const NAV_PUBLISHED_AT_MEANING =
  'block time of the publishing transaction, when the record became final; null until Published. It comes days after the epoch it prices: settledAt dates the NAV';

interface NavRecordShape {
  fund: RegistryFund;
  row: NavRow;
}

export const NavRecordRef = builder.objectRef<NavRecordShape>('NavRecord').implement({
  description: 'The NAV of a fund for one daily epoch.',
  fields: (t) => ({
    epoch: t.int({
      description: NAV_EPOCH_MEANING,
      resolve: ({ row }) => row.epoch,
    }),
    navPerShare: t.string({
      description: 'NAV per share in the base asset: a decimal string with exactly 6 decimal places',
      resolve: ({ row }) => formatUnits(row.navPerShare, NAV_DECIMALS),
    }),
    totalAssets: t.string({
      description:
        'assets under management the draft reported: decimal string in the base asset (BaseAsset.decimals applied)',
      resolve: ({ row, fund }) => formatUnits(row.totalAssets, fund.baseAsset.decimals),
    }),
    totalSupply: t.string({
      // the REST contract (SPEC.md's NAV record) types it "string or null"
      nullable: true,
      description:
        'shares outstanding the draft reported: decimal string with the base asset decimals (the share token has the same). Every draft reports it, so it is never null here; the type allows null as the REST NAV record does',
      resolve: ({ row, fund }) => formatUnits(row.totalSupply, fund.baseAsset.decimals),
    }),
    settledAt: t.string({
      nullable: true,
      description: `${NAV_SETTLED_AT_MEANING}, and null with an UPSTREAM_UNAVAILABLE error when the subgraph fails. ISO 8601 UTC with milliseconds`,
      resolve: async ({ fund, row }, _args, ctx) => {
        const settlement = await ctx.subgraph.settlement.load(`${fund.vault.toLowerCase()}-${row.epoch}`);
        return settlement === null ? null : isoFromSeconds(settlement.timestamp);
      },
    }),
    publishedAt: t.string({
      nullable: true,
      description: `${NAV_PUBLISHED_AT_MEANING}. ISO 8601 UTC with milliseconds`,
      resolve: ({ row }) => (row.publishedAt === null ? null : isoFromSeconds(row.publishedAt)),
    }),
    status: t.field({
      type: NavStatusRef,
      description: 'where the record is in its lifecycle on the NavOracle',
      resolve: ({ row }) => row.status,
    }),
    onchainTxHash: t.string({
      nullable: true,
      description: 'hash of the NavOracle publish transaction, 0x 32-byte hex; null until Published',
      resolve: ({ row }) => row.publishedTxHash,
    }),
  }),
});
