// The events cursor's forms: since its filters are bound to it (form 3), a cursor of form 2, which
// carried a check but no filters, is refused asking to start again rather than read as one of the
// unfiltered stream, which a client paging a filtered listing across the upgrade would have had
// followed as such; and a form 3 cursor whose filters field is not one this service writes is none
// it returned.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../gateway/errors.ts';
import { decodeEventsCursor, encodeCursor, eventsCursor } from '../../gateway/inputs.ts';

/** the BAD_INPUT message `decode` throws */
function refusal(decode: () => unknown): string {
  try {
    decode();
  } catch (error) {
    const { code, argument, message } = error as GatewayError;
    expect([code, argument]).toEqual(['BAD_INPUT', 'cursor']);
    return message;
  }
  throw new Error('the cursor was accepted');
}

/** a cursor as this service wrote `text`: with the check over it */
const written = (text: string) => {
  const check = createHash('sha256').update(text).digest('hex').slice(0, 8);
  return Buffer.from(`${text}:${check}`).toString('base64url');
};

/** the sort key of log 5 of block 382 */
const sortKey = (382n << 32n) + 5n;
const harborVault = '0x0165878a594ca255338adfa4d48449f69242eb8f';

describe('an events cursor of form 2, which carried no filters', () => {
  it('is refused asking to start again, with or without filters', () => {
    const cursor = written(`e2:${sortKey}`);
    for (const filters of [{}, { fund: harborVault }]) {
      expect(refusal(() => decodeEventsCursor('cursor', cursor, filters))).toBe(
        'cursor is a cursor of an earlier version of this service, which this version no longer reads; start again from the newest events: omit cursor.',
      );
    }
  });
});

describe('an events cursor of form 3', () => {
  it('is read back under the filters it was returned for', () => {
    const filters = { fund: harborVault, eventName: 'NavPublished', fromBlock: 1 };
    expect(decodeEventsCursor('cursor', eventsCursor(sortKey, filters), { ...filters })).toBe(sortKey);
  });

  it('is refused as none this service returned when its filters field is not a hash it writes', () => {
    expect(refusal(() => decodeEventsCursor('cursor', encodeCursor('e', sortKey, 'fund=x')))).toBe(
      'cursor is not a nextCursor of GET /v1/events (or Query.events) as it was returned: it is cut short, altered or made up. Pass nextCursor back exactly as returned, or omit cursor to start again from the newest events.',
    );
  });
});
