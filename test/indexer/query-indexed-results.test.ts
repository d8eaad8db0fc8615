// The answers of the queries the compiler writes to read an index (query-plans.test.ts pins the
// plans): the same entities a plain scan of the versions gives, at the head and at past blocks,
// for the cases the rest of the query tests leave out. Over the store fixture's known history,
// through the real HTTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueryService } from '../../indexer/query/create-query-service.ts';
import { queryIndexer } from './graphql-client.ts';
import {
  BI,
  createFixture,
  fixtureQueryService,
  fund,
  nav,
  navId,
  schema,
  serveHistory,
  vault1,
  vault2,
  vault3,
  writeFixture,
  type Fixture,
  type NavInput,
} from './store-fixture.ts';

let fixture: Fixture;
let service: QueryService;
let url: string;

beforeAll(async () => {
  fixture = createFixture();
  writeFixture(fixture.store);
  service = fixtureQueryService(fixture);
  url = await service.listen(0);
});

afterAll(async () => {
  await service?.close();
  fixture?.cleanup();
});

const data = (text: string) => queryIndexer(url, text);

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

  async function order(block: number, direction: 'asc' | 'desc'): Promise<string[]> {
    const d = await queryIndexer(
      served.url,
      `{ funds(orderBy: latestNav__navPerShare, orderDirection: ${direction}, block: { number: ${block} }) { id } }`,
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
});
