// The parameters of a policy: each policy kind has its own typed parameter set.
import { builder } from '../builder.ts';
import { FixedPlusFloatParamsRef } from './fixed-plus-float-params.ts';
import { FractionalKellyParamsRef } from './fractional-kelly-params.ts';

export const PolicyParamsRef = builder.unionType('PolicyParams', {
  description: 'On-chain parameters of a settlement policy; the member type follows the policy kind.',
  types: [FixedPlusFloatParamsRef, FractionalKellyParamsRef],
  resolveType: (params) =>
    params.kind === 'fixed-plus-float' ? 'FixedPlusFloatParams' : 'FractionalKellyParams',
});
