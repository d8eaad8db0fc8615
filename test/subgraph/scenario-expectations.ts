// What the subgraph must hold after indexing the devnet scenario, derived only from the
// deployment and the scenario's own ledger (the oracle), in the shape the graph-node query
// dialect returns: BigInt as decimal strings, Bytes as lowercase 0x hex, references as { id }.
import { keccak256, toBytes, zeroAddress, zeroHash } from 'viem';
import type { Deployment } from '../../devnet/deploy.ts';
import { MODULE_NAMES, type Ledger, type LedgerNavRecord, type NavTransition } from '../../devnet/ledger.ts';

export type Row = Record<string, unknown>;

/** One event the deployment or the ledger says a tracked contract emitted, with the arguments known. */
export interface ExpectedEvent {
  contract: string;
  eventName: string;
  /** null where the ledger does not know the transaction (the registrations in the deployment block) */
  txHash: string | null;
  blockNumber: string;
  timestamp: string;
  args: Row;
}

export interface ExpectedSubgraph {
  funds: Row[];
  navRecords: Row[];
  dividendRounds: Row[];
  /** without ids (the ledger has no log indexes), sorted by canonicalKey */
  dividendClaims: Row[];
  strategyAllocations: Row[];
  /** without ids, sorted by canonicalKey */
  allocationChanges: Row[];
  settlements: Row[];
  /** without ids, sorted by canonicalKey */
  requests: Row[];
  /** without ids, sorted by canonicalKey */
  pauseChanges: Row[];
  /** every event the deployment and the scenario wrote, sorted by canonicalKey */
  events: ExpectedEvent[];
  /** ProtocolEvent count per contract (lowercase) and event name: the ledger's census of tracked contracts */
  eventCounts: Record<string, Record<string, number>>;
}

const lower = (hex: string): string => hex.toLowerCase();
const ref = (id: string): Row => ({ id });
const fundEpochId = (vault: string, epoch: number): string => `${lower(vault)}-${epoch}`;

/** A stable text key of a row: JSON with sorted keys. */
export function canonicalKey(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Row).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

const byKey = <T>(rows: T[]): T[] => [...rows].sort((a, b) => canonicalKey(a).localeCompare(canonicalKey(b)));
const byId = (rows: Row[]): Row[] => [...rows].sort((a, b) => String(a.id).localeCompare(String(b.id)));

function lastOf(transitions: NavTransition[], action: NavTransition['action']): NavTransition | undefined {
  return transitions.filter((t) => t.action === action).at(-1);
}

function navRecordRow(record: LedgerNavRecord, verifier: string): Row {
  const drafted = lastOf(record.transitions, 'draft');
  const submitted = lastOf(record.transitions, 'submit');
  const verified = lastOf(record.transitions, 'verify');
  const published = lastOf(record.transitions, 'publish');
  const rejected = lastOf(record.transitions, 'reject');
  const last = record.transitions.at(-1);
  if (drafted === undefined || last === undefined) {
    throw new Error(`ledger NAV record ${record.fund} ${record.epoch} was never drafted`);
  }
  const at = (t: NavTransition | undefined): string | null => (t ? String(t.timestamp) : null);
  const hash = (t: NavTransition | undefined): string | null => (t ? lower(t.txHash) : null);
  return {
    id: fundEpochId(record.vault, record.epoch),
    fund: ref(lower(record.vault)),
    epoch: record.epoch,
    status: record.status,
    navPerShare: record.navPerShare,
    totalAssets: record.totalAssets,
    totalSupply: record.totalSupply,
    draftedAt: at(drafted),
    draftedTxHash: hash(drafted),
    submittedAt: at(submitted),
    submittedTxHash: hash(submitted),
    verifiedAt: at(verified),
    verifiedTxHash: hash(verified),
    verifier: verified ? lower(verifier) : null,
    publishedAt: at(published),
    publishedTxHash: hash(published),
    publishedBlock: published ? String(published.blockNumber) : null,
    rejectionCount: record.transitions.filter((t) => t.action === 'reject').length,
    lastRejectedAt: at(rejected),
    lastRejectedTxHash: hash(rejected),
    lastRejectionReason: rejected?.reason ?? null,
    updatedAtBlock: String(last.blockNumber),
  };
}

const navEventName: Record<NavTransition['action'], string> = {
  draft: 'NavDrafted',
  submit: 'NavSubmitted',
  verify: 'NavVerified',
  reject: 'NavRejected',
  publish: 'NavPublished',
};

function navTransitionArgs(record: LedgerNavRecord, t: NavTransition, verifier: string): Row {
  const key = { fund: lower(record.vault), epoch: String(record.epoch) };
  switch (t.action) {
    case 'draft':
      return {
        ...key,
        navPerShare: drafted(record, t).navPerShare,
        totalAssets: drafted(record, t).totalAssets,
        totalSupply: drafted(record, t).totalSupply,
      };
    case 'verify':
      return { ...key, verifier: lower(verifier) };
    case 'reject':
      return { ...key, reason: t.reason };
    case 'publish':
      return { ...key, navPerShare: record.navPerShare };
    case 'submit':
      return key;
  }
}

/**
 * The values a draft wrote. The ledger keeps the record's final values only, so an earlier draft
 * (one later re-drafted) is checked for its key alone.
 */
function drafted(
  record: LedgerNavRecord,
  t: NavTransition,
): Partial<Record<'navPerShare' | 'totalAssets' | 'totalSupply', string>> {
  return lastOf(record.transitions, 'draft') === t
    ? { navPerShare: record.navPerShare, totalAssets: record.totalAssets, totalSupply: record.totalSupply }
    : {};
}

export function expectedSubgraph(deployment: Deployment, ledger: Ledger): ExpectedSubgraph {
  const verifier = deployment.accounts.verifier;
  const events: ExpectedEvent[] = [];
  const event = (
    contract: string,
    eventName: string,
    at: { txHash: string | null; blockNumber: number; timestamp: number },
    args: Row,
  ): void => {
    const defined = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
    events.push({
      contract: lower(contract),
      eventName,
      txHash: at.txHash === null ? null : lower(at.txHash),
      blockNumber: String(at.blockNumber),
      timestamp: String(at.timestamp),
      args: defined,
    });
  };
  const deployedAt = { blockNumber: deployment.startBlock, timestamp: deployment.deployedAt };

  // NAV records and their transitions.
  const navRecords = ledger.navRecords.map((record) => navRecordRow(record, verifier));
  for (const record of ledger.navRecords) {
    for (const t of record.transitions) {
      event(
        deployment.contracts.navOracle,
        navEventName[t.action],
        t,
        navTransitionArgs(record, t, verifier),
      );
    }
  }

  // Funds, with their latest NAV pointers.
  const funds = deployment.funds.map((deployed) => {
    const state = ledger.funds.find((f) => lower(f.vault) === lower(deployed.vault));
    if (state === undefined) throw new Error(`ledger has no fund ${deployed.slug}`);
    const records = ledger.navRecords.filter((r) => lower(r.vault) === lower(deployed.vault));
    const maxEpoch = (rs: { epoch: number }[]): Row | null =>
      rs.length === 0 ? null : ref(fundEpochId(deployed.vault, Math.max(...rs.map((r) => r.epoch))));
    return {
      id: lower(deployed.vault),
      slug: deployed.slug,
      vault: lower(deployed.vault),
      shareToken: lower(deployed.shareToken),
      policy: lower(deployed.policy),
      closed: state.status === 'closed',
      closedAt: state.closedAt ? String(state.closedAt.timestamp) : null,
      closedTxHash: state.closedAt ? lower(state.closedAt.txHash) : null,
      pausedModules: MODULE_NAMES.filter((name) => state.pausedModules[name]),
      registeredAtBlock: String(deployment.startBlock),
      registeredAt: String(deployment.deployedAt),
      latestNav: maxEpoch(records),
      latestPublishedNav: maxEpoch(records.filter((r) => r.transitions.some((t) => t.action === 'publish'))),
      latestSettlement: maxEpoch(ledger.settlements.filter((s) => lower(s.vault) === lower(deployed.vault))),
    };
  });

  // Dividend rounds and claims.
  const dividendRounds = ledger.rounds.map((round) => {
    const claims = ledger.claims.filter(
      (c) => lower(c.vault) === lower(round.vault) && c.epoch === round.epoch,
    );
    event(deployment.contracts.dividendDistributor, 'DividendRoundPosted', round, {
      fund: lower(round.vault),
      epoch: String(round.epoch),
      merkleRoot: lower(round.merkleRoot),
      total: round.total,
      leafCount: String(round.leafCount),
      uri: round.uri,
    });
    return {
      id: fundEpochId(round.vault, round.epoch),
      fund: ref(lower(round.vault)),
      epoch: round.epoch,
      merkleRoot: lower(round.merkleRoot),
      total: round.total,
      leafCount: round.leafCount,
      uri: round.uri,
      claimedCount: claims.length,
      claimedAmount: claims.reduce((sum, c) => sum + BigInt(c.amount), 0n).toString(),
      postedAtBlock: String(round.blockNumber),
      postedAt: String(round.timestamp),
      postedTxHash: lower(round.txHash),
    };
  });
  const dividendClaims = ledger.claims.map((claim) => {
    event(deployment.contracts.dividendDistributor, 'DividendClaimed', claim, {
      fund: lower(claim.vault),
      epoch: String(claim.epoch),
      account: lower(claim.account),
      amount: claim.amount,
    });
    return {
      round: ref(fundEpochId(claim.vault, claim.epoch)),
      fund: ref(lower(claim.vault)),
      epoch: claim.epoch,
      account: lower(claim.account),
      amount: claim.amount,
      blockNumber: String(claim.blockNumber),
      timestamp: String(claim.timestamp),
      txHash: lower(claim.txHash),
    };
  });

  // Strategy allocations: the final table per fund, and every change.
  const allocationChanges = ledger.allocations.map((change) => {
    event(change.vault, 'StrategyAllocationSet', change, {
      strategy: lower(change.strategy),
      targetBps: String(change.targetBps),
      capBps: String(change.capBps),
      active: change.active,
    });
    return {
      allocation: ref(`${lower(change.vault)}-${lower(change.strategy)}`),
      fund: ref(lower(change.vault)),
      strategy: lower(change.strategy),
      targetBps: change.targetBps,
      capBps: change.capBps,
      active: change.active,
      blockNumber: String(change.blockNumber),
      timestamp: String(change.timestamp),
      txHash: lower(change.txHash),
    };
  });
  const strategyAllocations = ledger.funds.flatMap((fund) =>
    fund.strategies.map((s) => {
      const last = ledger.allocations
        .filter((c) => lower(c.vault) === lower(fund.vault) && lower(c.strategy) === lower(s.strategy))
        .at(-1);
      if (last === undefined)
        throw new Error(`ledger has no allocation change for ${fund.slug} ${s.strategySlug}`);
      return {
        id: `${lower(fund.vault)}-${lower(s.strategy)}`,
        fund: ref(lower(fund.vault)),
        strategy: lower(s.strategy),
        targetBps: s.targetBps,
        capBps: s.capBps,
        active: s.active,
        updatedAtBlock: String(last.blockNumber),
        updatedAt: String(last.timestamp),
      };
    }),
  );

  // Settlements, requests, pauses and closures.
  const settlements = ledger.settlements.map((s) => {
    const values = {
      navPerShare: s.navPerShare,
      assetsIn: s.assetsIn,
      sharesMinted: s.sharesMinted,
      sharesBurned: s.sharesBurned,
      assetsOut: s.assetsOut,
      totalAssets: s.totalAssets,
      totalSupply: s.totalSupply,
      reserveBalance: s.reserveBalance,
    };
    event(s.vault, 'EpochSettled', s, { epoch: String(s.epoch), ...values });
    return {
      id: fundEpochId(s.vault, s.epoch),
      fund: ref(lower(s.vault)),
      epoch: s.epoch,
      ...values,
      blockNumber: String(s.blockNumber),
      timestamp: String(s.timestamp),
      txHash: lower(s.txHash),
    };
  });
  const settlementIds = new Set(settlements.map((s) => s.id));
  const requests = ledger.requests.map((request) => {
    const subscription = request.kind === 'subscription';
    event(request.vault, subscription ? 'SubscriptionRequested' : 'RedemptionRequested', request, {
      investor: lower(request.investor),
      epoch: String(request.epoch),
      [subscription ? 'assets' : 'shares']: request.amount,
    });
    const settlementId = fundEpochId(request.vault, request.epoch);
    return {
      fund: ref(lower(request.vault)),
      kind: subscription ? 'Subscription' : 'Redemption',
      account: lower(request.investor),
      epoch: request.epoch,
      amount: request.amount,
      settlement: settlementIds.has(settlementId) ? ref(settlementId) : null,
      blockNumber: String(request.blockNumber),
      timestamp: String(request.timestamp),
      txHash: lower(request.txHash),
    };
  });
  const pauseChanges = ledger.moduleChanges.map((change) => {
    event(change.vault, change.paused ? 'ModulePaused' : 'ModuleUnpaused', change, {
      module: String(change.module),
    });
    return {
      fund: ref(lower(change.vault)),
      module: change.moduleName,
      paused: change.paused,
      blockNumber: String(change.blockNumber),
      timestamp: String(change.timestamp),
      txHash: lower(change.txHash),
    };
  });
  for (const fund of ledger.funds) {
    if (fund.closedAt) event(fund.vault, 'FundClosed', fund.closedAt, {});
  }
  // The deployment block: the oracle's role grants, the owners set by the constructors, the registrations.
  const { deployer, navOperator } = deployment.accounts;
  const roles: [string, string][] = [
    [zeroHash, deployer],
    [keccak256(toBytes('NAV_OPERATOR_ROLE')), navOperator],
    [keccak256(toBytes('VERIFIER_ROLE')), verifier],
  ];
  for (const [role, account] of roles) {
    event(
      deployment.contracts.navOracle,
      'RoleGranted',
      { txHash: null, ...deployedAt },
      {
        role,
        account: lower(account),
        sender: lower(deployer),
      },
    );
  }
  const owners: [string, string][] = [
    [deployment.contracts.fundRegistry, deployer],
    ...deployment.funds.map((fund): [string, string] => [fund.vault, fund.multisig]),
  ];
  for (const [contract, owner] of owners) {
    event(
      contract,
      'OwnershipTransferred',
      { txHash: null, ...deployedAt },
      {
        previousOwner: zeroAddress,
        newOwner: lower(owner),
      },
    );
  }
  for (const fund of deployment.funds) {
    event(
      deployment.contracts.fundRegistry,
      'FundRegistered',
      { txHash: null, ...deployedAt },
      {
        vault: lower(fund.vault),
        shareToken: lower(fund.shareToken),
        policy: lower(fund.policy),
        slug: fund.slug,
      },
    );
  }

  const trackedContracts = new Set(
    [
      deployment.contracts.fundRegistry,
      deployment.contracts.navOracle,
      deployment.contracts.dividendDistributor,
      ...deployment.funds.map((f) => f.vault),
    ].map(lower),
  );
  const eventCounts = Object.fromEntries(
    Object.entries(ledger.eventCountsByAddress).filter(([address]) => trackedContracts.has(lower(address))),
  );

  return {
    funds: byId(funds),
    navRecords: byId(navRecords),
    dividendRounds: byId(dividendRounds),
    dividendClaims: byKey(dividendClaims),
    strategyAllocations: byId(strategyAllocations),
    allocationChanges: byKey(allocationChanges),
    settlements: byId(settlements),
    requests: byKey(requests),
    pauseChanges: byKey(pauseChanges),
    events: byKey(events),
    eventCounts,
  };
}
