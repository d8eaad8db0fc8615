// The protocol record: registry metadata with the funds' current status.
import { builder } from '../builder.ts';
import type { Registry } from '../sources/registry.ts';
import { ChainRef } from './chain.ts';
import { FundRef } from './fund.ts';
import { PolicyRef } from './policy.ts';

export const ProtocolRef = builder.objectRef<Registry>('Protocol').implement({
  description: 'The fund-vault protocol.',
  fields: (t) => ({
    name: t.string({ description: 'display name', resolve: (r) => r.protocol.name }),
    slug: t.string({ description: 'identifier of the protocol', resolve: (r) => r.protocol.slug }),
    // SPEC: the API version is reported here and in the health record's api.version
    version: t.string({
      description: 'API version (semver), the same as api.version of health',
      resolve: (_r, _a, ctx) => ctx.apiVersion,
    }),
    network: t.exposeString('network', {
      description: 'name of the registry network this service serves, e.g. devnet or sepolia',
    }),
    chain: t.field({
      type: ChainRef,
      description: 'the chain it is deployed on',
      resolve: (r) => r.chain,
    }),
    contractsCount: t.int({
      description: 'number of registered contracts (the length of Query.contracts)',
      resolve: (r) => r.contracts.length,
    }),
    funds: t.field({
      type: [FundRef],
      description: 'every fund, in registry order',
      resolve: (r) => r.funds,
    }),
    policies: t.field({
      type: [PolicyRef],
      description: 'every settlement policy, in registry order',
      resolve: (r) => r.policies,
    }),
    deployedAt: t.string({
      description: 'date the protocol was deployed, YYYY-MM-DD',
      resolve: (r) => r.protocol.deployedAt,
    }),
    docs: t.string({ description: "URL of the protocol's documentation", resolve: (r) => r.protocol.docs }),
  }),
});
