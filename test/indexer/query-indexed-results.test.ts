// The answers of the queries the compiler writes to read an index (query-plans.test.ts pins the
// plans): the same entities a plain scan of the versions gives, at the head and at past blocks,
// for the cases the rest of the query tests leave out. Over the store fixture's known history,
// through the real HTTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueryService } from '../../indexer/query/create-query-service.ts';
import { queryIndexer } from './graphql-client.ts';
import {
  createFixture,
  fixtureQueryService,
  navId,
  vault1,
  vault2,
  vault3,
  writeFixture,
  type Fixture,
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
