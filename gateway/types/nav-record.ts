// A fund's NAV for one epoch, with amounts formatted exactly from the indexed integers.
import { builder } from '../builder.ts';
import { formatUnits, isoFromSeconds } from '../format.ts';
import type { RegistryFund } from '../sources/registry.ts';
import type { NavRow } from '../sources/subgraph.ts';
import { NavStatusRef } from './nav-status.ts';

/** NAV per share is a 6-decimal fixed-point value on the NavOracle. */
const NAV_DECIMALS = 6;

interface NavRecordShape {
  fund: RegistryFund;
  row: NavRow;
}

export const NavRecordRef = builder.objectRef<NavRecordShape>('NavRecord').implement({
  description: 'The NAV of a fund for one daily epoch.',
  fields: (t) => ({
    epoch: t.int({
      description: "the fund's daily settlement epoch (the first is 1)",
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
    publishedAt: t.string({
      nullable: true,
      description:
        'block time of the publishing transaction, ISO 8601 UTC with milliseconds; null until Published',
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
