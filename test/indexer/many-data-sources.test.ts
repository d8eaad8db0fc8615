// A factory subgraph registering funds in the middle of ranges: the real subgraph over the synthetic
// chain of the log-density node, where the registry registers twenty funds in block 3 and twenty
// more in block 14, and the vaults request subscriptions in the blocks after (two of the later
// funds also in their registering block). The follower runs ranges of ten blocks; a run in ranges
// of one block, where no range has blocks after a registration, is the reference. And a fund whose
// vault is busy from the block after its registration: the ranges after it must be sized by its
// logs, and, fetched one after another, cost two requests each. Past a low static filters
// threshold, the vaults' events are asked for from any address, and a contract that is no vault
// emitting them changes nothing.
import { keccak256, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import { devnetIndexers } from './devnet-indexers.ts';
import {
  startLogDensityNode,
  type LogDensityNode,
  type LogDensityNodeOptions,
  type SyntheticLog,
} from './log-density-node.ts';
import { queryIndexer } from './graphql-client.ts';
import { dumpEntityVersions } from './store-dump.ts';
import {
  FUND_REGISTERED,
  REGISTRY,
  SYNTHETIC_CONTRACTS,
  fundRegistered,
  subscriptionRequested,
  vaultOf,
} from './synthetic-funds.ts';

const HEAD = 40;
const FUNDS_PER_REGISTRATION = 20;
const FIRST_REGISTRATION = 3;
const SECOND_REGISTRATION = 14;
const SUBSCRIPTIONS_PER_BLOCK = 5;

/** Subscriptions of block n: from the first funds before the second registration, from all after. */
function subscriptionsIn(n: number): number {
  if (n === SECOND_REGISTRATION) return 2;
  return n > FIRST_REGISTRATION && n !== 13 ? SUBSCRIPTIONS_PER_BLOCK : 0;
}

function logsInBlock(n: number): number {
  if (n < 1 || n > HEAD) return 0;
  const registrations = n === FIRST_REGISTRATION || n === SECOND_REGISTRATION ? FUNDS_PER_REGISTRATION : 0;
  return registrations + subscriptionsIn(n);
}

function logAt(n: number, i: number): SyntheticLog {
  if (n === FIRST_REGISTRATION) return fundRegistered(i);
  if (n === SECOND_REGISTRATION) {
    // the new vaults' requests follow their registration in the same block
    return i < FUNDS_PER_REGISTRATION
      ? fundRegistered(FUNDS_PER_REGISTRATION + i)
      : subscriptionRequested(FUNDS_PER_REGISTRATION + (i - FUNDS_PER_REGISTRATION), i, n);
  }
  const funds = n > SECOND_REGISTRATION ? 2 * FUNDS_PER_REGISTRATION : FUNDS_PER_REGISTRATION;
  return subscriptionRequested((n * SUBSCRIPTIONS_PER_BLOCK + i) % funds, i, n);
}

let node: LogDensityNode;
const busyChains: LogDensityNode[] = [];
const indexers = devnetIndexers(() => SYNTHETIC_CONTRACTS, 'indexer-many-sources-');
let ranged: Indexer;
let rangedEvents: number;
let oneBlockRanges: Indexer;

beforeAll(async () => {
  node = await startLogDensityNode(logsInBlock, { logAt, head: HEAD, recordFilters: true });
  ranged = await indexers.start(node.url, { maxRange: 10 });
  await ranged.waitForBlock(HEAD);
  rangedEvents = ranged.status().events;
  await ranged.stop();
  const requestsOfRangedRun = node.filters.length;
  oneBlockRanges = await indexers.start(node.url, { maxRange: 1 });
  await oneBlockRanges.waitForBlock(HEAD);
  await oneBlockRanges.stop();
  node.filters.splice(requestsOfRangedRun);
});

afterAll(async () => {
  await indexers.stopAll();
  for (const chain of [node, ...busyChains]) await chain?.close();
});

describe('funds registered in the middle of a range', () => {
  it('index every request of their vaults, as a run in ranges of one block does', () => {
    let subscriptions = 0;
    for (let n = 1; n <= HEAD; n++) subscriptions += subscriptionsIn(n);
    expect(rangedEvents).toBe(2 * FUNDS_PER_REGISTRATION + subscriptions);
    expect(dumpEntityVersions(ranged.storePath)).toEqual(dumpEntityVersions(oneBlockRanges.storePath));
  });

  it('cost requests for the logs they add over the rest of the range, not the range again', () => {
    const secondFunds = Array.from({ length: FUNDS_PER_REGISTRATION }, (_, i) =>
      vaultOf(FUNDS_PER_REGISTRATION + i),
    );
    // every block after the first registration's range is asked for its registrations once
    for (let n = 11; n <= HEAD; n++) {
      const asked = node.filters.filter(
        (f) =>
          f.addresses?.includes(REGISTRY) && f.topics.includes(FUND_REGISTERED) && f.from <= n && n <= f.to,
      );
      expect({ block: n, requests: asked.length }).toEqual({ block: n, requests: 1 });
    }
    expect(node.filters).toContainEqual(
      expect.objectContaining({ from: SECOND_REGISTRATION + 1, to: 20, addresses: secondFunds }),
    );
  });
});

/** The registry registers one fund in block 1; its vault requests `perBlock` subscriptions in each block after. */
async function busyFundChain(
  perBlock: number,
  head: number,
  reorg?: LogDensityNodeOptions['reorg'],
): Promise<LogDensityNode> {
  const chain = await startLogDensityNode((n) => (n === 1 ? 1 : n <= head ? perBlock : 0), {
    logAt: (n, i) => (n === 1 ? fundRegistered(0) : subscriptionRequested(0, i, n)),
    head,
    recordFilters: true,
    reorg,
  });
  busyChains.push(chain);
  return chain;
}

describe('a busy fund registered before ranges fetched ahead with the registry alone', () => {
  it('sizes the ranges after by the logs its vault adds to them', async () => {
    const chain = await busyFundChain(400, 120);
    const indexer = await indexers.start(chain.url);
    await indexer.waitForBlock(120);
    // ranges fetched with the registry alone saw no logs and grew; once widened by the vault's
    // logs they size the next ones: about 5,000 logs (12 blocks) each, not 64 blocks of 400
    const later = chain.filters.filter((f) => f.addresses?.includes(REGISTRY) && f.from > 48);
    expect(later.length).toBeGreaterThan(0);
    expect(Math.max(...later.map((f) => f.to - f.from + 1))).toBeLessThanOrEqual(13);
  });
});

describe('funds registered in every block of a range near the head', () => {
  it('cost one request by block hash per block whose bloom matches, not one per block each time the range widens', async () => {
    // block n registers fund n - 1, and from block 2 on holds a request of fund 0 and a log of an
    // event no handler takes from every vault of the range: each block's bloom then matches every
    // vault's filter although only fund 0's vault has logs its handlers take
    const head = 12;
    const registering = 10;
    const unhandled = { topics: [keccak256(toHex('Unhandled()'))], data: '0x' as const };
    const logsOf = (n: number): SyntheticLog[] =>
      n > registering
        ? []
        : [
            fundRegistered(n - 1),
            ...(n > 1 ? [subscriptionRequested(0, n, n)] : []),
            ...Array.from({ length: registering }, (_, fund) => ({ address: vaultOf(fund), ...unhandled })),
          ];
    const chain = await startLogDensityNode((n) => (n >= 1 && n <= head ? logsOf(n).length : 0), {
      logAt: (n, i) => logsOf(n)[i]!,
      head,
    });
    busyChains.push(chain);
    const indexer = await indexers.start(chain.url, { maxRange: registering });
    await indexer.waitForBlock(head);
    // every registration and fund 0's requests
    expect(indexer.status().events).toBe(registering + (registering - 1));
    // each registering block is asked for once for its own new vault's logs, and once for the
    // later vaults' logs the range's answers lack, whatever the number of vaults
    const askedByHash = Array.from({ length: registering }, (_, i) => ({
      block: i + 1,
      requests: chain.blocksByHash.filter((b) => b === i + 1).length,
    }));
    expect(askedByHash.filter(({ requests }) => requests > 2)).toEqual([]);
  });
});

describe('ranges fetched one after another', () => {
  it('cost two requests each: the end of the next range is read with the headers of this one', async () => {
    const chain = await busyFundChain(20, 100);
    const indexer = await indexers.start(chain.url, {
      maxRange: 5,
      maxRangesAhead: 1,
      transactions: 'hash-only',
    });
    await indexer.waitForBlock(100);
    const ranges = chain.filters.filter((f) => f.addresses?.includes(REGISTRY)).length;
    // besides the head polls: each range's logs and headers, plus the registering block's extra
    // logs and the widening of the rest of its range (reading each range's end on its own: 3 each)
    const requests = chain.requestMethods.filter((methods) => methods.some((m) => m !== 'eth_blockNumber'));
    expect(ranges).toBeGreaterThanOrEqual(20);
    expect(requests.length).toBeLessThanOrEqual(2 * ranges + 4);
  });

  it('read the end again when the range runs again after the chain replaced it', async () => {
    // block 20 is read with the range 11-15, then blocks from 18 are replaced: the range 16-20
    // disagrees with that read and runs again, at the head, where no range ahead reads it anew
    const chain = await busyFundChain(20, 20, { afterReading: 20, from: 18 });
    const indexer = await indexers.start(chain.url, {
      maxRange: 5,
      maxRangesAhead: 1,
      transactions: 'hash-only',
    });
    await indexer.waitForBlock(20);
    const { _meta } = await queryIndexer<{ _meta: { block: { number: number; hash: string } } }>(
      indexer.queryUrl,
      '{ _meta { block { number hash } } }',
    );
    expect(_meta.block).toEqual({ number: 20, hash: `0x${(20 + 2 ** 40).toString(16).padStart(64, '0')}` });
  });
});

describe('funds past the static filters threshold', () => {
  it('are no longer named: their events are asked for from any address, and what they index is what a run naming them indexes', async () => {
    const stray = (n: number) => n > FIRST_REGISTRATION && n <= HEAD;
    // a contract that is no vault emits a SubscriptionRequested in every block after the first registration
    const chain = await startLogDensityNode((n) => logsInBlock(n) + (stray(n) ? 1 : 0), {
      logAt: (n, i) => (i < logsInBlock(n) ? logAt(n, i) : subscriptionRequested(999, i, n)),
      head: HEAD,
      recordFilters: true,
    });
    busyChains.push(chain);
    // 3 static data sources and the first 20 funds are past 10
    const indexer = await indexers.start(chain.url, { maxRange: 10, staticFiltersAbove: 10 });
    await indexer.waitForBlock(HEAD);
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(oneBlockRanges.storePath));
    // the stray contract's logs are fetched, but are no events of the subgraph
    expect(indexer.status().events).toBe(rangedEvents);
    const namingVaults = chain.filters.filter((f) =>
      f.addresses?.some((a) => a !== REGISTRY && a.startsWith('0xfa')),
    );
    expect(namingVaults).toEqual([]);
    const anyAddress = chain.filters.filter((f) => f.addresses === null);
    expect(anyAddress.length).toBeGreaterThan(0);
    expect(Math.min(...anyAddress.map((f) => f.from))).toBe(FIRST_REGISTRATION);
    expect(Math.max(...anyAddress.map((f) => f.to))).toBe(HEAD);
  });
});
