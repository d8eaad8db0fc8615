// An events cursor continues only the listing that returned it: GET /v1/events (and Query.events)
// given a nextCursor with other filters than the request that returned it (none, another fund, another
// block range) refuses it with 400 naming cursor, where it was once followed, answering the events of
// another listing as if they were the next page of this one. The same filters in another spelling
// (an address in another case) and another limit continue it.
import { describe, expect, it } from 'vitest';
import { graphql, restServiceForSuite, testGateway } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const service = restServiceForSuite();

const HARBOR = 'harbor-stable-yield';
const SUMMIT = 'summit-kelly-growth';

/** the refusal of a cursor of a filtered listing sent by a request that `which` */
const forOtherFilters = (which: string) =>
  `cursor was returned for a request with other filters than this one (which ${which}); a cursor continues only the listing that returned it. Send it with the same filters (fund, contract, eventName, fromBlock, toBlock: each given with the same value, or left out, as there; limit may change) as the request that returned it, or omit cursor to start again from the newest events.`;

interface EventItem {
  fund: string | null;
  eventName: string;
  blockNumber: number;
  logIndex: number;
}

const sortKey = (e: EventItem) => (BigInt(e.blockNumber) << 32n) + BigInt(e.logIndex);

/** the page `query` answers, which must be a 200 */
async function page(query: string): Promise<{ items: EventItem[]; nextCursor: string }> {
  const { status, body } = await call(service.base, `/v1/events?${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body as { items: EventItem[]; nextCursor: string };
}

describe('an events nextCursor sent with the filters of the request that returned it', () => {
  it("continues that listing: the fund's older NAV publications, whatever the limit", async () => {
    const filters = `fund=${HARBOR}&eventName=NavPublished`;
    const first = await page(`${filters}&limit=3`);
    const second = await page(`${filters}&limit=5&cursor=${first.nextCursor}`);
    expect(second.items).toHaveLength(5);
    for (const item of second.items) expect(item).toMatchObject({ fund: HARBOR, eventName: 'NavPublished' });
    expect(sortKey(second.items[0]!)).toBeLessThan(sortKey(first.items.at(-1)!));
  });

  it('continues it when the contract address is given in another case', async () => {
    const oracle = service.stack.registry.contracts.find((c) => c.kind === 'NavOracle')!.address;
    const first = await page(`contract=${oracle}&limit=2`);
    const second = await page(`contract=${oracle.toLowerCase()}&limit=2&cursor=${first.nextCursor}`);
    expect(second.items).toHaveLength(2);
  });
});

describe('an events nextCursor sent with other filters', () => {
  /** the nextCursor of the first page of three events of `filters` (each followed by &) */
  const cursorOf = async (filters: string) => (await page(`${filters}limit=3`)).nextCursor;

  it.each([
    ['with no filter', '', 'gives no filter'],
    ['with another fund', `fund=${SUMMIT}&eventName=NavPublished&`, 'filters by fund, eventName'],
    ['with only the fund', `fund=${HARBOR}&`, 'filters by fund'],
    [
      'with a block range added',
      `fund=${HARBOR}&eventName=NavPublished&fromBlock=1&`,
      'filters by fund, eventName, fromBlock',
    ],
  ])('is refused with 400 naming cursor %s', async (_name, otherFilters, which) => {
    const cursor = await cursorOf(`fund=${HARBOR}&eventName=NavPublished&`);
    const { status, body } = await call(service.base, `/v1/events?${otherFilters}limit=3&cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      type: expect.stringMatching(/\/problems\/invalid-parameter$/),
      parameter: 'cursor',
      detail: forOtherFilters(which),
    });
  });

  it('is refused with 400 when it was returned for every event and is sent with a fund', async () => {
    const cursor = await cursorOf('');
    const { status, body } = await call(service.base, `/v1/events?fund=${HARBOR}&limit=3&cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      parameter: 'cursor',
      detail:
        'cursor was returned for a request with no filter, and this one filters by fund; a cursor continues only the listing that returned it. Leave those filters out to continue it, or omit cursor to start again from the newest events they match.',
    });
  });

  it('is refused over GraphQL with BAD_INPUT naming cursor and a null events', async () => {
    const gateway = testGateway(service.stack);
    const first = await graphql(
      gateway,
      `{ events(fund: "${HARBOR}", eventName: "NavPublished", limit: 3) { nextCursor } }`,
    );
    const cursor = first.data?.events.nextCursor as string;
    const { data, errors } = await graphql(
      gateway,
      'query($cursor: String) { events(limit: 3, cursor: $cursor) { items { id } nextCursor } }',
      { cursor },
    );
    expect(data?.events).toBeNull();
    expect(errors?.map((e) => [e.extensions?.code, e.extensions?.argument, e.message])).toEqual([
      ['BAD_INPUT', 'cursor', forOtherFilters('gives no filter')],
    ]);
  });
});
