// The protocol record: registry metadata with the funds' current status.
import { builder } from '../builder.ts';
import type { Registry } from '../sources/registry.ts';
import { ChainInfoRef } from './chain-info.ts';
import { FundRef } from './fund.ts';
import { PolicyRef } from './policy.ts';

export const ProtocolRef = builder.objectRef<Registry>('Protocol').implement({
  description: 'The fund-vault protocol.',
  fields: (t) => ({
    name: t.string({ resolve: (r) => r.protocol.name }),
    slug: t.string({ resolve: (r) => r.protocol.slug }),
    version: t.string({ description: 'protocol version (semver)', resolve: (r) => r.protocol.version }),
    network: t.exposeString('network', { description: 'registry network name' }),
    chain: t.field({ type: ChainInfoRef, resolve: (r) => r.chain }),
    contractsCount: t.int({ resolve: (r) => r.contracts.length }),
    funds: t.field({ type: [FundRef], resolve: (r) => r.funds }),
    policies: t.field({ type: [PolicyRef], resolve: (r) => r.policies }),
    deployedAt: t.string({ description: 'YYYY-MM-DD', resolve: (r) => r.protocol.deployedAt }),
    docs: t.string({ resolve: (r) => r.protocol.docs }),
  }),
});
