// The answers of the queries the compiler writes to read an index (query-plans.test.ts pins the
// plans): the same entities a plain scan of the versions gives, at the head and at past blocks,
// for the cases the rest of the query tests leave out. Over the store fixture's known history,
// through the real HTTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryIndexer } from './graphql-client.ts';
import {
  B,
  BI,
  S,
  fund,
  nav,
  navId,
  protocolEvent,
  schema,
  serveHistory,
  vault1,
  vault2,
  vault3,
  type BlockWrites,
  type NavInput,
  serveFixture,
  type ServedFixture,
} from './store-fixture.ts';

let history: ServedFixture;

beforeAll(async () => {
  history = await serveFixture();
});

afterAll(() => history?.close());

const data = (text: string) => queryIndexer(history.url, text);

describe('a mutable entity filtered by id', () => {
  it('is the version of each block: alpha gains its latestNav at block 12', async () => {
    const at = async (block: number) =>
      (await data(`{ funds(where: { id: "${vault1}" }, block: { number: ${block} }) { latestNav { id } } }`))
        .funds;
    expect(await at(10)).toEqual([{ latestNav: null }]);
    expect(await at(11)).toEqual([{ latestNav: null }]);
    expect(await at(12)).toEqual([{ latestNav: { id: navId(vault1, 2) } }]);
  });

  it('is nothing before the entity exists and after it is removed', async () => {
    const beta2 = navId(vault2, 2);
    const at = async (block: number) =>
      (await data(`{ navRecords(where: { id: "${beta2}" }, block: { number: ${block} }) { status } }`))
        .navRecords;
    expect(await at(11)).toEqual([]);
    expect(await at(12)).toEqual([{ status: 'Verified' }]);
    expect(await at(13)).toEqual([]);
  });

  it('by id_in, is the version each id has at the block, ids unknown or removed left out', async () => {
    const ids = [navId(vault1, 1), navId(vault2, 2), 'nothing-1'];
    const at = async (block: number) =>
      (
        await data(
          `{ navRecords(where: { id_in: ${JSON.stringify(ids)} }, block: { number: ${block} }) { id status } }`,
        )
      ).navRecords;
    expect(await at(10)).toEqual([{ id: navId(vault1, 1), status: 'Draft' }]);
    expect(await at(12)).toEqual([
      { id: navId(vault1, 1), status: 'Published' },
      { id: navId(vault2, 2), status: 'Verified' },
    ]);
    expect(await at(13)).toEqual([{ id: navId(vault1, 1), status: 'Published' }]);
  });

  it('by Bytes id_in in any case, in a nested filter too', async () => {
    const upper = '0x' + vault2.slice(2).toUpperCase();
    const funds = await data(`{ funds(where: { id_in: ["${upper}", "${vault3}"] }) { slug } }`);
    expect(funds.funds).toEqual([{ slug: 'gamma_reserve' }, { slug: 'Beta-Growth' }]);
    const navs = await data(
      `{ navRecords(where: { fund_: { id: "${upper}" } }, block: { number: 12 }) { id } }`,
    );
    expect(navs.navRecords).toEqual([{ id: navId(vault2, 1) }, { id: navId(vault2, 2) }]);
  });
});

describe('a collection ordered by a field of the entity a reference names', () => {
  // funds A (vault1), B (vault2) and C (vault3, no latestNav) refer to their latest NAV record;
  // B's NAV is 700 at block 1, 300 at block 2, and removed at block 3
  const navA: NavInput = { vault: vault1, epoch: 1, status: 'Draft', navPerShare: 500n, block: 1 };
  const navB: NavInput = { vault: vault2, epoch: 1, status: 'Draft', navPerShare: 700n, block: 1 };
  const slugs = { [vault1]: 'a', [vault2]: 'b', [vault3]: 'c' };
  let served: Awaited<ReturnType<typeof serveHistory>>;

  beforeAll(async () => {
    served = await serveHistory({
      schema,
      startBlock: 1,
      headSeen: 3,
      deployment: 'QmChildOrder',
      subgraphName: 'child-order',
      history: {
        1: (w) => {
          w.set('NavRecord', navId(vault1, 1), nav(navA));
          w.set('NavRecord', navId(vault2, 1), nav(navB));
          w.set('Fund', vault1, fund(vault1, 'a', false, [], 1, navId(vault1, 1)));
          w.set('Fund', vault2, fund(vault2, 'b', false, [], 1, navId(vault2, 1)));
          w.set('Fund', vault3, fund(vault3, 'c', false, [], 1));
        },
        2: (w) => {
          const b = nav(navB);
          b.set('navPerShare', BI(300n));
          w.set('NavRecord', navId(vault2, 1), b);
        },
        3: (w) => w.remove('NavRecord', navId(vault2, 1)),
      },
    });
  });

  afterAll(() => served?.close());

  async function order(
    block: number,
    direction: 'asc' | 'desc',
    orderBy = 'latestNav__navPerShare',
  ): Promise<string[]> {
    const d = await queryIndexer(
      served.url,
      `{ funds(orderBy: ${orderBy}, orderDirection: ${direction}, block: { number: ${block} }) { id } }`,
    );
    return (d.funds as { id: string }[]).map((f) => slugs[f.id]!);
  }

  it('orders by the value each block has, a missing entity last ascending and first descending', async () => {
    expect(await order(1, 'asc')).toEqual(['a', 'b', 'c']);
    expect(await order(1, 'desc')).toEqual(['c', 'b', 'a']);
    expect(await order(2, 'asc')).toEqual(['b', 'a', 'c']);
    expect(await order(2, 'desc')).toEqual(['c', 'a', 'b']);
  });

  it('takes an entity removed by the block for a missing one, ties broken by id', async () => {
    expect(await order(3, 'asc')).toEqual(['a', 'c', 'b']);
    expect(await order(3, 'desc')).toEqual(['b', 'c', 'a']);
  });

  it('by the id of the entity a reference names, takes one removed by the block for a missing one', async () => {
    // graph-node joins the referenced entity at the block and sorts by its id, not by the reference
    expect(await order(2, 'asc', 'latestNav__id')).toEqual(['a', 'b', 'c']);
    expect(await order(3, 'asc', 'latestNav__id')).toEqual(['a', 'c', 'b']);
    expect(await order(3, 'desc', 'latestNav__id')).toEqual(['b', 'c', 'a']);
  });
});

describe('a String or Bytes attribute compared through the prefix its index holds', () => {
  // events whose args (String) and txHash (Bytes) agree on more than the index's prefix (256
  // characters, 64 bytes) and differ after it; the last is written at block 2
  const long = 'x'.repeat(256);
  const accents = 'é'.repeat(300);
  const args = ['short', long, `${long}a`, `${long}b`, accents, `${accents}z`];
  const hash = (last: string) => '0x' + 'ab'.repeat(64) + last;
  const hashes = args.map((_, i) => hash(String(i).padStart(12, '0')));
  const upper = (hex: string) => '0x' + hex.slice(2).toUpperCase();
  let served: Awaited<ReturnType<typeof serveHistory>>;

  beforeAll(async () => {
    const write = (i: number) => (w: Parameters<BlockWrites[number]>[0]) => {
      const e = protocolEvent(i, 1, 'E', BigInt(i), vault1);
      e.set('args', S(args[i]!));
      e.set('txHash', B(hashes[i]!));
      w.set('ProtocolEvent', '0x' + i.toString(16).padStart(8, '0'), e);
    };
    served = await serveHistory({
      schema,
      startBlock: 1,
      headSeen: 2,
      deployment: 'QmPrefixes',
      subgraphName: 'prefixes',
      history: {
        1: (w) => [0, 1, 2, 3, 4].forEach((i) => write(i)(w)),
        2: (w) => write(5)(w),
      },
    });
  });

  afterAll(() => served?.close());

  /** The indexes (in `args`) of the events `where` selects, in id order. */
  async function matching(where: Record<string, unknown>, block = 2): Promise<number[]> {
    const d = await queryIndexer(
      served.url,
      `{ protocolEvents(where: ${JSON.stringify(where).replace(/"(\w+)":/g, '$1:')}, block: { number: ${block} }) { logIndex } }`,
    );
    return (d.protocolEvents as { logIndex: string }[]).map((e) => Number(e.logIndex));
  }

  it('finds a String by equality, not one it is a prefix of or that has the same prefix', async () => {
    expect(await matching({ args: long })).toEqual([1]);
    expect(await matching({ args: `${long}a` })).toEqual([2]);
    expect(await matching({ args: `${long}c` })).toEqual([]);
    expect(await matching({ args: accents })).toEqual([4]);
    expect(await matching({ args: `${accents}z` })).toEqual([5]);
    expect(await matching({ args: `${accents}z` }, 1)).toEqual([]);
  });

  it('orders Strings past their prefix for the range operators', async () => {
    expect(await matching({ args_gt: long })).toEqual([2, 3, 4, 5]);
    expect(await matching({ args_gte: `${long}a` })).toEqual([2, 3, 4, 5]);
    expect(await matching({ args_lt: `${long}b` })).toEqual([0, 1, 2]);
    expect(await matching({ args_lte: long })).toEqual([0, 1]);
    expect(await matching({ args_gt: long, args_lt: `${accents}z` })).toEqual([2, 3, 4]);
    expect(await matching({ args_gt: long, args_lt: `${accents}z` }, 1)).toEqual([2, 3, 4]);
  });

  it('finds Strings in an _in list by the whole value', async () => {
    expect(await matching({ args_in: [`${long}b`, 'short', `${long}c`] })).toEqual([0, 3]);
    expect(await matching({ args_not_in: [long, `${accents}z`] })).toEqual([0, 2, 3, 4]);
  });

  it('finds Bytes longer than the prefix by equality, _in and ranges, given in any case', async () => {
    expect(await matching({ txHash: upper(hashes[2]!) })).toEqual([2]);
    expect(await matching({ txHash_in: [hashes[1], upper(hashes[5]!)] })).toEqual([1, 5]);
    expect(await matching({ txHash_in: [hashes[1], hashes[5]] }, 1)).toEqual([1]);
    expect(await matching({ txHash_gt: hashes[3], txHash_lte: hashes[5] })).toEqual([4, 5]);
    expect(await matching({ txHash: hash('') })).toEqual([]);
  });
});
