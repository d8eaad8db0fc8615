// The subgraph's behaviour: the built wasm, run by the embedded indexer over the devnet scenario,
// must hold exactly what the scenario wrote. Every expectation comes from the scenario's ledger
// and the deployment (scenario-expectations.ts); every actual value is read back through the
// indexer's graph-node-dialect GraphQL endpoint (subgraph-reader.ts).
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { canonicalKey, expectedSubgraph, type ExpectedSubgraph, type Row } from './scenario-expectations.ts';
import { queryGraphQL, readSubgraph, type SubgraphContents } from './subgraph-reader.ts';

/** Transaction hash ++ log index as 4 little-endian bytes (graph-ts `concatI32`). */
function eventId(txHash: string, logIndex: number): string {
  const index = Buffer.alloc(4);
  index.writeInt32LE(logIndex);
  return `${txHash}${index.toString('hex')}`;
}

const withoutId = ({ id: _id, ...rest }: Row): Row => rest;
const sortedByKey = (rows: Row[]): Row[] =>
  [...rows].sort((a, b) => canonicalKey(a).localeCompare(canonicalKey(b)));

describe('subgraph over the devnet scenario', () => {
  let expected: ExpectedSubgraph;
  let actual: SubgraphContents;

  beforeAll(async () => {
    const { deployment, ledger } = inject('devnet');
    expected = expectedSubgraph(deployment, ledger);
    actual = await readSubgraph(inject('indexer').queryUrl);
  });

  it('holds one Fund per registered vault with its closure, paused modules and latest NAV and settlement pointers', () => {
    expect(actual.funds.map(({ registeredTxHash: _tx, ...fund }) => fund)).toEqual(expected.funds);
    for (const fund of actual.funds) expect(fund.registeredTxHash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('holds every NAV record with its status, values and the time and transaction of each transition', () => {
    expect(expected.navRecords.length).toBeGreaterThan(0);
    expect(actual.navRecords).toEqual(expected.navRecords);
  });

  it('counts the rejections of NAV records that were sent back to Draft', () => {
    const rejected = actual.navRecords.filter((record) => Number(record.rejectionCount) > 0);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.map((record) => record.id)).toEqual(
      expected.navRecords.filter((record) => Number(record.rejectionCount) > 0).map((record) => record.id),
    );
  });

  it('holds every dividend round with its root, total, leaf count, URI and claimed count and amount', () => {
    expect(expected.dividendRounds.length).toBeGreaterThan(0);
    expect(actual.dividendRounds).toEqual(expected.dividendRounds);
  });

  it('holds every dividend claim, keyed by transaction hash ++ log index', () => {
    expect(expected.dividendClaims.length).toBeGreaterThan(0);
    expect(sortedByKey(actual.dividendClaims.map(withoutId))).toEqual(expected.dividendClaims);
    for (const claim of actual.dividendClaims) {
      expect(String(claim.id).slice(0, 66)).toBe(claim.txHash);
      expect(String(claim.id)).toHaveLength(2 + 72);
    }
  });

  it('holds the current allocation of every strategy of every fund', () => {
    expect(actual.strategyAllocations).toEqual(expected.strategyAllocations);
  });

  it('holds every allocation change, never rewritten', () => {
    expect(sortedByKey(actual.allocationChanges.map(withoutId))).toEqual(expected.allocationChanges);
  });

  it('holds every settlement of every fund', () => {
    expect(actual.settlements).toEqual(expected.settlements);
  });

  it('holds every subscription and redemption request, with the settlement of its epoch once there is one', () => {
    expect(new Set(expected.requests.map((request) => request.kind))).toEqual(
      new Set(['Subscription', 'Redemption']),
    );
    expect(sortedByKey(actual.requests.map(withoutId))).toEqual(expected.requests);
  });

  it("fills a settlement's requests at its NAV per share, as the schema describes, to exactly its totals", () => {
    const NAV_ONE = 10n ** 6n;
    const settled = actual.settlements.filter(
      (s) => BigInt(String(s.assetsIn)) + BigInt(String(s.sharesBurned)) > 0n,
    );
    expect(settled.length).toBeGreaterThan(0);
    for (const settlement of settled) {
      const nav = BigInt(String(settlement.navPerShare));
      const requests = actual.requests.filter((r) => (r.settlement as Row | null)?.id === settlement.id);
      const sum = (kind: string, fill: (amount: bigint) => bigint): string =>
        requests
          .filter((r) => r.kind === kind)
          .reduce((total, r) => total + fill(BigInt(String(r.amount))), 0n)
          .toString();
      expect({
        assetsIn: sum('Subscription', (assets) => assets),
        sharesMinted: sum('Subscription', (assets) => (assets * NAV_ONE) / nav),
        sharesBurned: sum('Redemption', (shares) => shares),
        assetsOut: sum('Redemption', (shares) => (shares * nav) / NAV_ONE),
      }).toEqual({
        assetsIn: settlement.assetsIn,
        sharesMinted: settlement.sharesMinted,
        sharesBurned: settlement.sharesBurned,
        assetsOut: settlement.assetsOut,
      });
    }
  });

  it('lists the requests each settlement filled through its derived requests field', async () => {
    const byField = (await queryGraphQL(
      inject('indexer').queryUrl,
      '{ settlements(first: 1000, orderBy: id) { id requests(first: 1000, orderBy: id) { id } } }',
    )) as { settlements: { id: string; requests: { id: string }[] }[] };
    const byReference = actual.settlements.map((settlement) => ({
      id: settlement.id,
      requests: actual.requests
        .filter((r) => (r.settlement as Row | null)?.id === settlement.id)
        .map((r) => ({ id: r.id })),
    }));
    expect(byReference.some((settlement) => settlement.requests.length > 0)).toBe(true);
    expect(byField.settlements).toEqual(byReference);
  });

  it('holds every pause and unpause of a module, never rewritten', () => {
    expect(expected.pauseChanges.length).toBeGreaterThan(0);
    expect(sortedByKey(actual.pauseChanges.map(withoutId))).toEqual(expected.pauseChanges);
  });

  it('records as many events per tracked contract and event name as the chain holds', () => {
    const counts: Record<string, Record<string, number>> = {};
    for (const event of actual.protocolEvents) {
      const byName = (counts[String(event.contract)] ??= {});
      byName[String(event.eventName)] = (byName[String(event.eventName)] ?? 0) + 1;
    }
    expect(counts).toEqual(expected.eventCounts);
  });

  it('records each event the scenario wrote with its contract, transaction, block, time and decoded arguments', () => {
    // Candidates by contract, event name and block; each actual record matches one expectation at most.
    const candidates = new Map<string, (Row & { args: Row })[]>();
    const bucket = (contract: unknown, eventName: unknown, blockNumber: unknown): string =>
      `${String(contract)} ${String(eventName)} ${String(blockNumber)}`;
    for (const event of actual.protocolEvents) {
      const key = bucket(event.contract, event.eventName, event.blockNumber);
      const list = candidates.get(key) ?? [];
      list.push({ ...event, args: JSON.parse(String(event.args)) as Row });
      candidates.set(key, list);
    }
    const unmatched = expected.events.filter((want) => {
      const list = candidates.get(bucket(want.contract, want.eventName, want.blockNumber)) ?? [];
      const index = list.findIndex(
        (event) =>
          (want.txHash === null || event.txHash === want.txHash) &&
          event.timestamp === want.timestamp &&
          Object.entries(want.args).every(([name, value]) => event.args[name] === value),
      );
      if (index >= 0) list.splice(index, 1);
      return index < 0;
    });
    expect(expected.events.length).toBeGreaterThan(1000);
    expect(unmatched).toEqual([]);
    // Nothing left over: every event record is one the deployment or the scenario wrote.
    expect([...candidates.values()].flat()).toEqual([]);
  });

  it('names the fund each event concerns: the emitting vault, the vault its arguments name, or none', () => {
    const { deployment } = inject('devnet');
    const vaults = new Set(deployment.funds.map((f) => f.vault.toLowerCase()));
    const concerned = (event: Row): unknown => {
      const args = JSON.parse(String(event.args)) as Row;
      if (vaults.has(String(event.contract))) return event.contract;
      if (event.eventName === 'FundRegistered') return args.vault;
      return args.fund ?? null;
    };
    expect(actual.protocolEvents.filter((event) => event.fund !== concerned(event))).toEqual([]);
    // every fund is concerned by events of all four kinds of contract; role events by none
    const fundsOf = (name: string) =>
      new Set(actual.protocolEvents.filter((e) => e.eventName === name).map((e) => e.fund));
    expect(fundsOf('FundRegistered')).toEqual(vaults);
    expect(fundsOf('NavPublished')).toEqual(vaults);
    expect(fundsOf('EpochSettled')).toEqual(vaults);
    expect(fundsOf('RoleGranted')).toEqual(new Set([null]));
  });

  it('keys every event record by transaction hash ++ log index and orders them by block * 2^32 + log index', () => {
    const sortKeys = new Set<string>();
    for (const event of actual.protocolEvents) {
      const logIndex = Number(event.logIndex);
      expect(event.id).toBe(eventId(String(event.txHash), logIndex));
      expect(BigInt(String(event.sortKey))).toBe(
        (BigInt(String(event.blockNumber)) << 32n) + BigInt(logIndex),
      );
      sortKeys.add(String(event.sortKey));
    }
    expect(sortKeys.size).toBe(actual.protocolEvents.length);
  });
});
