// GET /v1/events and Query.events given back their nextCursor: followed as returned it pages through
// every indexed event once; cut short or altered on its way back it is refused with 400 naming
// cursor, where it was once followed to another position (a block far below, or past every event,
// read as the end of the stream).
import { describe, expect, it } from 'vitest';
import { graphql, restServiceForSuite, testGateway } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const service = restServiceForSuite();

const NOT_RETURNED =
  'cursor is not a nextCursor of GET /v1/events (or Query.events) as it was returned: it is cut short, altered or made up. Pass nextCursor back exactly as returned, or omit cursor to start again from the newest events.';

/** the nextCursor of the newest page of three events */
async function thirdEventCursor(): Promise<string> {
  const { status, body } = await call(service.base, '/v1/events?limit=3');
  expect(status).toBe(200);
  return body.nextCursor as string;
}

describe('an events nextCursor passed back as returned', () => {
  it('pages through every indexed event exactly once, newest first', async () => {
    const keys: bigint[] = [];
    let cursor: string | null = null;
    do {
      const page = await call(service.base, `/v1/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      const items = page.body.items as { blockNumber: number; logIndex: number }[];
      keys.push(...items.map((e) => (BigInt(e.blockNumber) << 32n) + BigInt(e.logIndex)));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(keys).toHaveLength(service.stack.devnet.ledger.trackedEvents);
    expect(keys.every((key, i) => i === 0 || key < keys[i - 1]!)).toBe(true);
  });
});

describe('an events nextCursor damaged on its way back', () => {
  it.each([
    ['its last character dropped', (cursor: string) => cursor.slice(0, -1)],
    ['its last three characters dropped', (cursor: string) => cursor.slice(0, -3)],
    [
      'a character altered',
      (cursor: string) => `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`,
    ],
  ])('is refused with 400 naming cursor when it has %s', async (_name, damage) => {
    const cursor = damage(await thirdEventCursor());
    const { status, body } = await call(service.base, `/v1/events?limit=3&cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      type: expect.stringMatching(/\/problems\/invalid-parameter$/),
      parameter: 'cursor',
      detail: NOT_RETURNED,
    });
  });

  it('is refused over GraphQL with BAD_INPUT naming cursor and a null events', async () => {
    const cursor = (await thirdEventCursor()).slice(0, -1);
    const { data, errors } = await graphql(
      testGateway(service.stack),
      'query($cursor: String) { events(limit: 3, cursor: $cursor) { items { id } nextCursor } }',
      { cursor },
    );
    expect(data?.events).toBeNull();
    expect(errors?.map((e) => [e.extensions?.code, e.extensions?.argument, e.message])).toEqual([
      ['BAD_INPUT', 'cursor', NOT_RETURNED],
    ]);
  });
});

describe('an events cursor of the earlier form, which had no check', () => {
  it('is refused with 400 asking to start again without it', async () => {
    const cursor = Buffer.from(`e:${(382n << 32n) + 5n}`).toString('base64url');
    const { status, body } = await call(service.base, `/v1/events?cursor=${cursor}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      parameter: 'cursor',
      detail:
        'cursor is a cursor of an earlier version of this service, which this version no longer reads; start again from the newest events: omit cursor.',
    });
  });
});
