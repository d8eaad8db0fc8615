// The page cursors: an events cursor is the sort key to continue below (whose block the next page
// must be read at or past); a dividends cursor holds the epoch, the block its page was read at and
// the fund it pages, so that a cursor given to another fund is refused naming its own, and one of
// the earlier form, which said neither, is refused asking to start again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayError } from '../../gateway/errors.ts';
import {
  decodeDividendsCursor,
  decodeEventsCursor,
  dividendsCursor,
  encodeCursor,
} from '../../gateway/inputs.ts';
import { blockOfSortKey } from '../../gateway/sources/subgraph.ts';
import type { Gateway } from '../../gateway/server.ts';
import { graphql, indexedStack, testGateway, type IndexedStack } from './stack.ts';

const harbor = { slug: 'harbor-stable-yield', vault: '0x0165878A594ca255338adfa4d48449f69242Eb8F' };
const summit = { slug: 'summit-kelly-growth', vault: '0xa513E6E4b8f2a923D98304ec87F64353C4D5C853' };
const funds = [harbor, summit];

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

describe('events cursors', () => {
  it('hold the sort key they continue below, whose block is the event block', () => {
    const sortKey = (382n << 32n) + 7n;
    const cursor = encodeCursor('e', sortKey);
    expect(decodeEventsCursor('cursor', cursor)).toBe(sortKey);
    expect(blockOfSortKey(sortKey)).toBe(382);
  });

  it('refuse a sort key whose block is past any block number', () => {
    const cursor = encodeCursor('e', 2_147_483_648n << 32n);
    expect(refusal(() => decodeEventsCursor('cursor', cursor))).toEqual({
      argument: 'cursor',
      message: 'cursor must be a nextCursor value returned by this endpoint.',
    });
  });

  it('refuse a dividends cursor', () => {
    const cursor = dividendsCursor(harbor.vault, { epoch: 150, block: 382 });
    expect(refusal(() => decodeEventsCursor('cursor', cursor))).toEqual({
      argument: 'cursor',
      message: 'cursor must be a nextCursor value returned by this endpoint.',
    });
  });
});

describe('dividends cursors', () => {
  it('hold the epoch to continue below and the block their page was read at', () => {
    const cursor = dividendsCursor(harbor.vault, { epoch: 150, block: 382 });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(decodeDividendsCursor('cursor', cursor, harbor, funds)).toEqual({ epoch: 150, block: 382 });
  });

  it('are bound to their fund whatever the case of its vault address', () => {
    const cursor = dividendsCursor(harbor.vault.toLowerCase(), { epoch: 150, block: 382 });
    expect(decodeDividendsCursor('cursor', cursor, harbor, funds)).toEqual({ epoch: 150, block: 382 });
  });

  it("refuse another fund's cursor, naming the fund it pages", () => {
    const cursor = dividendsCursor(harbor.vault, { epoch: 150, block: 382 });
    expect(refusal(() => decodeDividendsCursor('cursor', cursor, summit, funds))).toEqual({
      argument: 'cursor',
      message:
        'cursor pages the dividend rounds of fund harbor-stable-yield, not summit-kelly-growth: pass it to GET /v1/funds/harbor-stable-yield/dividends (or fund(slug: "harbor-stable-yield") { dividends }), or omit cursor to start at the newest rounds of summit-kelly-growth.',
    });
  });

  it('refuse a cursor of the earlier form, which named no fund, asking to start again', () => {
    const cursor = Buffer.from('d:150').toString('base64url');
    expect(refusal(() => decodeDividendsCursor('cursor', cursor, harbor, funds))).toEqual({
      argument: 'cursor',
      message:
        'cursor is a cursor of an earlier version of this service, which did not say which fund and block it belongs to; start again from the newest rounds: omit cursor.',
    });
  });

  it('refuse a cursor of no fund of the registry, or past any epoch or block', () => {
    const notReturned = {
      argument: 'cursor',
      message: 'cursor must be a nextCursor value returned by this endpoint.',
    };
    const unknownFund = dividendsCursor('0x000000000000000000000000000000000000dEaD', { epoch: 1, block: 1 });
    expect(refusal(() => decodeDividendsCursor('cursor', unknownFund, harbor, funds))).toEqual(notReturned);
    const [tag] = Buffer.from(dividendsCursor(harbor.vault, { epoch: 1, block: 1 }), 'base64url')
      .toString()
      .split(':')
      .slice(1);
    for (const forged of [`d:${tag}:2147483648:1`, `d:${tag}:1:2147483648`, `d:${tag}:1`, 'e:5']) {
      const cursor = Buffer.from(forged).toString('base64url');
      expect(refusal(() => decodeDividendsCursor('cursor', cursor, harbor, funds))).toEqual(notReturned);
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
  afterAll(() => stack?.stop());

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
