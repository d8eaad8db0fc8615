// The devnet protocol's fixed shape: who operates it, the two policies' parameters, the funds and
// the strategy catalogue. Deployment, scenario and registry/devnet.json all follow this one list.
import { keccak256, toBytes, getAddress, type Address } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { DEVNET_MNEMONIC } from './anvil.ts';

/** Dev account i of the devnet mnemonic (anvil unlocks the first ten). */
export function devAccount(index: number): Address {
  return mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: index }).address;
}

export const roles = {
  /** Deploys everything, owns the fund registry, administers and operates the NAV oracle. */
  deployer: devAccount(0),
  /** Holds VERIFIER_ROLE on the NAV oracle: verifies or rejects submitted NAVs. */
  verifier: devAccount(1),
};

export type PolicyName = 'ThreePoolPolicy' | 'KellyPolicy';

/** ThreePoolPolicy constructor order = params() order. */
export const threePoolParams = {
  annualBaseBps: 400,
  profitToHolderBps: 3000,
  profitToReserveBps: 2000,
  profitToNavBps: 5000,
  reserveTargetMaxBps: 1000,
  reserveTargetMinBps: 200,
} as const;

/**
 * KellyPolicy constructor order = params() order. Full Kelly would run edge / variance =
 * 900 / 600 = 1.5x; half Kelly runs 0.75x (under the 90% cap), so 75% of the NAV is exposed, the
 * holders receive the unexposed 25% of each profit, and the reserve target is 25% clamped to 15%.
 */
export const kellyParams = {
  kellyFractionBps: 5000,
  expectedEdgeBps: 900,
  varianceBps: 600,
  maxExposureBps: 9000,
  reserveTargetMinBps: 300,
  reserveTargetMaxBps: 1500,
} as const;

interface FundSpec {
  slug: string;
  name: string;
  shareSymbol: string;
  policy: PolicyName;
  multisig: Address;
}

export const fundSpecs: FundSpec[] = [
  {
    slug: 'harbor-stable-yield',
    name: 'Harbor Stable Yield Fund',
    shareSymbol: 'hSYF',
    policy: 'ThreePoolPolicy',
    multisig: devAccount(2),
  },
  {
    slug: 'summit-kelly-growth',
    name: 'Summit Kelly Growth Fund',
    shareSymbol: 'sKGF',
    policy: 'KellyPolicy',
    multisig: devAccount(3),
  },
  {
    slug: 'delta-basis-carry',
    name: 'Delta Basis Carry Fund',
    shareSymbol: 'dBCF',
    policy: 'ThreePoolPolicy',
    multisig: devAccount(4),
  },
];

export const strategySlugs = [
  'treasury-bill-ladder',
  'stablecoin-lending',
  'eth-basis-trade',
  'liquid-staking-yield',
  'btc-trend-following',
  'market-neutral-arbitrage',
  'options-covered-call',
  'rwa-private-credit',
] as const;
export type StrategySlug = (typeof strategySlugs)[number];

/**
 * Strategies are off-chain books the vault allocates to; on the devnet each is identified by an
 * address derived from its slug, so it is stable across runs and across networks' registries.
 */
export function strategyAddress(slug: StrategySlug): Address {
  return getAddress(`0x${keccak256(toBytes(`fund-protocol/strategy/${slug}`)).slice(-40)}`);
}

/** Multicall3's canonical address on public networks; the devnet installs it there too. */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
