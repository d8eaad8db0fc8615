// Routes of the protocol's registry: the protocol itself, its contracts and its settlement
// policies. Their bodies come from the registry file (policy parameters read live), so they
// have examples on every network.
import { API_VERSION } from '../../gateway/server.ts';
import { policyParamsExample, type DocumentExamples } from '../examples.ts';
import type { Data, RouteSpec } from '../routes.ts';

// the body's `kind` already says which parameters `params` holds, so the union's __typename goes
function withoutTypename<T extends Record<string, unknown>>(value: T | null): Omit<T, '__typename'> | null {
  if (!value) return null;
  const { __typename: _ignored, ...rest } = value;
  return rest;
}

export function getProtocolRoute({ registry, fund }: DocumentExamples): RouteSpec {
  return {
    operationId: 'getProtocol',
    path: '/v1/protocol',
    summary: 'Protocol metadata',
    description:
      'Name, version, chain, number of registered contracts, funds with their status, and policies.',
    tier: 'reference',
    params: [],
    document: `query { protocol { name slug version chain { id name explorer isTestnet } contractsCount
      funds { slug name status } policies { slug name kind } deployedAt docs } }`,
    toBody: (d) => d.protocol,
    responseSchema: 'Protocol',
    example: {
      name: registry.protocol.name,
      slug: registry.protocol.slug,
      version: API_VERSION,
      chain: registry.chain,
      contractsCount: registry.contracts.length,
      funds: [{ slug: fund.slug, name: fund.name, status: 'open' }],
      policies: registry.policies.map(({ slug, name, kind }) => ({ slug, name, kind })),
      deployedAt: registry.protocol.deployedAt,
      docs: registry.protocol.docs,
    },
  };
}

export function listContractsRoute({ registry, contract, explorerUrl }: DocumentExamples): RouteSpec {
  return {
    operationId: 'listContracts',
    path: '/v1/contracts',
    summary: 'Registered contracts',
    description: 'Every contract of the protocol with its role and block-explorer link.',
    tier: 'reference',
    params: [],
    document: 'query { contracts { name address chainId role roleEn category explorer } }',
    toBody: (d) => ({ items: d.contracts, count: d.contracts.length }),
    responseSchema: 'ContractList',
    example: {
      items: [
        {
          name: contract.name,
          address: contract.address,
          chainId: registry.chain.id,
          role: contract.role,
          roleEn: contract.roleEn,
          category: contract.category,
          explorer: explorerUrl(contract.address),
        },
      ],
      count: 1,
    },
  };
}

export function listPoliciesRoute({ registry }: DocumentExamples): RouteSpec {
  return {
    operationId: 'listPolicies',
    path: '/v1/policies',
    summary: 'Settlement policies',
    description:
      'The two settlement policies (fixed-plus-float and fractional-kelly) with their on-chain parameters read live; `params` names follow `kind`.',
    tier: 'reference',
    params: [],
    document: `query { policies { slug name kind address description params {
      __typename
      ... on FixedPlusFloatParams { annualBaseBps profitToHolderBps profitToReserveBps profitToNavBps reserveTargetMaxBps reserveTargetMinBps }
      ... on FractionalKellyParams { kellyFractionBps expectedEdgeBps varianceBps maxExposureBps reserveTargetMinBps reserveTargetMaxBps }
    } } }`,
    toBody: (d) => {
      const items = d.policies.map((p: Data) => ({ ...p, params: withoutTypename(p.params) }));
      return { items, count: items.length };
    },
    responseSchema: 'PolicyList',
    example: {
      items: registry.policies.map((p) => ({ ...p, params: policyParamsExample(p.kind) })),
      count: registry.policies.length,
    },
  };
}
