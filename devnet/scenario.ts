// Seeds a deployed devnet with a realistic, reproducible history: investors subscribing and
// redeeming, daily settlements with the strategies' P&L split by each fund's policy, the NAV
// lifecycle (with rejections) lagging one step per day, allocation changes, dividend rounds with
// Merkle distributions and claims, pauses, and one fund closing. Each day is two blocks, both
// mined explicitly: the settlement block at midnight UTC and the oracle block one hour later.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import {
  encodeFunctionData,
  getAddress,
  keccak256,
  maxUint256,
  toBytes,
  toEventSelector,
  type Abi,
  type AbiEvent,
  type Address,
  type Hex,
} from 'viem';
import { DEVNET_GENESIS_TIMESTAMP } from './anvil.ts';
import { abiOf, contractsOf, type DeployedFund, type Deployment } from './deploy.ts';
import {
  MODULE_NAMES,
  type Ledger,
  type LedgerFund,
  type LedgerNavRecord,
  type NavStatus,
  type TxRef,
} from './ledger.ts';
import { createEventDecoder } from './event-decoder.ts';
import { createRandom, type Random } from './random.ts';
import { createRpcClient, type RpcClient } from './rpc.ts';
import type { ScenarioParams } from './scenario-params.ts';
import { createTxQueue, type MinedBlock, type TxReceipt, type TxRequest } from './tx-queue.ts';

const DAY = 86_400n;
const USDC = 1_000_000n;
const NAV_ONE = 1_000_000n;
const MODULE = { subscriptions: 0, redemptions: 1, claims: 2 } as const;

/** Per-fund behaviour of the standard scenario, by position in deployment.funds. */
interface FundPlan {
  launchDay: number;
  /** Annual mean and volatility of the strategy book's return, in parts per million. */
  meanPpm: number;
  volPpm: number;
  initialStrategies: string[];
  spareStrategies: string[];
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

const REJECTION_REASONS = [
  'stale price feed for a strategy position',
  'totalAssets does not match the custodian report',
  'share supply differs from the settlement record',
];

type NavAction = 'draft' | 'submit' | 'verify' | 'reject' | 'publish';

interface OracleStep {
  record: RecordRun;
  request: TxRequest;
  action: NavAction;
  reason: string;
}

interface Settle {
  fund: FundRun;
  epoch: number;
  pnl: bigint;
}

interface EpochSettledArgs {
  epoch: bigint;
  navPerShare: bigint;
  assetsIn: bigint;
  sharesMinted: bigint;
  sharesBurned: bigint;
  assetsOut: bigint;
  totalAssets: bigint;
  totalSupply: bigint;
  reserveBalance: bigint;
}

interface RecordRun {
  ledger: LedgerNavRecord;
  lastStepDay: number;
  rejectAt: NavStatus | null;
  needsRedraft: boolean;
}

interface PendingClaim {
  epoch: number;
  account: Address;
  amount: bigint;
  proof: Hex[];
  dueDay: number;
}

interface StrategyRun {
  slug: string;
  address: Address;
  targetBps: number;
  capBps: number;
  active: boolean;
}

interface FundRun {
  deployed: DeployedFund;
  plan: FundPlan;
  investors: Address[];
  onboardingQueue: Address[];
  /** Investors that approved this fund's vault. */
  approved: Set<Address>;
  balances: Map<Address, bigint>;
  totalAssets: bigint;
  nextEpoch: number;
  lastEpoch: number;
  finished: boolean;
  paused: boolean[];
  closedAt: TxRef | null;
  records: RecordRun[];
  lastPublished: number;
  openSubscriptions: { investor: Address; amount: bigint }[];
  claims: PendingClaim[];
  strategies: StrategyRun[];
  nextAllocationDay: number;
}

function investorAddress(seed: number, index: number): Address {
  return getAddress(`0x${keccak256(toBytes(`fund-protocol/investor/${seed}/${index}`)).slice(-40)}`);
}

/** Targets for `count` active strategies summing to 90-100%, each with some headroom to its cap. */
function allocationTargets(random: Random, count: number): { targetBps: number; capBps: number }[] {
  const weights = Array.from({ length: count }, () => random.int(1, 10));
  const sum = weights.reduce((a, b) => a + b, 0);
  const total = random.int(9_000, 10_000);
  return weights.map((w) => {
    const targetBps = Math.floor((total * w) / sum);
    return { targetBps, capBps: Math.min(10_000, targetBps + random.int(500, 2_500)) };
  });
}

export async function runScenario(
  rpcUrl: string,
  deployment: Deployment,
  params: ScenarioParams,
): Promise<Ledger> {
  const started = Date.now();
  const rpc = createRpcClient(rpcUrl);
  const queue = createTxQueue(rpc);
  const random = createRandom(params.seed);
  const abis = {
    usdc: abiOf('MockUSDC'),
    vault: abiOf('FundVault'),
    share: abiOf('FundShareToken'),
    oracle: abiOf('NavOracle'),
    distributor: abiOf('DividendDistributor'),
  };
  const eventTopic = (abi: Abi, name: string): Hex =>
    toEventSelector(abi.find((e) => e.type === 'event' && e.name === name) as AbiEvent);
  const settlementTopic = eventTopic(abis.vault, 'EpochSettled');
  const requestTopics = {
    subscription: eventTopic(abis.vault, 'SubscriptionRequested'),
    redemption: eventTopic(abis.vault, 'RedemptionRequested'),
  };
  const claimTopic = eventTopic(abis.distributor, 'DividendClaimed');
  const roundTopic = eventTopic(abis.distributor, 'DividendRoundPosted');
  const decodeVaultLog = createEventDecoder(abis.vault);
  const decodeDistributorLog = createEventDecoder(abis.distributor);
  const { baseAsset, navOracle, dividendDistributor } = deployment.contracts;
  const { navOperator, verifier } = deployment.accounts;
  const strategyBySlug = new Map(deployment.strategies.map((s) => [s.slug, s.address]));
  const slugByStrategy = new Map(deployment.strategies.map((s) => [s.address.toLowerCase(), s.slug]));

  const ledger: Ledger = {
    params,
    startBlock: deployment.startBlock,
    endBlock: 0,
    endTimestamp: 0,
    txCount: 0,
    seedingMs: 0,
    funds: [],
    settlements: [],
    requests: [],
    navRecords: [],
    rounds: [],
    claims: [],
    allocations: [],
    moduleChanges: [],
    eventCounts: {},
    eventCountsByAddress: {},
    totalEvents: 0,
    trackedEvents: 0,
  };

  const tx = (
    from: Address,
    to: Address,
    abi: Abi,
    functionName: string,
    args: readonly unknown[],
    label: string,
  ) => ({ from, to, data: encodeFunctionData({ abi, functionName, args }), label }) satisfies TxRequest;

  /** The fund multisig's setStrategy call for one row of the strategy table. */
  const setStrategyTx = ({ deployed }: FundRun, s: StrategyRun, purpose: string) =>
    tx(
      deployed.multisig,
      deployed.vault,
      abis.vault,
      'setStrategy',
      [s.address, s.targetBps, s.capBps, s.active],
      `${deployed.slug}: ${purpose}`,
    );

  // ---- funds, investors and their plans --------------------------------------------------------
  const plans = fundPlans(params.epochs);
  if (deployment.funds.length !== plans.length) throw new Error(`the scenario plans ${plans.length} funds`);
  const pool = Array.from({ length: params.investorsPerFund * 2 }, (_, i) => investorAddress(params.seed, i));
  const funds: FundRun[] = deployment.funds.map((deployed, i) => {
    const plan = plans[i]!;
    const investors = random.shuffle(pool).slice(0, params.investorsPerFund);
    const lastEpoch = (plan.closeDay ?? params.epochs) - plan.launchDay + 1;
    return {
      deployed,
      plan,
      investors,
      onboardingQueue: [...investors],
      approved: new Set(),
      balances: new Map(),
      totalAssets: 0n,
      nextEpoch: 1,
      lastEpoch,
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
  // Investors are shared between funds; each needs the faucet once and one approval per vault.
  const fundedInvestors = new Set<Address>();

  const txRef = (block: MinedBlock, hash: Hex): TxRef => ({
    txHash: hash,
    blockNumber: Number(block.number),
    timestamp: Number(block.timestamp),
  });

  // ---- setup block: multisigs funded, initial strategy tables -------------------------------------
  const setupTxs: TxRequest[] = [];
  for (const fund of funds) {
    const { multisig, vault, slug } = fund.deployed;
    setupTxs.push(
      tx(multisig, baseAsset, abis.usdc, 'mint', [multisig, 1_000_000_000n * USDC], `${slug}: fund multisig`),
    );
    setupTxs.push(
      tx(multisig, baseAsset, abis.usdc, 'approve', [vault, maxUint256], `${slug}: multisig approves vault`),
    );
    const targets = allocationTargets(random, fund.plan.initialStrategies.length);
    fund.plan.initialStrategies.forEach((slug, i) => {
      const address = strategyBySlug.get(slug);
      if (!address) throw new Error(`unknown strategy ${slug}`);
      fund.strategies.push({ slug, address, ...targets[i]!, active: true });
    });
    for (const s of fund.strategies) {
      setupTxs.push(setStrategyTx(fund, s, 'strategy'));
    }
  }
  await queue.send(setupTxs);
  recordAllocations(await queue.mine(BigInt(deployment.deployedAt) + 3600n));

  function recordAllocations(block: MinedBlock): void {
    for (const { request, hash, receipt } of block.txs) {
      // Only a multisig's calls to its own vault change allocations, modules or the fund's state.
      const fund = funds.find((f) => f.deployed.vault === request.to && f.deployed.multisig === request.from);
      if (!fund) continue;
      for (const log of receipt.logs) {
        if (log.address.toLowerCase() !== fund.deployed.vault.toLowerCase()) continue;
        if (log.topics[0] === settlementTopic) continue;
        const event = decodeVaultLog(log)!;
        if (event.eventName === 'StrategyAllocationSet') {
          const a = event.args as unknown as {
            strategy: Address;
            targetBps: number;
            capBps: number;
            active: boolean;
          };
          ledger.allocations.push({
            fund: fund.deployed.slug,
            vault: fund.deployed.vault,
            strategy: a.strategy,
            strategySlug: slugByStrategy.get(a.strategy.toLowerCase()) ?? '',
            targetBps: a.targetBps,
            capBps: a.capBps,
            active: a.active,
            ...txRef(block, hash),
          });
        } else if (event.eventName === 'ModulePaused' || event.eventName === 'ModuleUnpaused') {
          const module = Number((event.args as unknown as { module: number }).module);
          ledger.moduleChanges.push({
            fund: fund.deployed.slug,
            vault: fund.deployed.vault,
            module,
            moduleName: MODULE_NAMES[module]!,
            paused: event.eventName === 'ModulePaused',
            ...txRef(block, hash),
          });
        } else if (event.eventName === 'FundClosed') {
          fund.closedAt = txRef(block, hash);
        }
      }
    }
  }

  // ---- daily behaviour -------------------------------------------------------------------------
  function allocationChange(fund: FundRun): TxRequest[] {
    const before = new Map(fund.strategies.map((s) => [s.address, { ...s }]));
    const active = fund.strategies.filter((s) => s.active);
    const inactive = fund.strategies.filter((s) => !s.active);
    const spare = fund.plan.spareStrategies.filter((s) => !fund.strategies.some((f) => f.slug === s));
    if (random.chance(3_500) && active.length > 2) {
      // Rotate: retire one strategy, bring in a spare (or a retired one).
      const retired = random.pick(active);
      retired.active = false;
      const candidates = [
        ...inactive,
        ...spare.map((s) => ({
          slug: s,
          address: strategyBySlug.get(s)!,
          targetBps: 0,
          capBps: 0,
          active: false,
        })),
      ];
      if (candidates.length > 0) {
        const joining = random.pick(candidates);
        joining.active = true;
        if (!fund.strategies.includes(joining)) fund.strategies.push(joining);
      }
    }
    const nowActive = fund.strategies.filter((s) => s.active);
    const targets = allocationTargets(random, nowActive.length);
    nowActive.forEach((s, i) => Object.assign(s, targets[i]));
    // Lower or retire first, raise after: the active targets never pass 100% on the way.
    const changes = fund.strategies.filter((s) => {
      const old = before.get(s.address);
      return !old || old.targetBps !== s.targetBps || old.capBps !== s.capBps || old.active !== s.active;
    });
    const weight = (s: StrategyRun): number => (s.active ? s.targetBps : 0);
    const oldWeight = (s: StrategyRun): number => {
      const old = before.get(s.address);
      return old?.active ? old.targetBps : 0;
    };
    changes.sort((a, b) => weight(a) - oldWeight(a) - (weight(b) - oldWeight(b)));
    return changes.map((s) => setStrategyTx(fund, s, 'reallocate'));
  }

  function subscription(fund: FundRun, investor: Address, amount: bigint, epoch: number): TxRequest[] {
    const { vault, slug } = fund.deployed;
    const txs: TxRequest[] = [];
    if (!fundedInvestors.has(investor)) {
      fundedInvestors.add(investor);
      txs.push(
        tx(investor, baseAsset, abis.usdc, 'mint', [investor, 100_000_000n * USDC], `${slug}: faucet`),
      );
    }
    if (!fund.approved.has(investor)) {
      fund.approved.add(investor);
      txs.push(tx(investor, baseAsset, abis.usdc, 'approve', [vault, maxUint256], `${slug}: approve vault`));
    }
    txs.push(
      tx(investor, vault, abis.vault, 'requestSubscription', [amount], `${slug}: subscribe e${epoch}`),
    );
    fund.openSubscriptions.push({ investor, amount });
    return txs;
  }

  function redemption(fund: FundRun, investor: Address, shares: bigint, epoch: number): TxRequest {
    fund.balances.set(investor, (fund.balances.get(investor) ?? 0n) - shares);
    return tx(
      investor,
      fund.deployed.vault,
      abis.vault,
      'requestRedemption',
      [shares],
      `${fund.deployed.slug}: redeem e${epoch}`,
    );
  }

  function investorRequests(fund: FundRun, day: number, epoch: number): TxRequest[] {
    const txs: TxRequest[] = [];
    const subscriptionsOpen = !fund.paused[MODULE.subscriptions];
    const redemptionsOpen = !fund.paused[MODULE.redemptions];
    const onboardingLeft = fund.plan.launchDay + params.onboardingDays - day;
    if (onboardingLeft > 0 && subscriptionsOpen) {
      const count = Math.ceil(fund.onboardingQueue.length / onboardingLeft);
      for (const investor of fund.onboardingQueue.splice(0, count)) {
        txs.push(...subscription(fund, investor, BigInt(random.int(1_000, 50_000)) * USDC, epoch));
      }
      return txs;
    }
    for (let i = 0; i < params.requestsPerEpoch; i++) {
      const holders = [...fund.balances].filter(([, balance]) => balance > 0n);
      if (random.chance(6_000) && subscriptionsOpen) {
        txs.push(
          ...subscription(fund, random.pick(fund.investors), BigInt(random.int(500, 20_000)) * USDC, epoch),
        );
      } else if (redemptionsOpen && holders.length > 0) {
        const [investor, balance] = random.pick(holders);
        const shares = random.chance(1_000) ? balance : (balance * BigInt(random.int(5, 60))) / 100n;
        if (shares > 0n) txs.push(redemption(fund, investor, shares, epoch));
      }
    }
    return txs;
  }

  function dueClaims(fund: FundRun, day: number): TxRequest[] {
    if (fund.paused[MODULE.claims]) return [];
    const due = fund.claims.filter((c) => c.dueDay <= day);
    fund.claims = fund.claims.filter((c) => c.dueDay > day);
    return due.map((c) =>
      tx(
        c.account,
        dividendDistributor,
        abis.distributor,
        'claim',
        [fund.deployed.vault, BigInt(c.epoch), c.account, c.amount, c.proof],
        `${fund.deployed.slug}: claim e${c.epoch}`,
      ),
    );
  }

  /** The strategies' P&L for one day, from the last settled assets and a seeded daily return. */
  function dailyPnl(fund: FundRun): bigint {
    const dailyMean = Math.round(fund.plan.meanPpm / 365);
    const dailyVol = Math.round((fund.plan.volPpm * 1_000) / 19_105); // vol / sqrt(365)
    const shock = random.chance(100) ? -3 * dailyVol : 0;
    const returnPpm = dailyMean + Math.round((dailyVol * random.normalMilli()) / 1_000) + shock;
    return (fund.totalAssets * BigInt(returnPpm)) / 1_000_000n;
  }

  function modulePlanTxs(fund: FundRun, day: number, pausing: boolean): TxRequest[] {
    const { multisig, vault, slug } = fund.deployed;
    const txs: TxRequest[] = [];
    for (const p of fund.plan.pauses) {
      if (pausing && p.from === day) {
        fund.paused[p.module] = true;
        txs.push(
          tx(multisig, vault, abis.vault, 'pause', [p.module], `${slug}: pause ${MODULE_NAMES[p.module]}`),
        );
      }
      if (!pausing && p.to === day) {
        fund.paused[p.module] = false;
        txs.push(
          tx(
            multisig,
            vault,
            abis.vault,
            'unpause',
            [p.module],
            `${slug}: unpause ${MODULE_NAMES[p.module]}`,
          ),
        );
      }
    }
    return txs;
  }

  // ---- NAV lifecycle -------------------------------------------------------------------------
  function oracleTx(record: RecordRun, action: NavAction, reason: string): TxRequest {
    const r = record.ledger;
    const epoch = BigInt(r.epoch);
    const label = `${r.fund}: ${action} NAV e${r.epoch}`;
    switch (action) {
      case 'draft':
        return tx(
          navOperator,
          navOracle,
          abis.oracle,
          'draft',
          [r.vault, epoch, BigInt(r.navPerShare), BigInt(r.totalAssets), BigInt(r.totalSupply)],
          label,
        );
      case 'reject':
        return tx(verifier, navOracle, abis.oracle, 'reject', [r.vault, epoch, reason], label);
      case 'verify':
        return tx(verifier, navOracle, abis.oracle, 'verify', [r.vault, epoch], label);
      default:
        return tx(navOperator, navOracle, abis.oracle, action, [r.vault, epoch], label);
    }
  }

  /** One step per record per day, oldest first; publishes only in epoch order. */
  function advanceRecords(fund: FundRun, day: number): OracleStep[] {
    const steps: OracleStep[] = [];
    for (const record of fund.records) {
      const status = record.ledger.status;
      if (status === 'Published' || record.lastStepDay >= day) continue;
      let action: NavAction | null = null;
      if (status === 'Draft') action = record.needsRedraft ? 'draft' : 'submit';
      else if (status === 'PendingVerification') action = record.rejectAt === status ? 'reject' : 'verify';
      else if (status === 'Verified') {
        if (record.rejectAt === status) action = 'reject';
        else if (record.ledger.epoch === fund.lastPublished + 1) action = 'publish';
      }
      if (!action) continue;
      if (action === 'publish') fund.lastPublished = record.ledger.epoch;
      record.lastStepDay = day;
      const reason = action === 'reject' ? random.pick(REJECTION_REASONS) : '';
      steps.push({ record, request: oracleTx(record, action, reason), action, reason });
    }
    return steps;
  }

  const nextStatus: Record<NavAction, NavStatus> = {
    draft: 'Draft',
    submit: 'PendingVerification',
    verify: 'Verified',
    reject: 'Draft',
    publish: 'Published',
  };

  // ---- dividend rounds -----------------------------------------------------------------------
  async function dividendRound(fund: FundRun, epoch: number, day: number): Promise<TxRequest | null> {
    const { vault, shareToken, multisig, slug } = fund.deployed;
    const holders = [...fund.balances.keys()];
    const calls = [
      {
        to: dividendDistributor,
        data: encodeFunctionData({ abi: abis.distributor, functionName: 'unallocated', args: [vault] }),
      },
      ...holders.map((h) => ({
        to: shareToken,
        data: encodeFunctionData({ abi: abis.share, functionName: 'balanceOf', args: [h] }),
      })),
    ];
    const results = await rpc.batch<Hex>(calls.map((c) => ({ method: 'eth_call', params: [c, 'latest'] })));
    const available = BigInt(results[0]!);
    const onChain = holders.map((h, i) => [h, BigInt(results[i + 1]!)] as const);
    for (const [holder, balance] of onChain) {
      if (balance !== fund.balances.get(holder)) {
        throw new Error(
          `${slug}: share balance of ${holder} is ${balance} on chain, ${fund.balances.get(holder)} in the scenario`,
        );
      }
    }
    const positive = onChain.filter(([, b]) => b > 0n);
    const supply = positive.reduce((sum, [, b]) => sum + b, 0n);
    // A round pays at least one base unit (1 USDC) per holder on average; less rolls over.
    if (supply === 0n || available < BigInt(positive.length) * USDC) return null;
    const leaves = positive
      .map(([holder, balance]) => [holder, (available * balance) / supply] as const)
      .filter(([, amount]) => amount > 0n);
    if (leaves.length === 0) return null;
    const tree = StandardMerkleTree.of(
      leaves.map(([holder, amount]) => [holder, amount.toString()]),
      ['address', 'uint256'],
    );
    const total = leaves.reduce((sum, [, amount]) => sum + amount, 0n);
    const uri = `distributions/${slug}/${epoch}.json`;
    const file = join(params.dataDir, uri);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(tree.dump()));
    for (const [i, [account, amount]] of tree.entries()) {
      if (random.chance(params.claimBps)) {
        fund.claims.push({
          epoch,
          account: account as Address,
          amount: BigInt(amount as string),
          proof: tree.getProof(i) as Hex[],
          dueDay: day + random.int(1, 10),
        });
      }
    }
    return tx(
      multisig,
      dividendDistributor,
      abis.distributor,
      'postRound',
      [vault, BigInt(epoch), tree.root as Hex, total, leaves.length, uri],
      `${slug}: dividend round e${epoch}`,
    );
  }

  /** Books a mined settlement: NAV, share balances, the ledger, and the NAV record to draft next. */
  function applySettlement({ fund, epoch, pnl }: Settle, receipt: TxReceipt, ref: TxRef, day: number): void {
    const log = receipt.logs.find((l) => l.topics[0] === settlementTopic);
    if (!log) throw new Error(`${fund.deployed.slug}: settle e${epoch} emitted no EpochSettled`);
    const settled = decodeVaultLog(log)!.args as unknown as EpochSettledArgs;
    if (settled.epoch !== BigInt(epoch)) throw new Error(`${fund.deployed.slug}: settled the wrong epoch`);
    for (const { investor, amount } of fund.openSubscriptions) {
      fund.balances.set(
        investor,
        (fund.balances.get(investor) ?? 0n) + (amount * NAV_ONE) / settled.navPerShare,
      );
    }
    fund.openSubscriptions = [];
    fund.totalAssets = settled.totalAssets;
    fund.nextEpoch = epoch + 1;
    if (epoch >= fund.lastEpoch) fund.finished = true;
    const amounts = Object.fromEntries(
      (
        [
          'navPerShare',
          'assetsIn',
          'sharesMinted',
          'sharesBurned',
          'assetsOut',
          'totalAssets',
          'totalSupply',
          'reserveBalance',
        ] as const
      ).map((key) => [key, settled[key].toString()]),
    ) as Record<Exclude<keyof EpochSettledArgs, 'epoch'>, string>;
    ledger.settlements.push({
      fund: fund.deployed.slug,
      vault: fund.deployed.vault,
      epoch,
      pnl: pnl.toString(),
      ...amounts,
      ...ref,
    });
    const forced = fund.plan.forcedRejections.find((r) => r.epoch === epoch);
    const lateEpoch = epoch > fund.lastEpoch - 10;
    const rejectAt: NavStatus | null =
      forced?.stage ??
      (!lateEpoch && random.chance(300) ? random.pick(['PendingVerification', 'Verified'] as const) : null);
    const record: LedgerNavRecord = {
      fund: fund.deployed.slug,
      vault: fund.deployed.vault,
      epoch,
      status: 'Draft',
      navPerShare: amounts.navPerShare,
      totalAssets: amounts.totalAssets,
      totalSupply: amounts.totalSupply,
      publishedAt: null,
      publishTxHash: null,
      transitions: [],
    };
    ledger.navRecords.push(record);
    // needsRedraft: the first draft goes out in today's oracle block.
    fund.records.push({ ledger: record, lastStepDay: day - 1, rejectAt, needsRedraft: true });
  }

  // ---- the days --------------------------------------------------------------------------------
  for (let day = 1; day <= params.epochs; day++) {
    const dayStart = BigInt(DEVNET_GENESIS_TIMESTAMP) + BigInt(day) * DAY;
    const adminBefore: TxRequest[] = [];
    const investorTxs: TxRequest[] = [];
    const adminAfter: TxRequest[] = [];
    const settles: (Settle & { index: number })[] = [];

    for (const fund of funds) {
      if (day < fund.plan.launchDay) continue;
      // Holders of a closed fund still claim their past dividends.
      investorTxs.push(...dueClaims(fund, day));
      if (fund.finished) continue;
      const epoch = fund.nextEpoch;
      const { multisig, vault, slug } = fund.deployed;
      adminBefore.push(...modulePlanTxs(fund, day, false));
      if (day >= fund.nextAllocationDay) {
        adminBefore.push(...allocationChange(fund));
        fund.nextAllocationDay = day + random.int(15, 35);
      }
      if (fund.plan.closeDay === day) {
        adminBefore.push(tx(multisig, vault, abis.vault, 'close', [], `${slug}: close`));
        for (const [investor, balance] of fund.balances) {
          if (balance > 0n) investorTxs.push(redemption(fund, investor, balance, epoch));
        }
      } else {
        investorTxs.push(...investorRequests(fund, day, epoch));
      }
      adminAfter.push(...modulePlanTxs(fund, day, true));
      const pnl = dailyPnl(fund);
      settles.push({ fund, epoch, pnl, index: adminAfter.length });
      adminAfter.push(tx(multisig, vault, abis.vault, 'settle', [pnl], `${slug}: settle e${epoch}`));
    }
    await queue.send(adminBefore);
    const investorHashes = await queue.send(investorTxs);
    const adminHashes = await queue.send(adminAfter);
    const settling = new Map(settles.map((s) => [adminHashes[s.index]!, s]));
    const settlementBlock = await queue.mine(dayStart);
    recordAllocations(settlementBlock);
    recordInvestorTxs(settlementBlock, new Set(investorHashes));

    for (const { hash, receipt } of settlementBlock.txs) {
      const settled = settling.get(hash);
      if (settled) applySettlement(settled, receipt, txRef(settlementBlock, hash), day);
    }

    // The oracle block: NAV steps, then dividend rounds computed on the settled state.
    const oracleSteps: OracleStep[] = [];
    const roundTxs: TxRequest[] = [];
    for (const fund of funds) {
      oracleSteps.push(...advanceRecords(fund, day));
    }
    for (const { fund, epoch } of settling.values()) {
      if (epoch % params.roundInterval !== 0) continue;
      const round = await dividendRound(fund, epoch, day);
      if (round) roundTxs.push(round);
    }
    const oracleHashes = await queue.send(oracleSteps.map((s) => s.request));
    const roundHashes = await queue.send(roundTxs);
    const oracleBlock = await queue.mine(dayStart + 3600n);
    oracleSteps.forEach((step, i) => {
      const record = step.record;
      const status = nextStatus[step.action];
      if (step.action === 'draft') record.needsRedraft = false;
      if (step.action === 'reject') {
        record.rejectAt = null;
        record.needsRedraft = true;
      }
      const ref = txRef(oracleBlock, oracleHashes[i]!);
      record.ledger.status = status;
      if (status === 'Published') {
        record.ledger.publishedAt = ref.timestamp;
        record.ledger.publishTxHash = ref.txHash;
      }
      record.ledger.transitions.push({
        action: step.action,
        status,
        ...(step.action === 'reject' ? { reason: step.reason } : {}),
        ...ref,
      });
    });
    recordRounds(oracleBlock, new Set(roundHashes));
  }

  function recordInvestorTxs(block: MinedBlock, hashes: Set<Hex>): void {
    for (const { request, hash, receipt } of block.txs) {
      if (!hashes.has(hash)) continue;
      const fund = funds.find((f) => f.deployed.vault === request.to);
      for (const log of receipt.logs) {
        const topic = log.topics[0];
        if (
          topic !== requestTopics.subscription &&
          topic !== requestTopics.redemption &&
          topic !== claimTopic
        )
          continue;
        const address = log.address.toLowerCase();
        if (fund && address === fund.deployed.vault.toLowerCase()) {
          const event = decodeVaultLog(log)!;
          const args = event.args as unknown as {
            investor: Address;
            epoch: bigint;
            assets?: bigint;
            shares?: bigint;
          };
          if (event.eventName === 'SubscriptionRequested' || event.eventName === 'RedemptionRequested') {
            ledger.requests.push({
              fund: fund.deployed.slug,
              vault: fund.deployed.vault,
              epoch: Number(args.epoch),
              kind: event.eventName === 'SubscriptionRequested' ? 'subscription' : 'redemption',
              investor: args.investor,
              amount: (args.assets ?? args.shares ?? 0n).toString(),
              ...txRef(block, hash),
            });
          }
        } else if (address === dividendDistributor.toLowerCase()) {
          const event = decodeDistributorLog(log)!;
          if (event.eventName !== 'DividendClaimed') continue;
          const args = event.args as unknown as {
            fund: Address;
            epoch: bigint;
            account: Address;
            amount: bigint;
          };
          const claimed = funds.find((f) => f.deployed.vault === args.fund)!;
          ledger.claims.push({
            fund: claimed.deployed.slug,
            vault: args.fund,
            epoch: Number(args.epoch),
            account: args.account,
            amount: args.amount.toString(),
            ...txRef(block, hash),
          });
        }
      }
    }
  }

  function recordRounds(block: MinedBlock, hashes: Set<Hex>): void {
    for (const { hash, receipt } of block.txs) {
      if (!hashes.has(hash)) continue;
      for (const log of receipt.logs) {
        if (log.topics[0] !== roundTopic) continue;
        const event = decodeDistributorLog(log)!;
        if (event.eventName !== 'DividendRoundPosted') continue;
        const args = event.args as unknown as {
          fund: Address;
          epoch: bigint;
          merkleRoot: Hex;
          total: bigint;
          leafCount: number;
          uri: string;
        };
        ledger.rounds.push({
          fund: funds.find((f) => f.deployed.vault === args.fund)!.deployed.slug,
          vault: args.fund,
          epoch: Number(args.epoch),
          merkleRoot: args.merkleRoot,
          total: args.total.toString(),
          leafCount: args.leafCount,
          uri: args.uri,
          ...txRef(block, hash),
        });
      }
    }
  }

  // ---- the end state ---------------------------------------------------------------------------
  const last = await rpc.request<{ number: Hex; timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
  ledger.endBlock = Number(last.number);
  ledger.endTimestamp = Number(last.timestamp);
  ledger.txCount = queue.sentCount;
  ledger.funds = funds.map(
    (fund): LedgerFund => ({
      slug: fund.deployed.slug,
      vault: fund.deployed.vault,
      status: fund.closedAt ? 'closed' : 'active',
      closedAt: fund.closedAt,
      firstEpoch: 1,
      lastEpoch: fund.nextEpoch - 1,
      pausedModules: {
        subscriptions: fund.paused[MODULE.subscriptions]!,
        redemptions: fund.paused[MODULE.redemptions]!,
        claims: fund.paused[MODULE.claims]!,
      },
      strategies: fund.strategies.map((s) => ({
        strategy: s.address,
        strategySlug: s.slug,
        targetBps: s.targetBps,
        capBps: s.capBps,
        active: s.active,
      })),
      investors: fund.investors,
      holders: [...fund.balances.values()].filter((b) => b > 0n).length,
    }),
  );
  await countEvents(rpc, deployment, ledger);
  ledger.seedingMs = Date.now() - started;
  return ledger;
}

/** Counts every log since the deployment by contract and event name (the ledger's event census). */
async function countEvents(rpc: RpcClient, deployment: Deployment, ledger: Ledger): Promise<void> {
  const contracts = new Map(contractsOf(deployment).map((c) => [c.address.toLowerCase(), c]));
  const eventNames = new Map<string, Map<string, string>>();
  for (const { name } of contracts.values()) {
    if (eventNames.has(name)) continue;
    const events = abiOf(name).filter((item): item is AbiEvent => item.type === 'event');
    eventNames.set(name, new Map(events.map((e) => [toEventSelector(e), e.name])));
  }
  const tracked = new Set(['FundRegistry', 'NavOracle', 'DividendDistributor', 'FundVault']);
  const chunk = 50;
  for (let from = ledger.startBlock; from <= ledger.endBlock; from += chunk) {
    const to = Math.min(ledger.endBlock, from + chunk - 1);
    const logs = await rpc.request<{ address: Address; topics: Hex[] }[]>('eth_getLogs', [
      { fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` },
    ]);
    for (const log of logs) {
      const address = log.address.toLowerCase();
      const contract = contracts.get(address);
      const name = contract ? contract.name : 'unknown';
      const eventName = (contract && eventNames.get(contract.name)?.get(log.topics[0] ?? '')) ?? 'unknown';
      const byName = (ledger.eventCounts[name] ??= {});
      byName[eventName] = (byName[eventName] ?? 0) + 1;
      const byAddress = (ledger.eventCountsByAddress[address] ??= {});
      byAddress[eventName] = (byAddress[eventName] ?? 0) + 1;
      ledger.totalEvents++;
      if (tracked.has(name)) ledger.trackedEvents++;
    }
  }
}
