// The route table: the single source of truth of the REST surface. Each entry holds the
// path, the parameter rules, the GraphQL document run in-process against the gateway, the
// mapping from its data to the response body, the cache tier and the documentation.
// Express routes, openapi.json, llms.txt, llms-full.txt and agents.json are generated from it.
// The examples are those of the registry served (rest/examples.ts): an example of indexed data
// exists only over the devnet's, so `example` is optional.
import { notFound } from '../gateway/errors.ts';
import { API_VERSION } from '../gateway/server.ts';
import {
  ADDRESS_PATTERN,
  CURSOR_PATTERN,
  MAX_INT,
  NAV_HISTORY_LIMIT,
  PAGE_LIMIT,
  SLUG_PATTERN,
  SLUG_RULE,
  type SlugResource,
} from '../gateway/inputs.ts';
import { EVENT_NAMES, EVENT_NAMES_BY_CONTRACT } from '../gateway/event-names.ts';
import { DEVNET_EXAMPLES, policyParamsExample, type DocumentExamples } from './examples.ts';

export const CACHE_TIERS = {
  reference: { maxAge: 3600, covers: 'protocol, contracts, policies, strategies, fund detail' },
  'latest-nav': { maxAge: 30, covers: 'latest NAV, fund list (carries each latest NAV)' },
  history: { maxAge: 300, covers: 'NAV history, dividends (rounds and proofs)' },
  live: { maxAge: 15, covers: 'health, events, allocations, reserve (live chain reads)' },
} as const;

export type CacheTier = keyof typeof CACHE_TIERS;

export type ParamSchema =
  | { type: 'integer'; minimum: number; maximum: number; default?: number }
  | { type: 'string'; pattern: string; maxLength?: number }
  /** a closed list of values, matched exactly (case-sensitive) */
  | { type: 'string'; enum: readonly string[] };

export interface ParamSpec {
  name: string;
  in: 'path' | 'query';
  description: string;
  schema: ParamSchema;
  /** the rule in words, quoted in 400 problems */
  rule: string;
  /** a value that answers as documented; absent where only the devnet scenario has one */
  example?: string | number;
  /**
   * A path parameter naming a registry resource: a value breaking the rule names none, so it is
   * a 404 (SPEC rule 3) in the words of an unknown slug's, which say how to list the valid values.
   */
  names?: Extract<SlugResource, 'fund' | 'strategy'>;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- GraphQL data is shaped by each route's own document */
type Data = any;

export interface RouteSpec {
  operationId: string;
  path: string;
  summary: string;
  description: string;
  tier: CacheTier;
  params: ParamSpec[];
  /** run in-process; variables are the parameters by name */
  document: string;
  /** GraphQL data -> response body; may throw NOT_FOUND */
  toBody(data: Data): unknown;
  /** component schema of the 200 body */
  responseSchema: string;
  /** a 200 body; absent where only the devnet scenario has one */
  example?: unknown;
  /** the not-found cases, for the 404 description */
  notFoundWhen?: string;
}

export interface DeprecatedRoute {
  path: string;
  replacement: string;
  description: string;
}

const slug = (what: 'fund' | 'strategy', examples: DocumentExamples): ParamSpec => ({
  name: 'slug',
  in: 'path',
  description: what === 'fund' ? 'fund slug, from GET /v1/funds' : 'strategy slug, from GET /v1/strategies',
  schema: { type: 'string', pattern: SLUG_PATTERN, maxLength: 64 },
  rule: SLUG_RULE,
  example: what === 'fund' ? examples.fund.slug : examples.strategy.slug,
  names: what,
});

const epochParam = (examples: DocumentExamples): ParamSpec => ({
  name: 'epoch',
  in: 'path',
  description: 'settlement epoch of the round, from GET /v1/funds/{slug}/dividends',
  schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
  rule: `an integer from 0 to ${MAX_INT}`,
  example: examples.scenario?.round.epoch,
});

const limitParam = (what: string): ParamSpec => ({
  name: 'limit',
  in: 'query',
  description: `${what} per page`,
  schema: {
    type: 'integer',
    minimum: PAGE_LIMIT.minimum,
    maximum: PAGE_LIMIT.maximum,
    default: PAGE_LIMIT.default,
  },
  rule: `an integer from ${PAGE_LIMIT.minimum} to ${PAGE_LIMIT.maximum}`,
  example: 10,
});

/** `example`: a nextCursor as this endpoint returns it (each endpoint's cursors are its own) */
const cursorParam = (example: string | undefined): ParamSpec => ({
  name: 'cursor',
  in: 'query',
  description: 'opaque `nextCursor` of the previous page; omit for the first (newest) page',
  schema: { type: 'string', pattern: CURSOR_PATTERN, maxLength: 64 },
  rule: 'a nextCursor value returned by this endpoint',
  example,
});

/** `example`: a block the devnet scenario holds events at or before */
const blockParam = (name: string, description: string, example: number | undefined): ParamSpec => ({
  name,
  in: 'query',
  description,
  schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
  rule: `an integer block number from 0 to ${MAX_INT}`,
  example,
});

const NAV_FIELDS = 'epoch navPerShare totalAssets totalSupply publishedAt status onchainTxHash';
const ROUND_FIELDS =
  'fund epoch merkleRoot total leafCount uri claimedCount claimedAmount postedAt postedBlock postedTxHash';
const STRATEGY_FIELDS = `slug name nameCn address category description explorer ratings {
  quantitative { sharpe maxDrawdownBps volatilityBps annualReturnBps score }
  qualitative { grade risk liquidity summary } }`;

function pickNav(nav: Data) {
  return {
    epoch: nav.epoch,
    navPerShare: nav.navPerShare,
    totalAssets: nav.totalAssets,
    totalSupply: nav.totalSupply,
    publishedAt: nav.publishedAt,
    status: nav.status,
    onchainTxHash: nav.onchainTxHash,
  };
}

function withoutTypename<T extends Record<string, unknown>>(value: T | null): Omit<T, '__typename'> | null {
  if (!value) return null;
  const { __typename: _ignored, ...rest } = value;
  return rest;
}

/** The route table, with the examples of one registry's documents. */
export function routeTable(examples: DocumentExamples): RouteSpec[] {
  const { registry, fund, policy, strategy, contract, explorerUrl, scenario } = examples;
  const strategyExample = {
    slug: strategy.slug,
    name: strategy.name,
    nameCn: strategy.nameCn,
    address: strategy.address,
    category: strategy.category,
    description: strategy.description,
    explorer: explorerUrl(strategy.address),
    ratings: strategy.ratings,
  };
  return [
    {
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
    },
    {
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
    },
    {
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
    },
    {
      operationId: 'getHealth',
      path: '/v1/health',
      summary: 'Service and indexer health',
      description:
        'Liveness, indexer progress (poll it to detect stale data), the latest NAV publication, and paused modules read live.',
      tier: 'live',
      params: [],
      document: `query { health { status api { version }
      indexer { chainId contractsTracked maxIndexedBlock lastUpdatedAt hasIndexingErrors chainHeadBlock lagBlocks }
      nav { latestEpoch publishedAt } pausedModules now } }`,
      toBody: (d) => d.health,
      responseSchema: 'HealthRecord',
      example: scenario && {
        status: 'ok',
        api: { version: API_VERSION },
        indexer: {
          chainId: registry.chain.id,
          contractsTracked: scenario.health.contractsTracked,
          maxIndexedBlock: scenario.health.maxIndexedBlock,
          lastUpdatedAt: scenario.latestNav.publishedAt,
          hasIndexingErrors: false,
          chainHeadBlock: scenario.health.maxIndexedBlock,
          lagBlocks: 0,
        },
        nav: { latestEpoch: scenario.latestNav.epoch, publishedAt: scenario.latestNav.publishedAt },
        pausedModules: scenario.health.pausedModules,
        now: scenario.health.now,
      },
    },
    {
      operationId: 'listFunds',
      path: '/v1/funds',
      summary: 'Funds with their latest NAV',
      description:
        'Every fund with its status and latest Published NAV. Slugs from here build the /v1/funds/{slug} URLs.',
      tier: 'latest-nav',
      params: [],
      document: `query { funds { slug name nameCn chainId baseAsset { symbol } policy { slug address } status since
      latestNav { epoch navPerShare publishedAt } } }`,
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
              publishedAt: scenario.latestNav.publishedAt,
            },
          },
        ],
        count: 1,
      },
    },
    {
      operationId: 'getFund',
      path: '/v1/funds/{slug}',
      summary: 'One fund: addresses and links',
      description: 'The contracts and accounts of a fund, and its web links.',
      tier: 'reference',
      params: [slug('fund', examples)],
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
    },
    {
      operationId: 'getLatestNav',
      path: '/v1/funds/{slug}/nav',
      summary: 'Latest published NAV of a fund',
      description:
        'The NAV record of the highest Published epoch. Records still in Draft, PendingVerification or Verified appear in the NAV history.',
      tier: 'latest-nav',
      params: [slug('fund', examples)],
      document: `query($slug: String!) { fund(slug: $slug) { slug latestNav { ${NAV_FIELDS} } } }`,
      toBody: (d) => {
        if (!d.fund.latestNav) throw notFound(`Fund ${d.fund.slug} has no published NAV yet.`);
        return { fund: d.fund.slug, nav: pickNav(d.fund.latestNav) };
      },
      responseSchema: 'LatestNav',
      notFoundWhen: 'the slug names no fund, or the fund has no published NAV yet',
      example: scenario && { fund: fund.slug, nav: scenario.latestNav },
    },
    {
      operationId: 'getNavHistory',
      path: '/v1/funds/{slug}/nav/history',
      summary: 'NAV history of a fund',
      description:
        'NAV records of every status, ascending by epoch, at most `limit` points. Without parameters: the last 90 epochs. With `from`: the first `limit` epochs from `from` (up to `to`). With only `to`: the last `limit` epochs up to `to`.',
      tier: 'history',
      params: [
        slug('fund', examples),
        {
          name: 'from',
          in: 'query',
          description: 'start epoch, inclusive',
          schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
          rule: `an integer from 0 to ${MAX_INT}`,
          example: scenario?.navs[0].epoch,
        },
        {
          name: 'to',
          in: 'query',
          description: 'end epoch, inclusive; must be >= from',
          schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
          // `to` below `from` is refused by the query with its own detail naming both values
          rule: `an integer from 0 to ${MAX_INT}`,
          example: scenario?.navs[2].epoch,
        },
        {
          name: 'limit',
          in: 'query',
          description: 'maximum number of points',
          schema: {
            type: 'integer',
            minimum: NAV_HISTORY_LIMIT.minimum,
            maximum: NAV_HISTORY_LIMIT.maximum,
            default: NAV_HISTORY_LIMIT.default,
          },
          rule: `an integer from ${NAV_HISTORY_LIMIT.minimum} to ${NAV_HISTORY_LIMIT.maximum}`,
          example: 30,
        },
      ],
      document: `query($slug: String!, $from: Int, $to: Int, $limit: Int) { fund(slug: $slug) { slug
      navHistory(from: $from, to: $to, limit: $limit) { ${NAV_FIELDS} } } }`,
      toBody: (d) => ({ fund: d.fund.slug, points: d.fund.navHistory.map(pickNav) }),
      responseSchema: 'NavHistory',
      notFoundWhen: 'the slug names no fund',
      example: scenario && { fund: fund.slug, points: scenario.navs },
    },
    {
      operationId: 'getAllocations',
      path: '/v1/funds/{slug}/allocations',
      summary: 'Live strategy allocations of a fund',
      description:
        'Read live from FundVault.strategies() and totalAssets(). Without a configured chain RPC: `available` false, `totalAssets` null, `strategies` empty.',
      tier: 'live',
      params: [slug('fund', examples)],
      document: `query($slug: String!) { fund(slug: $slug) { allocations { fund available totalAssets
      strategies { strategy targetBps capBps active } } } }`,
      toBody: (d) => d.fund.allocations,
      responseSchema: 'AllocationRecord',
      notFoundWhen: 'the slug names no fund',
      example: scenario?.allocations,
    },
    {
      operationId: 'getReserve',
      path: '/v1/funds/{slug}/reserve',
      summary: 'Live reserve of a fund',
      description:
        "Read live from FundVault.reserveBalance() and the policy's reserve bounds. Without a configured chain RPC: `available` false and every other field null except `fund`.",
      tier: 'live',
      params: [slug('fund', examples)],
      document: `query($slug: String!) { fund(slug: $slug) { reserve { fund available balance percentOfAum
      targetMinBps targetMaxBps } } }`,
      toBody: (d) => d.fund.reserve,
      responseSchema: 'ReserveRecord',
      notFoundWhen: 'the slug names no fund',
      example: scenario?.reserve,
    },
    {
      operationId: 'listDividendRounds',
      path: '/v1/funds/{slug}/dividends',
      summary: 'Dividend rounds of a fund',
      description:
        'Rounds newest epoch first, cursor paging: pass `nextCursor` back as `cursor` until it is null.',
      tier: 'history',
      params: [slug('fund', examples), limitParam('rounds'), cursorParam(scenario?.dividendsCursor)],
      document: `query($slug: String!, $limit: Int, $cursor: String) { fund(slug: $slug) { slug
      dividends(limit: $limit, cursor: $cursor) { items { ${ROUND_FIELDS} } nextCursor } } }`,
      toBody: (d) => ({
        fund: d.fund.slug,
        items: d.fund.dividends.items,
        count: d.fund.dividends.items.length,
        nextCursor: d.fund.dividends.nextCursor,
      }),
      responseSchema: 'DividendRoundPage',
      notFoundWhen: 'the slug names no fund',
      example: scenario && { fund: fund.slug, items: [scenario.round], count: 1, nextCursor: null },
    },
    {
      operationId: 'getDividendRound',
      path: '/v1/funds/{slug}/dividends/{epoch}',
      summary: 'One dividend round',
      description: 'The Merkle root, total and leaf count of one round, with its claim progress.',
      tier: 'history',
      params: [slug('fund', examples), epochParam(examples)],
      document: `query($slug: String!, $epoch: Int!) { fund(slug: $slug) { dividend(epoch: $epoch) { ${ROUND_FIELDS} } } }`,
      toBody: (d) => ({ data: d.fund.dividend }),
      responseSchema: 'DividendRoundDetail',
      notFoundWhen: 'the slug names no fund, or the fund has no round for the epoch',
      example: scenario && { data: scenario.round },
    },
    {
      operationId: 'getDividendProof',
      path: '/v1/funds/{slug}/dividends/{epoch}/proof',
      summary: 'Merkle proof to claim a dividend',
      description:
        "The proof for `address`, computed from the round's distribution after checking that its root equals the on-chain root. Claim with DividendDistributor.claim(vault, epoch, account, amountRaw, proof) from the holder's own wallet; the service never signs.",
      tier: 'history',
      params: [
        slug('fund', examples),
        epochParam(examples),
        {
          name: 'address',
          in: 'query',
          description: 'the account to prove',
          schema: { type: 'string', pattern: ADDRESS_PATTERN },
          rule: 'a 0x-prefixed address of 40 hex digits',
          example: scenario?.proof.account,
        },
      ],
      document: `query($slug: String!, $epoch: Int!, $address: String!) { fund(slug: $slug) { dividend(epoch: $epoch) {
      proof(address: $address) { fund vault epoch account amount amountRaw merkleRoot leaf proof claimed distributor } } } }`,
      toBody: (d) => ({ data: d.fund.dividend.proof }),
      responseSchema: 'MerkleProofDetail',
      notFoundWhen:
        'the slug names no fund, the fund has no round for the epoch, the address is not a recipient of the round (it has no leaf in it), or this deployment serves no proofs (it has no distribution files)',
      example: scenario && { data: scenario.proof },
    },
    {
      operationId: 'listStrategies',
      path: '/v1/strategies',
      summary: 'Strategy catalogue',
      description:
        'Every strategy with quantitative and qualitative ratings. Slugs from here build /v1/strategies/{slug}.',
      tier: 'reference',
      params: [],
      document: `query { strategies { ${STRATEGY_FIELDS} } }`,
      toBody: (d) => ({ items: d.strategies, count: d.strategies.length }),
      responseSchema: 'StrategyList',
      example: { items: [strategyExample], count: 1 },
    },
    {
      operationId: 'getStrategy',
      path: '/v1/strategies/{slug}',
      summary: 'One strategy',
      description: 'A strategy with its ratings.',
      tier: 'reference',
      params: [slug('strategy', examples)],
      document: `query($slug: String!) { strategy(slug: $slug) { ${STRATEGY_FIELDS} } }`,
      toBody: (d) => ({ data: d.strategy }),
      responseSchema: 'StrategyDetail',
      notFoundWhen: 'the slug names no strategy',
      example: { data: strategyExample },
    },
    {
      operationId: 'listEvents',
      path: '/v1/events',
      summary: 'Indexed on-chain events',
      description: `Events of every tracked contract (FundRegistry, NavOracle, DividendDistributor, fund vaults), newest first by (block, log index). Cursor paging is stable: new events never shift or repeat pages already read. Every event of these contracts is indexed, so \`eventName\` is one of a closed list, by emitting contract: ${EVENT_NAMES_BY_CONTRACT}. Any other \`eventName\`, or one in another case, is refused with 400.`,
      tier: 'live',
      params: [
        {
          name: 'contract',
          in: 'query',
          description: 'emitting contract address (any case), from GET /v1/contracts',
          schema: { type: 'string', pattern: ADDRESS_PATTERN },
          rule: 'a 0x-prefixed address of 40 hex digits',
          example: contract.address,
        },
        {
          name: 'eventName',
          in: 'query',
          description: 'name of the event',
          schema: { type: 'string', enum: EVENT_NAMES },
          rule: `one of these event names, exactly as written (case-sensitive): ${EVENT_NAMES.join(', ')}`,
          example: 'NavPublished',
        },
        blockParam('fromBlock', 'lowest block, inclusive', scenario && 1),
        blockParam('toBlock', 'highest block, inclusive; must be >= fromBlock', scenario && 500),
        limitParam('events'),
        cursorParam(scenario?.eventsCursor),
      ],
      document: `query($contract: String, $eventName: String, $fromBlock: Int, $toBlock: Int, $limit: Int, $cursor: String) {
      events(contract: $contract, eventName: $eventName, fromBlock: $fromBlock, toBlock: $toBlock, limit: $limit, cursor: $cursor) {
        items { id contract contractName eventName blockNumber logIndex txHash timestamp args } nextCursor } }`,
      toBody: (d) => ({
        items: d.events.items,
        count: d.events.items.length,
        nextCursor: d.events.nextCursor,
      }),
      responseSchema: 'EventPage',
      example: scenario && {
        items: [scenario.event],
        count: 1,
        nextCursor: scenario.eventsCursor,
      },
    },
  ];
}

/** the route table with the devnet's examples: that of the committed openapi.json */
export const ROUTES: RouteSpec[] = routeTable(DEVNET_EXAMPLES);

export const DEPRECATED_ROUTES: DeprecatedRoute[] = [
  {
    path: '/v1/nav/{slug}',
    replacement: '/v1/funds/{slug}/nav',
    description: 'Pre-1.0 latest-NAV path, removed in 1.0.0.',
  },
  {
    path: '/v1/funds/{slug}/navs',
    replacement: '/v1/funds/{slug}/nav/history',
    description: 'Pre-1.0 NAV history path, removed in 1.0.0.',
  },
];
