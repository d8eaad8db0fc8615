// The page cursors: an events cursor is the sort key to continue below (whose block the next page
// must be read at or past); a dividends cursor holds the epoch, the block its page was read at and
// the fund it pages, so that a cursor given to another fund is refused naming its own. Each carries
// a check over what it holds, so that one cut short or with a character altered is refused rather
// than followed to another position; one of an earlier form, which had no check, is refused asking
// to start again, and one of the other kind is refused naming the endpoint it pages.
import { beforeAll, describe, expect, it } from 'vitest';
import type { GatewayError } from '../../gateway/errors.ts';
import {
  CURSOR_PATTERN,
  decodeDividendsCursor,
  decodeEventsCursor,
  dividendsCursor,
  encodeCursor,
} from '../../gateway/inputs.ts';
import { blockOfSortKey } from '../../gateway/sources/subgraph.ts';
import type { Gateway } from '../../gateway/server.ts';
import { graphql, indexedStack, testGateway, type IndexedStack } from '../harness/stack.ts';

const harbor = { slug: 'harbor-stable-yield', vault: '0x0165878A594ca255338adfa4d48449f69242Eb8F' };
const summit = { slug: 'summit-kelly-growth', vault: '0xa513E6E4b8f2a923D98304ec87F64353C4D5C853' };
const funds = [harbor, summit];

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** the BAD_INPUT `decode` throws */
function refusal(decode: () => unknown): { argument: string | undefined; message: string } {
  try {
    decode();
  } catch (error) {
    const { code, argument, message } = error as GatewayError;
    expect(code).toBe('BAD_INPUT');
    return { argument, message };
  }
  throw new Error('the cursor was accepted');
}

/** `cursor` with its last 1, 2, ... characters cut off, down to one character */
const cutShort = (cursor: string) => [...cursor].slice(1).map((_, n) => cursor.slice(0, -(n + 1)));

/** `cursor` with one character changed to another of base64url, every such way */
const altered = (cursor: string) =>
  [...cursor].flatMap((original, i) =>
    [...BASE64URL].filter((c) => c !== original).map((c) => cursor.slice(0, i) + c + cursor.slice(i + 1)),
  );

const base64url = (text: string) => Buffer.from(text).toString('base64url');

const eventsNotReturned = {
  argument: 'cursor',
  message:
    'cursor is not a nextCursor of GET /v1/events (or Query.events) as it was returned: it is cut short, altered or made up. Pass nextCursor back exactly as returned, or omit cursor to start again from the newest events.',
};
const dividendsNotReturned = {
  argument: 'cursor',
  message:
    'cursor is not a nextCursor of GET /v1/funds/{slug}/dividends (or Fund.dividends) as it was returned: it is cut short, altered or made up. Pass nextCursor back exactly as returned, or omit cursor to start again from the newest rounds.',
};

describe('events cursors', () => {
  /** the nextCursor of a page ending at log 5 of block 382 */
  const sortKey = (382n << 32n) + 5n;
  const cursor = encodeCursor('e', sortKey);

  it('hold the sort key they continue below, whose block is the event block', () => {
    expect(cursor).toMatch(new RegExp(CURSOR_PATTERN));
    expect(decodeEventsCursor('cursor', cursor)).toBe(sortKey);
    expect(blockOfSortKey(sortKey)).toBe(382);
  });

  it('refuse a cursor cut short by any number of characters', () => {
    for (const short of cutShort(cursor)) {
      expect(
        refusal(() => decodeEventsCursor('cursor', short)),
        short,
      ).toEqual(eventsNotReturned);
    }
  });

  it('refuse a cursor with any one character altered', () => {
    for (const changed of altered(cursor)) {
      expect(
        refusal(() => decodeEventsCursor('cursor', changed)),
        changed,
      ).toEqual(eventsNotReturned);
    }
  });

  it('refuse a cursor of the earlier form, which had no check, asking to start again', () => {
    expect(refusal(() => decodeEventsCursor('cursor', base64url(`e:${sortKey}`)))).toEqual({
      argument: 'cursor',
      message:
        'cursor is a cursor of an earlier version of this service, which this version no longer reads; start again from the newest events: omit cursor.',
    });
  });

  it('refuse a dividends cursor, naming the endpoint it pages', () => {
    const dividends = dividendsCursor(harbor.vault, { epoch: 150, block: 382 });
    expect(refusal(() => decodeEventsCursor('cursor', dividends))).toEqual({
      argument: 'cursor',
      message:
        'cursor is a nextCursor of GET /v1/funds/{slug}/dividends (or Fund.dividends), not of GET /v1/events (or Query.events): pass it there, or omit cursor to start again from the newest events.',
    });
  });

  it('refuse a sort key whose block or log index is past any GraphQL Int, which no event has', () => {
    for (const key of [2_147_483_648n << 32n, (382n << 32n) + 2_147_483_648n]) {
      expect(refusal(() => decodeEventsCursor('cursor', encodeCursor('e', key)))).toEqual(eventsNotReturned);
    }
  });
});

describe('dividends cursors', () => {
  const cursor = dividendsCursor(harbor.vault, { epoch: 150, block: 382 });

  it('hold the epoch to continue below and the block their page was read at', () => {
    expect(cursor).toMatch(new RegExp(CURSOR_PATTERN));
    expect(decodeDividendsCursor('cursor', cursor, harbor, funds)).toEqual({ epoch: 150, block: 382 });
  });

  it('are bound to their fund whatever the case of its vault address', () => {
    const lowercase = dividendsCursor(harbor.vault.toLowerCase(), { epoch: 150, block: 382 });
    expect(decodeDividendsCursor('cursor', lowercase, harbor, funds)).toEqual({ epoch: 150, block: 382 });
  });

  it("refuse another fund's cursor, naming the fund it pages", () => {
    expect(refusal(() => decodeDividendsCursor('cursor', cursor, summit, funds))).toEqual({
      argument: 'cursor',
      message:
        'cursor pages the dividend rounds of fund harbor-stable-yield, not summit-kelly-growth: pass it to GET /v1/funds/harbor-stable-yield/dividends (or fund(slug: "harbor-stable-yield") { dividends }), or omit cursor to start at the newest rounds of summit-kelly-growth.',
    });
  });

  it('refuse a cursor cut short or with any one character altered', () => {
    for (const damaged of [...cutShort(cursor), ...altered(cursor)]) {
      expect(
        refusal(() => decodeDividendsCursor('cursor', damaged, harbor, funds)),
        damaged,
      ).toEqual(dividendsNotReturned);
    }
  });

  it('refuse a cursor of either earlier form, which had no check, asking to start again', () => {
    const [tag] = Buffer.from(cursor, 'base64url').toString().split(':').slice(1);
    for (const earlier of ['d:150', `d:${tag}:150:382`]) {
      expect(refusal(() => decodeDividendsCursor('cursor', base64url(earlier), harbor, funds))).toEqual({
        argument: 'cursor',
        message:
          'cursor is a cursor of an earlier version of this service, which this version no longer reads; start again from the newest rounds: omit cursor.',
      });
    }
  });

  it('refuse an events cursor, naming the endpoint it pages', () => {
    const events = encodeCursor('e', (382n << 32n) + 5n);
    expect(refusal(() => decodeDividendsCursor('cursor', events, harbor, funds))).toEqual({
      argument: 'cursor',
      message:
        'cursor is a nextCursor of GET /v1/events (or Query.events), not of GET /v1/funds/{slug}/dividends (or Fund.dividends): pass it there, or omit cursor to start again from the newest rounds.',
    });
  });

  it('refuse a cursor of no fund of the registry, or past any epoch or block', () => {
    const unknownFund = dividendsCursor('0x000000000000000000000000000000000000dEaD', { epoch: 1, block: 1 });
    expect(refusal(() => decodeDividendsCursor('cursor', unknownFund, harbor, funds))).toEqual(
      dividendsNotReturned,
    );
    const [tag] = Buffer.from(cursor, 'base64url').toString().split(':').slice(1);
    for (const fields of [
      [tag, 2_147_483_648, 1],
      [tag, 1, 2_147_483_648],
      [tag, 1],
      [tag, 1, 1, 1],
    ]) {
      const forged = encodeCursor('d', ...(fields as (string | number)[]));
      expect(refusal(() => decodeDividendsCursor('cursor', forged, harbor, funds))).toEqual(
        dividendsNotReturned,
      );
    }
  });
});

describe('a dividends cursor given to another fund over GraphQL', () => {
  let stack: IndexedStack;
  let gateway: Gateway;
  beforeAll(async () => {
    stack = await indexedStack();
    gateway = testGateway(stack);
  });

  it('is refused with BAD_INPUT naming the fund it pages, not followed on the wrong fund', async () => {
    const page = (slug: string, cursor?: string) =>
      graphql(
        gateway,
        'query($slug: String!, $cursor: String) { fund(slug: $slug) { dividends(limit: 1, cursor: $cursor) { items { epoch } nextCursor } } }',
        { slug, cursor },
      );
    const first = await page(harbor.slug);
    const cursor = first.data?.fund.dividends.nextCursor as string;
    const { data, errors } = await page(summit.slug, cursor);
    expect(data?.fund.dividends).toBeNull();
    expect(errors?.map((e) => [e.extensions?.code, e.extensions?.argument, e.message])).toEqual([
      [
        'BAD_INPUT',
        'cursor',
        'cursor pages the dividend rounds of fund harbor-stable-yield, not summit-kelly-growth: pass it to GET /v1/funds/harbor-stable-yield/dividends (or fund(slug: "harbor-stable-yield") { dividends }), or omit cursor to start at the newest rounds of summit-kelly-growth.',
      ],
    ]);
  });
});
