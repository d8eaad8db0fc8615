// Routes of the funds themselves: the list, one fund's addresses and links, and its live
// allocations and reserve. A fund's NAV and dividends have modules of their own (fund-nav.ts,
// dividends.ts) although their paths also start /v1/funds.
import { ALLOCATION_RULE } from '../../gateway/types/allocations.ts';
import { RESERVE_OVER_ASSETS } from '../../gateway/types/reserve.ts';
import type { DocumentExamples } from '../examples.ts';
import type { Data, RouteSpec } from '../routes.ts';
import { slugParam } from './shared-params.ts';

export function listFundsRoute({ registry, fund, policy, scenario }: DocumentExamples): RouteSpec {
  return {
    operationId: 'listFunds',
    path: '/v1/funds',
    summary: 'Funds with their latest NAV',
    description:
      'Every fund with its status and latest Published NAV. Slugs from here build the /v1/funds/{slug} URLs.',
    tier: 'latest-nav',
    params: [],
    document: `query { funds { slug name nameCn chainId baseAsset { symbol } policy { slug address } status since
      latestNav { epoch navPerShare settledAt publishedAt } } }`,
    toBody: (d) => {
      const items = d.funds.map((f: Data) => ({
        slug: f.slug,
        name: f.name,
        nameCn: f.nameCn,
        chainId: f.chainId,
        baseAsset: f.baseAsset.symbol,
        policy: f.policy,
        status: f.status,
        since: f.since,
        nav: f.latestNav,
      }));
      return { items, count: items.length };
    },
    responseSchema: 'FundList',
    example: scenario && {
      items: [
        {
          slug: fund.slug,
          name: fund.name,
          nameCn: fund.nameCn,
          chainId: registry.chain.id,
          baseAsset: fund.baseAsset.symbol,
          policy: { slug: policy.slug, address: policy.address },
          status: 'open',
          since: fund.since,
          nav: {
            epoch: scenario.latestNav.epoch,
            navPerShare: scenario.latestNav.navPerShare,
            settledAt: scenario.latestNav.settledAt,
            publishedAt: scenario.latestNav.publishedAt,
          },
        },
      ],
      count: 1,
    },
  };
}

export function getFundRoute(examples: DocumentExamples): RouteSpec {
  const { fund, policy } = examples;
  return {
    operationId: 'getFund',
    path: '/v1/funds/{slug}',
    summary: 'One fund: addresses and links',
    description: 'The contracts and accounts of a fund, and its web links.',
    tier: 'reference',
    params: [slugParam('fund', examples)],
    document: `query($slug: String!) { fund(slug: $slug) { slug name
      addresses { vault shareToken policy multisig baseAsset } links { website portal } } }`,
    toBody: (d) => ({ data: d.fund }),
    responseSchema: 'FundDetail',
    notFoundWhen: 'the slug names no fund',
    example: {
      data: {
        slug: fund.slug,
        name: fund.name,
        addresses: {
          vault: fund.vault,
          shareToken: fund.shareToken,
          policy: policy.address,
          multisig: fund.multisig,
          baseAsset: fund.baseAsset.address,
        },
        links: fund.links,
      },
    },
  };
}

export function getAllocationsRoute(examples: DocumentExamples): RouteSpec {
  return {
    operationId: 'getAllocations',
    path: '/v1/funds/{slug}/allocations',
    summary: 'Live strategy allocations of a fund',
    description: `Read live from FundVault.strategies() and totalAssets(). ${ALLOCATION_RULE} Each strategy's \`strategySlug\` names it in GET /v1/strategies/{slug}. Without a configured chain RPC: \`available\` false, \`totalAssets\` null, \`strategies\` empty.`,
    tier: 'live',
    params: [slugParam('fund', examples)],
    document: `query($slug: String!) { fund(slug: $slug) { allocations { fund available totalAssets
      strategies { strategy strategySlug targetBps capBps active } } } }`,
    toBody: (d) => d.fund.allocations,
    responseSchema: 'AllocationRecord',
    notFoundWhen: 'the slug names no fund',
    example: examples.scenario?.allocations,
  };
}

export function getReserveRoute(examples: DocumentExamples): RouteSpec {
  return {
    operationId: 'getReserve',
    path: '/v1/funds/{slug}/reserve',
    summary: 'Live reserve of a fund',
    description: `Read live from FundVault.reserveBalance() and totalAssets() and the policy's reserve bounds: percentOfAum = balance / totalAssets x 100, rounded half up to 2 decimals (null when totalAssets is 0); targetMinBps and targetMaxBps are bps of totalAssets. ${RESERVE_OVER_ASSETS} Without a configured chain RPC: \`available\` false and every other field null except \`fund\`.`,
    tier: 'live',
    params: [slugParam('fund', examples)],
    document: `query($slug: String!) { fund(slug: $slug) { reserve { fund available balance totalAssets percentOfAum
      targetMinBps targetMaxBps } } }`,
    toBody: (d) => d.fund.reserve,
    responseSchema: 'ReserveRecord',
    notFoundWhen: 'the slug names no fund',
    example: examples.scenario?.reserve,
  };
}
