// The ledger's closing entries, written once the last day is mined: where the chain ended, each
// fund's final state, and a census of every log since the deployment (the counts the indexer and
// the API are checked against).
import { toEventSelector, type AbiEvent, type Address, type Hex } from 'viem';
import { abiOf, contractsOf } from '../deploy.ts';
import type { LedgerFund } from '../ledger.ts';
import type { ScenarioContext } from './context.ts';
import { MODULE, type FundRun } from './funds.ts';

export async function recordEndState(ctx: ScenarioContext): Promise<void> {
  const { ledger } = ctx;
  const last = await ctx.rpc.request<{ number: Hex; timestamp: Hex }>('eth_getBlockByNumber', [
    'latest',
    false,
  ]);
  ledger.endBlock = Number(last.number);
  ledger.endTimestamp = Number(last.timestamp);
  ledger.txCount = ctx.queue.sentCount;
  ledger.funds = ctx.funds.map(finalFundState);
  await countEvents(ctx);
}

function finalFundState(fund: FundRun): LedgerFund {
  return {
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
  };
}

/** Counts every log since the deployment by contract and event name (the ledger's event census). */
async function countEvents({ rpc, deployment, ledger }: ScenarioContext): Promise<void> {
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
