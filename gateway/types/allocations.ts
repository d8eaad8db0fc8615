// A fund's live strategy allocations: read on-chain at request time, or reported as
// unavailable when no chain RPC is configured.
import { builder } from '../builder.ts';
import { StrategyAllocationRef, type StrategyAllocationShape } from './strategy-allocation.ts';

export interface AllocationsShape {
  fund: string;
  available: boolean;
  totalAssets: string | null;
  strategies: StrategyAllocationShape[];
}

export const AllocationsRef = builder.objectRef<AllocationsShape>('Allocations').implement({
  description: 'Live strategy allocations of a fund.',
  fields: (t) => ({
    fund: t.exposeString('fund', { description: 'fund slug' }),
    available: t.exposeBoolean('available', {
      description:
        'false when the chain RPC or contract is not configured; totalAssets is then null and strategies empty',
    }),
    totalAssets: t.exposeString('totalAssets', {
      nullable: true,
      description: 'FundVault.totalAssets() in the base asset, decimal',
    }),
    strategies: t.field({ type: [StrategyAllocationRef], resolve: (a) => a.strategies }),
  }),
});
