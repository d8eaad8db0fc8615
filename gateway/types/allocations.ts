// A fund's live strategy allocations: read on-chain at request time, or reported as
// unavailable when no chain RPC is configured.
import { builder } from '../builder.ts';
import { StrategyAllocationRef, type StrategyAllocationShape } from './strategy-allocation.ts';

/** what the vault enforces of the targets (FundVault.setStrategy), which the listed numbers alone do not show */
export const ALLOCATION_RULE =
  "Only active strategies' targets count: the vault keeps their sum at or below 10000 bps (it refuses a change that would exceed it). A retired strategy (active false) stays listed with its last target, which no longer counts, so the sum over every listed target may exceed 10000.";

export interface AllocationsShape {
  fund: string;
  available: boolean;
  totalAssets: string | null;
  strategies: StrategyAllocationShape[];
}

export const AllocationsRef = builder.objectRef<AllocationsShape>('Allocations').implement({
  description: `Live strategy allocations of a fund. ${ALLOCATION_RULE}`,
  fields: (t) => ({
    fund: t.exposeString('fund', { description: 'fund slug' }),
    available: t.exposeBoolean('available', {
      description:
        'false when the service has no chain RPC configured; totalAssets is then null and strategies empty. A configured RPC that fails gives an UPSTREAM_UNAVAILABLE error instead',
    }),
    totalAssets: t.exposeString('totalAssets', {
      nullable: true,
      description:
        'FundVault.totalAssets(), read live: decimal string in the base asset (BaseAsset.decimals applied); null when available is false',
    }),
    strategies: t.field({
      type: [StrategyAllocationRef],
      description:
        "FundVault.strategies(), read live, in the vault's order; retired strategies stay listed with active false; empty when available is false",
      resolve: (a) => a.strategies,
    }),
  }),
});
