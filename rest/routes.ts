// The route table: the single source of truth of the REST surface. Each entry holds the
// path, the parameter rules, the GraphQL document run in-process against the gateway, the
// mapping from its data to the response body, the cache tier and the documentation.
// Express routes, openapi.json, llms.txt, llms-full.txt and agents.json are generated from it.
import { notFound } from '../gateway/errors.ts';
import {
  ADDRESS_PATTERN,
  CURSOR_PATTERN,
  EVENT_NAME_PATTERN,
  MAX_INT,
  NAV_HISTORY_LIMIT,
  PAGE_LIMIT,
} from '../gateway/inputs.ts';

export const CACHE_TIERS = {
  reference: { maxAge: 3600, covers: 'protocol, contracts, policies, strategies, fund detail' },
  'latest-nav': { maxAge: 30, covers: 'latest NAV, fund list (carries each latest NAV)' },
  history: { maxAge: 300, covers: 'NAV history, dividends (rounds and proofs)' },
  live: { maxAge: 15, covers: 'health, events, allocations, reserve (live chain reads)' },
} as const;

export type CacheTier = keyof typeof CACHE_TIERS;

export type ParamSchema =
  | { type: 'integer'; minimum: number; maximum: number; default?: number }
  | { type: 'string'; pattern: string; maxLength?: number };

export interface ParamSpec {
  name: string;
  in: 'path' | 'query';
  description: string;
  schema: ParamSchema;
  /** the rule in words, quoted in 400 problems */
  rule: string;
  example: string | number;
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
  example: unknown;
  /** the not-found cases, for the 404 description */
  notFoundWhen?: string;
}

export interface DeprecatedRoute {
  path: string;
  replacement: string;
  description: string;
}

const slug = (what: 'fund' | 'strategy'): ParamSpec => ({
  name: 'slug',
  in: 'path',
  description: what === 'fund' ? 'fund slug, from GET /v1/funds' : 'strategy slug, from GET /v1/strategies',
  schema: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 64 },
  rule: 'a slug of lowercase letters, digits and single hyphens',
  example: what === 'fund' ? 'harbor-stable-yield' : 'eth-basis-trade',
});

const epochParam: ParamSpec = {
  name: 'epoch',
  in: 'path',
  description: 'settlement epoch of the round, from GET /v1/funds/{slug}/dividends',
  schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
  rule: `an integer from 0 to ${MAX_INT}`,
  example: 3,
};

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

const cursorParam: ParamSpec = {
  name: 'cursor',
  in: 'query',
  description: 'opaque `nextCursor` of the previous page; omit for the first (newest) page',
  schema: { type: 'string', pattern: CURSOR_PATTERN, maxLength: 64 },
  rule: 'a nextCursor value returned by this endpoint',
  example: 'ZDoz',
};

const blockParam = (name: string, description: string): ParamSpec => ({
  name,
  in: 'query',
  description,
  schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
  rule: `an integer block number from 0 to ${MAX_INT}`,
  example: name === 'fromBlock' ? 1 : 500,
});

const NAV_FIELDS = 'epoch navPerShare totalAssets totalSupply publishedAt status onchainTxHash';
const ROUND_FIELDS =
  'fund epoch merkleRoot total leafCount uri claimedCount claimedAmount postedAt postedBlock postedTxHash';
const STRATEGY_FIELDS = `slug name nameCn address category description explorer ratings {
  quantitative { sharpe maxDrawdownBps volatilityBps annualReturnBps score }
  qualitative { grade risk liquidity summary } }`;

const HASH_A = `0x${'a1'.repeat(32)}`;
const HASH_B = `0x${'b2'.repeat(32)}`;
const VAULT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const exampleNav = {
  epoch: 12,
  navPerShare: '1.012345',
  totalAssets: '1520000.000000',
  totalSupply: '1501465.000000',
  publishedAt: '2025-01-13T00:05:12.000Z',
  status: 'Published',
  onchainTxHash: HASH_A,
};
const exampleRound = {
  fund: 'harbor-stable-yield',
  epoch: 3,
  merkleRoot: HASH_A,
  total: '1250.000000',
  leafCount: 4,
  uri: 'distributions/harbor-stable-yield/3.json',
  claimedCount: 1,
  claimedAmount: '500.000000',
  postedAt: '2025-01-04T00:10:00.000Z',
  postedBlock: 120,
  postedTxHash: HASH_B,
};
const exampleStrategy = {
  slug: 'eth-basis-trade',
  name: 'ETH Basis Trade',
  nameCn: '以太坊基差交易',
  address: '0x1000000000000000000000000000000000000001',
  category: 'market-neutral',
  description: 'Captures the spread between spot and futures prices.',
  explorer: 'https://explorer.example/address/0x1000000000000000000000000000000000000001',
  ratings: {
    quantitative: { sharpe: 1.8, maxDrawdownBps: 450, volatilityBps: 600, annualReturnBps: 900, score: 82 },
    qualitative: { grade: 'A', risk: 'low', liquidity: 'daily', summary: 'Stable carry with low drawdowns.' },
  },
};

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

export const ROUTES: RouteSpec[] = [
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
      name: 'Fund Protocol',
      slug: 'fund-protocol',
      version: '1.0.0',
      chain: { id: 31337, name: 'devnet', explorer: 'https://explorer.example', isTestnet: true },
      contractsCount: 12,
      funds: [{ slug: 'harbor-stable-yield', name: 'Harbor Stable Yield Fund', status: 'open' }],
      policies: [{ slug: 'three-pool', name: 'ThreePoolPolicy', kind: 'fixed-plus-float' }],
      deployedAt: '2025-01-01',
      docs: 'https://docs.example/protocol',
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
          name: 'NavOracle',
          address: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
          chainId: 31337,
          role: '净值预言机',
          roleEn: 'NAV oracle',
          category: 'oracle',
          explorer: 'https://explorer.example/address/0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
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
      items: [
        {
          slug: 'three-pool',
          name: 'ThreePoolPolicy',
          kind: 'fixed-plus-float',
          address: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
          description: 'A fixed annual base plus a share of the profit.',
          params: {
            annualBaseBps: 400,
            profitToHolderBps: 5000,
            profitToReserveBps: 2000,
            profitToNavBps: 3000,
            reserveTargetMaxBps: 1500,
            reserveTargetMinBps: 500,
          },
        },
        {
          slug: 'kelly',
          name: 'KellyPolicy',
          kind: 'fractional-kelly',
          address: '0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9',
          description: 'Runs a fraction of the Kelly-optimal exposure.',
          params: {
            kellyFractionBps: 5000,
            expectedEdgeBps: 800,
            varianceBps: 400,
            maxExposureBps: 9000,
            reserveTargetMinBps: 1000,
            reserveTargetMaxBps: 3000,
          },
        },
      ],
      count: 2,
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
      indexer { chainId contractsTracked maxIndexedBlock lastUpdatedAt }
      nav { latestEpoch publishedAt } pausedModules now } }`,
    toBody: (d) => d.health,
    responseSchema: 'HealthRecord',
    example: {
      status: 'ok',
      api: { version: '1.0.0' },
      indexer: {
        chainId: 31337,
        contractsTracked: 5,
        maxIndexedBlock: 512,
        lastUpdatedAt: '2025-01-13T00:05:12.000Z',
      },
      nav: { latestEpoch: 12, publishedAt: '2025-01-13T00:05:12.000Z' },
      pausedModules: ['beta-growth:claims'],
      now: '2025-01-13T00:05:20.123Z',
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
    example: {
      items: [
        {
          slug: 'harbor-stable-yield',
          name: 'Harbor Stable Yield Fund',
          nameCn: '港湾稳健收益基金',
          chainId: 31337,
          baseAsset: 'USDC',
          policy: { slug: 'three-pool', address: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9' },
          status: 'open',
          since: '2025-01-01',
          nav: { epoch: 12, navPerShare: '1.012345', publishedAt: '2025-01-13T00:05:12.000Z' },
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
    params: [slug('fund')],
    document: `query($slug: String!) { fund(slug: $slug) { slug name
      addresses { vault shareToken policy multisig baseAsset } links { website portal } } }`,
    toBody: (d) => ({ data: d.fund }),
    responseSchema: 'FundDetail',
    notFoundWhen: 'the slug names no fund',
    example: {
      data: {
        slug: 'harbor-stable-yield',
        name: 'Harbor Stable Yield Fund',
        addresses: {
          vault: VAULT,
          shareToken: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
          policy: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
          multisig: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          baseAsset: '0x9A676e781A523b5d0C0e43731313A708CB607508',
        },
        links: { website: 'https://alpha.example', portal: 'https://app.alpha.example' },
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
    params: [slug('fund')],
    document: `query($slug: String!) { fund(slug: $slug) { slug latestNav { ${NAV_FIELDS} } } }`,
    toBody: (d) => {
      if (!d.fund.latestNav) throw notFound(`Fund ${d.fund.slug} has no published NAV yet.`);
      return { fund: d.fund.slug, nav: pickNav(d.fund.latestNav) };
    },
    responseSchema: 'LatestNav',
    notFoundWhen: 'the slug names no fund, or the fund has no published NAV yet',
    example: { fund: 'harbor-stable-yield', nav: exampleNav },
  },
  {
    operationId: 'getNavHistory',
    path: '/v1/funds/{slug}/nav/history',
    summary: 'NAV history of a fund',
    description:
      'NAV records of every status, ascending by epoch, at most `limit` points. Without parameters: the last 90 epochs. With `from`: the first `limit` epochs from `from` (up to `to`). With only `to`: the last `limit` epochs up to `to`.',
    tier: 'history',
    params: [
      slug('fund'),
      {
        name: 'from',
        in: 'query',
        description: 'start epoch, inclusive',
        schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
        rule: `an integer from 0 to ${MAX_INT}`,
        example: 1,
      },
      {
        name: 'to',
        in: 'query',
        description: 'end epoch, inclusive; must be >= from',
        schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
        rule: `an integer from 0 to ${MAX_INT}, not below from`,
        example: 30,
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
    example: {
      fund: 'harbor-stable-yield',
      points: [
        { ...exampleNav, epoch: 11, navPerShare: '1.010000', onchainTxHash: HASH_B },
        exampleNav,
        { ...exampleNav, epoch: 13, status: 'PendingVerification', publishedAt: null, onchainTxHash: null },
      ],
    },
  },
  {
    operationId: 'getAllocations',
    path: '/v1/funds/{slug}/allocations',
    summary: 'Live strategy allocations of a fund',
    description:
      'Read live from FundVault.strategies() and totalAssets(). Without a configured chain RPC: `available` false, `totalAssets` null, `strategies` empty.',
    tier: 'live',
    params: [slug('fund')],
    document: `query($slug: String!) { fund(slug: $slug) { allocations { fund available totalAssets
      strategies { strategy targetBps capBps active } } } }`,
    toBody: (d) => d.fund.allocations,
    responseSchema: 'AllocationRecord',
    notFoundWhen: 'the slug names no fund',
    example: {
      fund: 'harbor-stable-yield',
      available: true,
      totalAssets: '1520000.000000',
      strategies: [
        {
          strategy: '0x1000000000000000000000000000000000000001',
          targetBps: 6000,
          capBps: 7000,
          active: true,
        },
      ],
    },
  },
  {
    operationId: 'getReserve',
    path: '/v1/funds/{slug}/reserve',
    summary: 'Live reserve of a fund',
    description:
      "Read live from FundVault.reserveBalance() and the policy's reserve bounds. Without a configured chain RPC: `available` false and every other field null except `fund`.",
    tier: 'live',
    params: [slug('fund')],
    document: `query($slug: String!) { fund(slug: $slug) { reserve { fund available balance percentOfAum
      targetMinBps targetMaxBps } } }`,
    toBody: (d) => d.fund.reserve,
    responseSchema: 'ReserveRecord',
    notFoundWhen: 'the slug names no fund',
    example: {
      fund: 'harbor-stable-yield',
      available: true,
      balance: '152000.000000',
      percentOfAum: 10,
      targetMinBps: 500,
      targetMaxBps: 1500,
    },
  },
  {
    operationId: 'listDividendRounds',
    path: '/v1/funds/{slug}/dividends',
    summary: 'Dividend rounds of a fund',
    description:
      'Rounds newest epoch first, cursor paging: pass `nextCursor` back as `cursor` until it is null.',
    tier: 'history',
    params: [slug('fund'), limitParam('rounds'), cursorParam],
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
    example: { fund: 'harbor-stable-yield', items: [exampleRound], count: 1, nextCursor: null },
  },
  {
    operationId: 'getDividendRound',
    path: '/v1/funds/{slug}/dividends/{epoch}',
    summary: 'One dividend round',
    description: 'The Merkle root, total and leaf count of one round, with its claim progress.',
    tier: 'history',
    params: [slug('fund'), epochParam],
    document: `query($slug: String!, $epoch: Int!) { fund(slug: $slug) { dividend(epoch: $epoch) { ${ROUND_FIELDS} } } }`,
    toBody: (d) => ({ data: d.fund.dividend }),
    responseSchema: 'DividendRoundDetail',
    notFoundWhen: 'the slug names no fund, or the fund has no round for the epoch',
    example: { data: exampleRound },
  },
  {
    operationId: 'getDividendProof',
    path: '/v1/funds/{slug}/dividends/{epoch}/proof',
    summary: 'Merkle proof to claim a dividend',
    description:
      "The proof for `address`, computed from the round's distribution after checking that its root equals the on-chain root. Claim with DividendDistributor.claim(vault, epoch, account, amountRaw, proof) from the holder's own wallet; the service never signs.",
    tier: 'history',
    params: [
      slug('fund'),
      epochParam,
      {
        name: 'address',
        in: 'query',
        description: 'the account to prove',
        schema: { type: 'string', pattern: ADDRESS_PATTERN },
        rule: 'a 0x-prefixed address of 40 hex digits',
        example: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      },
    ],
    document: `query($slug: String!, $epoch: Int!, $address: String!) { fund(slug: $slug) { dividend(epoch: $epoch) {
      proof(address: $address) { fund vault epoch account amount amountRaw merkleRoot leaf proof claimed distributor } } } }`,
    toBody: (d) => ({ data: d.fund.dividend.proof }),
    responseSchema: 'MerkleProofDetail',
    notFoundWhen:
      'the slug names no fund, the fund has no round for the epoch, or the address has no leaf in it',
    example: {
      data: {
        fund: 'harbor-stable-yield',
        vault: VAULT,
        epoch: 3,
        account: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        amount: '500.000000',
        amountRaw: '500000000',
        merkleRoot: HASH_A,
        leaf: HASH_B,
        proof: [HASH_B, HASH_A],
        claimed: false,
        distributor: '0xa513E6E4b8f2a923D98304ec87F64353C4D5C853',
      },
    },
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
    example: { items: [exampleStrategy], count: 1 },
  },
  {
    operationId: 'getStrategy',
    path: '/v1/strategies/{slug}',
    summary: 'One strategy',
    description: 'A strategy with its ratings.',
    tier: 'reference',
    params: [slug('strategy')],
    document: `query($slug: String!) { strategy(slug: $slug) { ${STRATEGY_FIELDS} } }`,
    toBody: (d) => ({ data: d.strategy }),
    responseSchema: 'StrategyDetail',
    notFoundWhen: 'the slug names no strategy',
    example: { data: exampleStrategy },
  },
  {
    operationId: 'listEvents',
    path: '/v1/events',
    summary: 'Indexed on-chain events',
    description:
      'Events of every tracked contract (FundRegistry, NavOracle, DividendDistributor, fund vaults), newest first by (block, log index). Cursor paging is stable: new events never shift or repeat pages already read. Event names include FundRegistered, NavDrafted, NavSubmitted, NavVerified, NavPublished, NavRejected, SubscriptionRequested, RedemptionRequested, EpochSettled, StrategyAllocationSet, ModulePaused, ModuleUnpaused, FundClosed, DividendRoundPosted, DividendClaimed, and the OpenZeppelin access events OwnershipTransferred, RoleGranted, RoleRevoked, RoleAdminChanged.',
    tier: 'live',
    params: [
      {
        name: 'contract',
        in: 'query',
        description: 'emitting contract address (any case)',
        schema: { type: 'string', pattern: ADDRESS_PATTERN },
        rule: 'a 0x-prefixed address of 40 hex digits',
        example: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
      },
      {
        name: 'eventName',
        in: 'query',
        description: 'exact event name, case-sensitive',
        schema: { type: 'string', pattern: EVENT_NAME_PATTERN },
        rule: 'a Solidity event name: a letter then up to 63 letters, digits or underscores',
        example: 'NavPublished',
      },
      blockParam('fromBlock', 'lowest block, inclusive'),
      blockParam('toBlock', 'highest block, inclusive; must be >= fromBlock'),
      limitParam('events'),
      cursorParam,
    ],
    document: `query($contract: String, $eventName: String, $fromBlock: Int, $toBlock: Int, $limit: Int, $cursor: String) {
      events(contract: $contract, eventName: $eventName, fromBlock: $fromBlock, toBlock: $toBlock, limit: $limit, cursor: $cursor) {
        items { id contract contractName eventName blockNumber logIndex txHash timestamp args } nextCursor } }`,
    toBody: (d) => ({ items: d.events.items, count: d.events.items.length, nextCursor: d.events.nextCursor }),
    responseSchema: 'EventPage',
    example: {
      items: [
        {
          id: `${HASH_A}00000003`,
          contract: '0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0',
          contractName: 'NavOracle',
          eventName: 'NavPublished',
          blockNumber: 512,
          logIndex: 3,
          txHash: HASH_A,
          timestamp: '2025-01-13T00:05:12.000Z',
          args: { fund: VAULT.toLowerCase(), epoch: '12', navPerShare: '1012345' },
        },
      ],
      count: 1,
      nextCursor: 'ZTo1NDk3NTU4MTM4ODg',
    },
  },
];

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
