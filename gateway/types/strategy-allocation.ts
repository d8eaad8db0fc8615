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
      strategy: t.exposeString('strategy', { description: 'strategy address' }),
      strategySlug: t.string({
        nullable: true,
        description: 'catalogue slug of the strategy, when it is in the registry',
        resolve: (a, _args, ctx) =>
          ctx.registry.registry.strategies.find((s) => s.address.toLowerCase() === a.strategy.toLowerCase())
            ?.slug ?? null,
      }),
      targetBps: t.exposeInt('targetBps'),
      capBps: t.exposeInt('capBps'),
      active: t.exposeBoolean('active'),
    }),
  });
