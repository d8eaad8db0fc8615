// A fund's NAV for one epoch, with amounts formatted exactly from the indexed integers.
import { builder } from '../builder.ts';
import { formatUnits, isoFromSeconds } from '../format.ts';
import type { RegistryFund } from '../sources/registry.ts';
import type { NavRow } from '../sources/subgraph.ts';
import { NavStatusRef } from './nav-status.ts';

/** NAV per share is a 6-decimal fixed-point value on the NavOracle. */
export const NAV_DECIMALS = 6;

export interface NavRecordShape {
  fund: RegistryFund;
  row: NavRow;
}

export const NavRecordRef = builder.objectRef<NavRecordShape>('NavRecord').implement({
  description: 'The NAV of a fund for one daily epoch.',
  fields: (t) => ({
    epoch: t.int({ resolve: ({ row }) => row.epoch }),
    navPerShare: t.string({
      description: 'decimal with 6 decimal places',
      resolve: ({ row }) => formatUnits(row.navPerShare, NAV_DECIMALS),
    }),
    totalAssets: t.string({
      description: 'assets under management in the base asset, decimal',
      resolve: ({ row, fund }) => formatUnits(row.totalAssets, fund.baseAsset.decimals),
    }),
    totalSupply: t.string({
      nullable: true,
      description: 'shares outstanding, decimal (shares carry the base asset decimals)',
      resolve: ({ row, fund }) => formatUnits(row.totalSupply, fund.baseAsset.decimals),
    }),
    publishedAt: t.string({
      nullable: true,
      description: 'ISO 8601 time of the publishing transaction; null before publication',
      resolve: ({ row }) => (row.publishedAt === null ? null : isoFromSeconds(row.publishedAt)),
    }),
    status: t.field({ type: NavStatusRef, resolve: ({ row }) => row.status }),
    onchainTxHash: t.string({
      nullable: true,
      description: 'hash of the publishing transaction; null before publication',
      resolve: ({ row }) => row.publishedTxHash,
    }),
  }),
});
