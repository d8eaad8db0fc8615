// The scenario's own record of everything it wrote to the chain. Tests use it as the oracle the
// subgraph, the indexer and the API are checked against. Amounts are base-unit integers written
// as decimal strings (JSON has no bigint); block numbers and timestamps (Unix seconds) are numbers.
import type { Address, Hex } from 'viem';
import type { ScenarioParams } from './scenario-params.ts';

/** NavOracle's Status enum, indexed by its on-chain value ('None': no record for the epoch). */
export const NAV_ORACLE_STATUSES = ['None', 'Draft', 'PendingVerification', 'Verified', 'Published'] as const;
export type NavStatus = Exclude<(typeof NAV_ORACLE_STATUSES)[number], 'None'>;

/** The vault's modules in the order of their ids (0, 1, 2), as pause and unpause take them. */
export const MODULE_NAMES = ['subscriptions', 'redemptions', 'claims'] as const;
export type ModuleName = (typeof MODULE_NAMES)[number];

export interface TxRef {
  txHash: Hex;
  blockNumber: number;
  timestamp: number;
}

export interface NavTransition extends TxRef {
  action: 'draft' | 'submit' | 'verify' | 'reject' | 'publish';
  /** Status after the transition. */
  status: NavStatus;
  reason?: string;
}

export interface LedgerNavRecord {
  fund: string;
  vault: Address;
  epoch: number;
  status: NavStatus;
  navPerShare: string;
  totalAssets: string;
  totalSupply: string;
  publishedAt: number | null;
  publishTxHash: Hex | null;
  transitions: NavTransition[];
}

interface LedgerSettlement extends TxRef {
  fund: string;
  vault: Address;
  epoch: number;
  /** The P&L the multisig reported (negative for a loss). */
  pnl: string;
  navPerShare: string;
  assetsIn: string;
  sharesMinted: string;
  sharesBurned: string;
  assetsOut: string;
  totalAssets: string;
  totalSupply: string;
  reserveBalance: string;
}

interface LedgerRequest extends TxRef {
  fund: string;
  vault: Address;
  epoch: number;
  kind: 'subscription' | 'redemption';
  investor: Address;
  /** Assets for a subscription, shares for a redemption. */
  amount: string;
}

export interface LedgerRound extends TxRef {
  fund: string;
  vault: Address;
  epoch: number;
  merkleRoot: Hex;
  total: string;
  leafCount: number;
  /** Relative to the data dir: distributions/<fund>/<epoch>.json */
  uri: string;
}

interface LedgerClaim extends TxRef {
  fund: string;
  vault: Address;
  epoch: number;
  account: Address;
  amount: string;
}

interface LedgerAllocation extends TxRef {
  fund: string;
  vault: Address;
  strategy: Address;
  strategySlug: string;
  targetBps: number;
  capBps: number;
  active: boolean;
}

interface LedgerModuleChange extends TxRef {
  fund: string;
  vault: Address;
  module: number;
  moduleName: ModuleName;
  paused: boolean;
}

export interface LedgerFund {
  slug: string;
  vault: Address;
  status: 'active' | 'closed';
  closedAt: TxRef | null;
  /** First and last settled epoch. */
  firstEpoch: number;
  lastEpoch: number;
  pausedModules: Record<ModuleName, boolean>;
  /** Final strategy table, in the vault's order. */
  strategies: {
    strategy: Address;
    strategySlug: string;
    targetBps: number;
    capBps: number;
    active: boolean;
  }[];
  investors: Address[];
  /** Accounts holding shares at the end. */
  holders: number;
}

export interface Ledger {
  params: ScenarioParams;
  startBlock: number;
  endBlock: number;
  endTimestamp: number;
  txCount: number;
  seedingMs: number;
  funds: LedgerFund[];
  settlements: LedgerSettlement[];
  requests: LedgerRequest[];
  navRecords: LedgerNavRecord[];
  rounds: LedgerRound[];
  claims: LedgerClaim[];
  allocations: LedgerAllocation[];
  moduleChanges: LedgerModuleChange[];
  /** Logs per contract name and event name, over every block from the deployment on. */
  eventCounts: Record<string, Record<string, number>>;
  /** Logs per contract address (lowercase) and event name. */
  eventCountsByAddress: Record<string, Record<string, number>>;
  totalEvents: number;
  /** Logs of the contracts the subgraph tracks (registry, oracle, distributor, vaults). */
  trackedEvents: number;
}
