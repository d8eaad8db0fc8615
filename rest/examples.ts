// The example values of the discovery documents. What comes from the registry (slugs, names,
// addresses, chain, links) is taken from the registry the service serves, so that a service over
// another network never documents the devnet's. What comes from indexed data (epochs, NAVs, the
// dividend round and its recipient, events, hashes, amounts) is what the seeded devnet scenario
// deterministically produces with its default parameters (devnet/README.md: seed 20250101, 190
// epochs, a round every 30 epochs per fund), as the devnet answers it: it is documented only when
// the registry served is the devnet's and the scenario seeded is the default one, where every
// example an agent copies works (a test makes each documented example request); otherwise (another
// registry, or SCENARIO_* changed) those examples are left out rather than shown wrong.
import { isDeepStrictEqual } from 'node:util';
import { dividendsCursor } from '../gateway/inputs.ts';
import {
  loadRegistry,
  type Registry,
  type RegistryContract,
  type RegistryFund,
  type RegistryPolicy,
  type RegistryStrategy,
} from '../gateway/sources/registry.ts';
import { explorerAddressUrl } from '../gateway/format.ts';
import { claimCall } from '../gateway/claim-function.ts';
import { kellyParams, threePoolParams } from '../devnet/protocol-config.ts';
import { DEVNET_REGISTRY_PATH } from './service-config.ts';

const DEVNET_REGISTRY = loadRegistry(DEVNET_REGISTRY_PATH);

/** the fund and strategy the devnet scenario examples are about */
const DEVNET_EXAMPLE_FUND = 'harbor-stable-yield';
const DEVNET_EXAMPLE_STRATEGY = 'eth-basis-trade';

/** A policy's on-chain parameters as the devnet deploys them (devnet/protocol-config.ts) */
export const policyParamsExample = (kind: string): Readonly<Record<string, number>> =>
  kind === 'fixed-plus-float' ? threePoolParams : kellyParams;

function find<T>(items: T[], what: string, match: (item: T) => boolean): T {
  const found = items.find(match);
  if (found === undefined) throw new Error(`registry/devnet.json has no ${what}`);
  return found;
}

const devnetFund = find(DEVNET_REGISTRY.funds, DEVNET_EXAMPLE_FUND, (f) => f.slug === DEVNET_EXAMPLE_FUND);
const devnetContract = (kind: RegistryContract['kind']): RegistryContract =>
  find(DEVNET_REGISTRY.contracts, kind, (c) => c.kind === kind);
const devnetStrategyAddress = (slug: string): string =>
  find(DEVNET_REGISTRY.strategies, slug, (s) => s.slug === slug).address;

/** NAV records of the devnet example fund, epochs 11 to 13 */
const EXAMPLE_NAVS = [
  {
    epoch: 11,
    navPerShare: '1.000940',
    totalAssets: '3524586.981783',
    totalSupply: '3521276.623902',
    settledAt: '2025-01-12T00:00:00.000Z',
    publishedAt: '2025-01-15T01:00:00.000Z',
    status: 'Published',
    onchainTxHash: '0x69c76435c6147c8d5eda0c3d5745fe4d4dc3bea74d9700756a0e98f442532ea5',
  },
  {
    epoch: 12,
    navPerShare: '1.001270',
    totalAssets: '3856624.133551',
    totalSupply: '3851729.948175',
    settledAt: '2025-01-13T00:00:00.000Z',
    publishedAt: '2025-01-16T01:00:00.000Z',
    status: 'Published',
    onchainTxHash: '0x4d1becb8f08888eb476b5c48abd0651ebc017fdd4d43b68c2beca468906bab26',
  },
  {
    epoch: 13,
    navPerShare: '1.001586',
    totalAssets: '4166337.034320',
    totalSupply: '4159736.449858',
    settledAt: '2025-01-14T00:00:00.000Z',
    publishedAt: '2025-01-17T01:00:00.000Z',
    status: 'Published',
    onchainTxHash: '0xb89b022d3ed90274f74b86d1fa485fb95691dd860cd741bc845534d2fc12a776',
  },
] as const;

/** the latest published NAV of the devnet example fund at the end of the scenario */
const EXAMPLE_LATEST_NAV = {
  epoch: 187,
  navPerShare: '1.017508',
  totalAssets: '7412443.022364',
  totalSupply: '7284893.561347',
  settledAt: '2025-07-07T00:00:00.000Z',
  publishedAt: '2025-07-10T01:00:00.000Z',
  status: 'Published',
  onchainTxHash: '0x852cd150619f3d8defdbc71fdec3db2897faafb876b40cb8c38c2b7583c00468',
} as const;

/** the dividend round of the devnet example fund at epoch 30 */
const EXAMPLE_ROUND = {
  fund: devnetFund.slug,
  epoch: 30,
  merkleRoot: '0x3701d114b441476986ca0655115c2039a73a4f8ba11c4d5971d4c7f720115896',
  total: '5415.433693',
  leafCount: 234,
  uri: `distributions/${devnetFund.slug}/30.json`,
  claimedCount: 28,
  claimedAmount: '633.161305',
  postedAt: '2025-01-31T01:00:00.000Z',
  postedBlock: 62,
  postedTxHash: '0xd9896270c2edbbb9f38bb0cb0d19fedf2ff5ac61aae628395711d2f615bbe32c',
} as const;

/** the leaf of one recipient of EXAMPLE_ROUND, who has not claimed, and its proof */
const EXAMPLE_LEAF = {
  fund: devnetFund.slug,
  vault: devnetFund.vault,
  epoch: EXAMPLE_ROUND.epoch,
  account: '0x7dE67bF9C98a9616A035f68674c3cAb85e498E66',
  amount: '28.562719',
  amountRaw: '28562719',
  merkleRoot: EXAMPLE_ROUND.merkleRoot,
  leaf: '0x6c58abeb644d921e0c4b3a258f74133013ed2f5ae4df434b5614ec3b92725401',
  proof: [
    '0x6f6c957ec1ca52b04661c3201bed1aa0d1aaf4a43c6d062b7399a165c838293f',
    '0xea7aaf5abca7e75da8b93d6c15cd35516868a10a38e6779cd8311e80e542b3f5',
    '0xb0c534b7b721945b5a6bf0aeb7de3b4445921a47eb083b1d08b595abd9864548',
    '0x18414f3f9ce082ab0dcc0832351381f73065fade9839212689d6eef979acea3a',
    '0x324d61267f7e9b5d65ab73f2a86236f52edc76272ff21da8ec48ad38ebade66d',
    '0xc063b8b24277691f30a0f9472205f0818eee2c25d08397f0c1228eaf64dbb8d3',
    '0x7949735d51e9e894cc2fc91c910262033617d3b38b2ec01c5b48e2ef1640b30f',
    '0x30ec859892e77237a30571ccc2c4f31a1f5c4a9f0e575fddcb8790d5272bb751',
  ],
} as const;

const EXAMPLE_DISTRIBUTOR = devnetContract('DividendDistributor').address;

/** the proof of EXAMPLE_LEAF as the service answers it, with the claim call it makes */
const EXAMPLE_PROOF = {
  ...EXAMPLE_LEAF,
  claimed: false,
  distributor: EXAMPLE_DISTRIBUTOR,
  claim: claimCall(EXAMPLE_LEAF, EXAMPLE_DISTRIBUTOR),
} as const;

/** the NAV oracle's publication of the devnet example fund's epoch 3 */
const EXAMPLE_EVENT = {
  id: '0x840a5cbc9ff24ffbd4831d51a417eefffae3bfd61f55cb8541e94537b58f385802000000',
  contract: devnetContract('NavOracle').address,
  contractName: devnetContract('NavOracle').name,
  fund: devnetFund.slug,
  eventName: 'NavPublished',
  blockNumber: 18,
  logIndex: 2,
  txHash: '0x840a5cbc9ff24ffbd4831d51a417eefffae3bfd61f55cb8541e94537b58f3858',
  timestamp: '2025-01-09T01:00:00.000Z',
  args: { fund: devnetFund.vault, epoch: '3', navPerShare: '1000612' },
} as const;

/** the last block the seeded scenario mines */
const SCENARIO_LAST_BLOCK = 382;

/** the nextCursor a dividends page read at the scenario's last block ends with when its last round is at epoch 150 */
const EXAMPLE_DIVIDENDS_CURSOR = dividendsCursor(devnetFund.vault, {
  epoch: 150,
  block: SCENARIO_LAST_BLOCK,
});

/** the live allocations of the devnet example fund at the end of the scenario */
const EXAMPLE_ALLOCATIONS = {
  fund: devnetFund.slug,
  available: true,
  totalAssets: '7391778.556019',
  // a retired strategy stays listed with active false
  strategies: (
    [
      ['treasury-bill-ladder', 1376, 3466, true],
      ['stablecoin-lending', 5505, 7837, true],
      ['rwa-private-credit', 1376, 3154, true],
      ['eth-basis-trade', 1029, 2204, false],
      ['liquid-staking-yield', 1376, 2653, true],
    ] as const
  ).map(([slug, targetBps, capBps, active]) => ({
    strategy: devnetStrategyAddress(slug),
    strategySlug: slug,
    targetBps,
    capBps,
    active,
  })),
};

/** the live reserve of the devnet example fund at the end of the scenario */
const EXAMPLE_RESERVE = {
  fund: devnetFund.slug,
  available: true,
  balance: '32274.488512',
  totalAssets: EXAMPLE_ALLOCATIONS.totalAssets,
  percentOfAum: 0.44,
  targetMinBps: 200,
  targetMaxBps: 1000,
};

/** the indexer's progress and the paused modules at the end of the scenario */
const EXAMPLE_HEALTH = {
  contractsTracked: 6,
  maxIndexedBlock: SCENARIO_LAST_BLOCK,
  pausedModules: ['summit-kelly-growth:redemptions'],
  now: '2025-07-10T01:00:12.345Z',
};

/** What the seeded devnet scenario answers: examples of indexed and live data. */
interface ScenarioExamples {
  navs: typeof EXAMPLE_NAVS;
  latestNav: typeof EXAMPLE_LATEST_NAV;
  round: typeof EXAMPLE_ROUND;
  proof: typeof EXAMPLE_PROOF;
  event: typeof EXAMPLE_EVENT;
  dividendsCursor: string;
  allocations: typeof EXAMPLE_ALLOCATIONS;
  reserve: typeof EXAMPLE_RESERVE;
  health: typeof EXAMPLE_HEALTH;
}

const DEVNET_SCENARIO: ScenarioExamples = {
  navs: EXAMPLE_NAVS,
  latestNav: EXAMPLE_LATEST_NAV,
  round: EXAMPLE_ROUND,
  proof: EXAMPLE_PROOF,
  event: EXAMPLE_EVENT,
  dividendsCursor: EXAMPLE_DIVIDENDS_CURSOR,
  allocations: EXAMPLE_ALLOCATIONS,
  reserve: EXAMPLE_RESERVE,
  health: EXAMPLE_HEALTH,
};

/** The examples of the discovery documents of a service over one registry. */
export interface DocumentExamples {
  registry: Registry;
  fund: RegistryFund;
  /** the example fund's policy */
  policy: RegistryPolicy;
  strategy: RegistryStrategy;
  /** the contract GET /v1/contracts and the `contract` filter of GET /v1/events show */
  contract: RegistryContract;
  /** the registry's block-explorer page of an address */
  explorerUrl(address: string): string;
  /**
   * whether the chain is the local devnet, whose block times are its scenario's simulated days (from
   * 2025-01-01), not the wall clock
   */
  syntheticChainClock: boolean;
  /** the devnet scenario's data; undefined unless the registry is the devnet's and the data its default scenario's */
  scenario: ScenarioExamples | undefined;
}

/**
 * The examples for a service over `registry`; `defaultScenario`: whether the data served is the
 * devnet's default scenario (false where SCENARIO_* changed it).
 */
export function documentExamples(registry: Registry, defaultScenario = true): DocumentExamples {
  const isDevnet = isDeepStrictEqual(registry, DEVNET_REGISTRY);
  // the devnet's are the funds and strategies its scenario examples are about; elsewhere the first
  const fund = (isDevnet && registry.funds.find((f) => f.slug === DEVNET_EXAMPLE_FUND)) || registry.funds[0];
  const strategy =
    (isDevnet && registry.strategies.find((s) => s.slug === DEVNET_EXAMPLE_STRATEGY)) ||
    registry.strategies[0];
  const contract = registry.contracts.find((c) => c.kind === 'NavOracle') ?? registry.contracts[0];
  if (!fund || !strategy || !contract) {
    throw new Error('a registry lists at least one fund, strategy and contract (its schema requires them)');
  }
  return {
    registry,
    fund,
    policy: registry.policies.find((p) => p.slug === fund.policy) as RegistryPolicy,
    strategy,
    contract,
    explorerUrl: (address) => explorerAddressUrl(registry.chain.explorer, address),
    syntheticChainClock: isDevnet,
    scenario: isDevnet && defaultScenario ? DEVNET_SCENARIO : undefined,
  };
}

/** the examples of the devnet the project ships: those of the committed openapi.json */
export const DEVNET_EXAMPLES = documentExamples(DEVNET_REGISTRY);
