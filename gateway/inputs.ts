// Argument rules shared by the GraphQL resolvers and the REST route table, so both surfaces
// accept exactly the same values and the same bounds are documented in openapi.json; and the
// words of a lookup that finds nothing, which name where the valid values are listed on both
// surfaces, since the REST routes answer with the gateway's own message.
import { badInput } from './errors.ts';
import { EVENT_NAMES } from './event-names.ts';

export const NAV_HISTORY_LIMIT = { minimum: 1, maximum: 500, default: 90 } as const;
export const PAGE_LIMIT = { minimum: 1, maximum: 100, default: 20 } as const;
/** epochs and block numbers are GraphQL Int (32-bit signed) */
export const MAX_INT = 2_147_483_647;
export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
/** the form of every registry slug (fund, strategy, policy), as sources/registry.ts validates it */
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';
export const SLUG_RULE = 'lowercase letters, digits and single hyphens';

/** Where a client lists valid values: the REST request and the GraphQL query answering the same. */
interface Listing {
  rest: string;
  graphql: string;
}

const listedBy = ({ rest, graphql }: Listing) => `${rest} or the GraphQL query ${graphql}`;

const SLUG_LISTINGS = {
  fund: { rest: 'GET /v1/funds', graphql: '{ funds { slug } }' },
  strategy: { rest: 'GET /v1/strategies', graphql: '{ strategies { slug } }' },
  policy: { rest: 'GET /v1/policies', graphql: '{ policies { slug } }' },
} as const satisfies Record<string, Listing>;

export type SlugResource = keyof typeof SLUG_LISTINGS;

/**
 * Why no `resource` has this slug, and where the slugs are listed. A value that breaks the slug
 * form gets the rule, and the registered slug it normalises to (lowercase, single hyphens), if any:
 * the one a client that guessed the case or the separators meant.
 */
export function unknownSlugMessage(
  resource: SlugResource,
  slug: string,
  isKnown: (slug: string) => boolean,
): string {
  const rule = new RegExp(SLUG_PATTERN).test(slug) ? '' : `: ${resource} slugs are ${SLUG_RULE}`;
  const normalised = slug
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const meant = normalised && isKnown(normalised) ? ` Did you mean "${normalised}"?` : '';
  return `No ${resource} has slug "${slug.slice(0, 80)}"${rule}.${meant} List ${resource} slugs with ${listedBy(SLUG_LISTINGS[resource])}.`;
}

/** a slug argument's description: its form and where its values are listed */
export function slugArgumentDescription(resource: SlugResource): string {
  return `${resource} slug, as ${listedBy(SLUG_LISTINGS[resource])} lists them: ${SLUG_RULE}, matched exactly`;
}

/** where a fund's dividend rounds are listed with their epochs */
const roundsOf = (fundSlug: string): Listing => ({
  rest: `GET /v1/funds/${fundSlug}/dividends`,
  graphql: `{ fund(slug: "${fundSlug}") { dividends { items { epoch } nextCursor } } }`,
});

export function noDividendRoundMessage(fundSlug: string, epoch: number): string {
  return `Fund ${fundSlug} has no dividend round for epoch ${epoch}; list the epochs of its rounds with ${listedBy(roundsOf(fundSlug))}.`;
}

export function notARecipientMessage(address: string, epoch: number, fundSlug: string): string {
  return `Address ${address} is not a recipient of dividend round ${epoch} of fund ${fundSlug}: the round's distribution has no leaf for it. Check the address, or list the fund's rounds with ${listedBy(roundsOf(fundSlug))} and ask for another epoch.`;
}

export function checkRange(argument: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw badInput(argument, `${argument} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

/** Validates an address and returns it lowercase, the form the subgraph stores. */
export function checkAddress(argument: string, value: string): `0x${string}` {
  if (!new RegExp(ADDRESS_PATTERN).test(value)) {
    throw badInput(argument, `${argument} must be a 0x-prefixed 20-byte hex address (40 hex digits).`);
  }
  return value.toLowerCase() as `0x${string}`;
}

/** The value of a closed list that `value` spells in another case, if any: the one a client meant. */
export function sameButCase(values: readonly string[], value: string): string | undefined {
  return values.find((candidate) => candidate.toLowerCase() === value.toLowerCase());
}

/**
 * An event name of the stream's closed list (event-names.ts), as written; another case of one is
 * named, since an agent guessing the case would otherwise read an empty page as "no such events".
 */
export function checkEventName(argument: string, value: string): string {
  if (EVENT_NAMES.includes(value)) return value;
  const folded = sameButCase(EVENT_NAMES, value);
  throw badInput(
    argument,
    `${argument} must be one of these event names, exactly as written (case-sensitive): ${EVENT_NAMES.join(', ')}; got '${value.slice(0, 80)}'.${folded ? ` Did you mean '${folded}'?` : ''}`,
  );
}

/** A page's `limit` argument (PAGE_LIMIT's default when absent), checked against PAGE_LIMIT. */
export function pageLimit(limit: number | null | undefined): number {
  return checkRange('limit', limit ?? PAGE_LIMIT.default, PAGE_LIMIT.minimum, PAGE_LIMIT.maximum);
}

/**
 * The page of `rows`, which were asked for with `limit + 1` so that the extra row tells whether more
 * follow: the first `limit`, and the cursor below the last of them when more do.
 */
export function pageOf<T>(
  rows: T[],
  limit: number,
  cursorOf: (last: T) => string,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}

/** Opaque cursors: base64url of "<kind>:<integer>", the sort key to continue below. */
export function encodeCursor(kind: 'd' | 'e', key: bigint | number): string {
  return Buffer.from(`${kind}:${key}`).toString('base64url');
}

/**
 * The sort key a cursor continues below. A key above `max` (the largest this endpoint's keys reach)
 * cannot be one it returned, and is bad input like any other forged cursor.
 */
export function decodeCursor(argument: string, kind: 'd' | 'e', cursor: string, max?: bigint): bigint {
  const decoded = new RegExp(CURSOR_PATTERN).test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const match = /^([de]):(\d{1,30})$/.exec(decoded);
  const key = match && match[1] === kind ? BigInt(match[2] as string) : null;
  if (key === null || (max !== undefined && key > max)) {
    throw badInput(argument, `${argument} must be a nextCursor value returned by this endpoint.`);
  }
  return key;
}
