// The scenario's per-fund script (what each fund of the deployment does and when) and the state it
// keeps per fund while the days run. All of the scenario's mutable state apart from the ledger
// lives in these records, so this file is the map of what the other parts read and change.
import { getAddress, keccak256, toBytes, type Address, type Hex } from 'viem';
import type { DeployedFund, Deployment } from '../deploy.ts';
import {
  MODULE_NAMES,
  type LedgerNavRecord,
  type ModuleName,
  type NavStatus,
  type TxRef,
} from '../ledger.ts';
import type { StrategySlug } from '../protocol-config.ts';
import type { Random } from '../random.ts';
import type { ScenarioParams } from '../scenario-params.ts';

/** The vault's module ids (pause, unpause, pausedModules): each name's position in MODULE_NAMES. */
export const MODULE = Object.fromEntries(MODULE_NAMES.map((name, id) => [name, id])) as Record<
  ModuleName,
  number
>;

/** Per-fund behaviour of the standard scenario, by position in deployment.funds. */
interface FundPlan {
  launchDay: number;
  /** Annual mean and volatility of the strategy book's return, in parts per million. */
  meanPpm: number;
  volPpm: number;
  initialStrategies: StrategySlug[];
  spareStrategies: StrategySlug[];
  pauses: { module: number; from: number; to: number | null }[];
  closeDay: number | null;
  /** Epochs whose NAV is rejected once, and at which stage. */
  forcedRejections: { epoch: number; stage: 'PendingVerification' | 'Verified' }[];
}

function fundPlans(epochs: number): FundPlan[] {
  const subscriptionPause = Math.round(epochs * 0.3);
  const claimsPause = Math.round(epochs * 0.55);
  return [
    {
      launchDay: 1,
      meanPpm: 80_000,
      volPpm: 12_000,
      initialStrategies: [
        'treasury-bill-ladder',
        'stablecoin-lending',
        'rwa-private-credit',
        'eth-basis-trade',
      ],
      spareStrategies: ['liquid-staking-yield'],
      pauses: [
        { module: MODULE.subscriptions, from: subscriptionPause, to: subscriptionPause + 5 },
        { module: MODULE.claims, from: claimsPause, to: claimsPause + 3 },
      ],
      closeDay: null,
      forcedRejections: [{ epoch: 5, stage: 'PendingVerification' }],
    },
    {
      launchDay: 1,
      meanPpm: 200_000,
      volPpm: 100_000,
      initialStrategies: [
        'btc-trend-following',
        'eth-basis-trade',
        'options-covered-call',
        'market-neutral-arbitrage',
      ],
      spareStrategies: ['liquid-staking-yield', 'stablecoin-lending'],
      pauses: [{ module: MODULE.redemptions, from: epochs - 7, to: null }],
      closeDay: null,
      forcedRejections: [{ epoch: 9, stage: 'Verified' }],
    },
    {
      launchDay: 11,
      meanPpm: 100_000,
      volPpm: 30_000,
      initialStrategies: ['eth-basis-trade', 'market-neutral-arbitrage', 'stablecoin-lending'],
      spareStrategies: ['treasury-bill-ladder'],
      pauses: [],
      closeDay: Math.round(epochs * 0.8),
      forcedRejections: [],
    },
  ];
}

/** One epoch's NAV record on its way through the oracle (nav.ts). */
export interface RecordRun {
  ledger: LedgerNavRecord;
  /** A record moves at most one step per day. */
  lastStepDay: number;
  /** The stage at which this record is still to be rejected once, if any. */
  rejectAt: NavStatus | null;
  /** Draft status alone does not say whether the draft was sent: a rejection returns to Draft too. */
  needsRedraft: boolean;
}

/** A dividend leaf that will be claimed on `dueDay` (dividends.ts). */
interface PendingClaim {
  epoch: number;
  account: Address;
  amount: bigint;
  proof: Hex[];
  dueDay: number;
}

/** One row of a vault's strategy table (fund-admin.ts). */
export interface StrategyRun {
  slug: string;
  address: Address;
  targetBps: number;
  capBps: number;
  active: boolean;
}

export interface FundRun {
  deployed: DeployedFund;
  plan: FundPlan;
  investors: Address[];
  /** Investors still to make their first subscription during the onboarding days. */
  onboardingQueue: Address[];
  /** Investors that approved this fund's vault. */
  approved: Set<Address>;
  /** Share balances as the scenario expects them; dividend rounds check them against the chain. */
  balances: Map<Address, bigint>;
  /** As of the last settlement: the base of the next day's P&L. */
  totalAssets: bigint;
  nextEpoch: number;
  lastEpoch: number;
  /** Settled its last epoch (the run's end, or the close day). */
  finished: boolean;
  /** By module id, as scheduled by the plan's pauses. */
  paused: boolean[];
  closedAt: TxRef | null;
  records: RecordRun[];
  lastPublished: number;
  /** Subscriptions of the epoch not settled yet: they mint at its NAV. */
  openSubscriptions: { investor: Address; amount: bigint }[];
  claims: PendingClaim[];
  strategies: StrategyRun[];
  nextAllocationDay: number;
}

function investorAddress(seed: number, index: number): Address {
  return getAddress(`0x${keccak256(toBytes(`fund-protocol/investor/${seed}/${index}`)).slice(-40)}`);
}

/** The funds' starting state. Draws from `random`: per fund, its investors, then its first reallocation day. */
export function createFunds(random: Random, deployment: Deployment, params: ScenarioParams): FundRun[] {
  const plans = fundPlans(params.epochs);
  if (deployment.funds.length !== plans.length) throw new Error(`the scenario plans ${plans.length} funds`);
  // Twice as many investors as one fund takes, so many investors hold two funds.
  const pool = Array.from({ length: params.investorsPerFund * 2 }, (_, i) => investorAddress(params.seed, i));
  return deployment.funds.map((deployed, i) => {
    const plan = plans[i]!;
    const investors = random.shuffle(pool).slice(0, params.investorsPerFund);
    return {
      deployed,
      plan,
      investors,
      onboardingQueue: [...investors],
      approved: new Set(),
      balances: new Map(),
      totalAssets: 0n,
      nextEpoch: 1,
      lastEpoch: (plan.closeDay ?? params.epochs) - plan.launchDay + 1,
      finished: false,
      paused: [false, false, false],
      closedAt: null,
      records: [],
      lastPublished: 0,
      openSubscriptions: [],
      claims: [],
      strategies: [],
      nextAllocationDay: plan.launchDay + random.int(10, 30),
    };
  });
}
