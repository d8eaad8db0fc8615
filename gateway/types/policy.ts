// A settlement policy from the registry, with its parameters read live on-chain.
import { builder } from '../builder.ts';
import type { RegistryPolicy } from '../sources/registry.ts';
import type { FixedPlusFloatParamsShape } from './fixed-plus-float-params.ts';
import type { FractionalKellyParamsShape } from './fractional-kelly-params.ts';
import { PolicyParamsRef } from './policy-params.ts';

export const PolicyRef = builder.objectRef<RegistryPolicy>('Policy').implement({
  description: 'A settlement policy. A fund references exactly one policy.',
  fields: (t) => ({
    slug: t.exposeString('slug', {
      description: 'identifier: policy(slug) takes it; Fund.policy names the policy of a fund',
    }),
    name: t.exposeString('name', { description: 'contract name, e.g. ThreePoolPolicy' }),
    kind: t.exposeString('kind', {
      description:
        'fixed-plus-float (ThreePoolPolicy) or fractional-kelly (KellyPolicy); params is of the matching type',
    }),
    address: t.exposeString('address', {
      description: 'policy contract address as the registry writes it (compare case-insensitively)',
    }),
    description: t.exposeString('description', { description: 'what the policy does, in English' }),
    params: t.field({
      type: PolicyParamsRef,
      nullable: true,
      description:
        'on-chain parameters, read live; null when no chain RPC is configured, and null with an UPSTREAM_UNAVAILABLE error when it fails',
      resolve: async (policy, _a, ctx) => {
        if (!ctx.chain) return null;
        const address = policy.address as `0x${string}`;
        if (policy.kind === 'fixed-plus-float') {
          const p = await ctx.chain.threePoolPolicyParams(address);
          const shape: FixedPlusFloatParamsShape = {
            kind: 'fixed-plus-float',
            annualBaseBps: p[0],
            profitToHolderBps: p[1],
            profitToReserveBps: p[2],
            profitToNavBps: p[3],
            reserveTargetMaxBps: p[4],
            reserveTargetMinBps: p[5],
          };
          return shape;
        }
        const p = await ctx.chain.kellyPolicyParams(address);
        const shape: FractionalKellyParamsShape = {
          kind: 'fractional-kelly',
          kellyFractionBps: p[0],
          expectedEdgeBps: p[1],
          varianceBps: p[2],
          maxExposureBps: p[3],
          reserveTargetMinBps: p[4],
          reserveTargetMaxBps: p[5],
        };
        return shape;
      },
    }),
  }),
});
