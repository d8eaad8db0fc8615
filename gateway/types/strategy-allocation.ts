// One strategy's live allocation inside a fund vault.
import { builder } from '../builder.ts';

export interface StrategyAllocationShape {
  strategy: string;
  targetBps: number;
  capBps: number;
  active: boolean;
}

export const StrategyAllocationRef = builder
  .objectRef<StrategyAllocationShape>('StrategyAllocation')
  .implement({
    description: 'A strategy allocation read live from FundVault.strategies().',
    fields: (t) => ({
      strategy: t.exposeString('strategy', {
        description: 'strategy address as the chain returns it (checksummed; compare case-insensitively)',
      }),
      strategySlug: t.string({
        nullable: true,
        description:
          'slug of the catalogue strategy at this address (Query.strategy takes it); null when the registry does not list it',
        resolve: (a, _args, ctx) =>
          ctx.registry.document.strategies.find((s) => s.address.toLowerCase() === a.strategy.toLowerCase())
            ?.slug ?? null,
      }),
      targetBps: t.exposeInt('targetBps', {
        description: "target weight, bps of the vault's assets; the active targets sum to at most 10000",
      }),
      capBps: t.exposeInt('capBps', { description: 'maximum weight, bps; at least targetBps' }),
      active: t.exposeBoolean('active', {
        description: 'false once retired: it stays listed, and its target no longer counts',
      }),
    }),
  });
