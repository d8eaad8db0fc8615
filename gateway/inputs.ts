// Argument rules shared by the GraphQL resolvers and the REST route table, so both surfaces
// accept exactly the same values and the same bounds are documented in openapi.json; and the
// words of a lookup that finds nothing, which name where the valid values are listed on both
// surfaces, since the REST routes answer with the gateway's own message.
import { createHash } from 'node:crypto';
import { badInput } from './errors.ts';
import { EVENT_NAMES, nameMeant } from './event-names.ts';
import type { ChainLoaders } from './sources/chain.ts';
import { NodesBehindError } from './sources/subgraph.ts';

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

/** A registry entry as a slug lookup sees it: its slug and its display names. */
export interface NamedEntry {
  slug: string;
  name: string;
  nameCn?: string;
}

/** The slug of the entry whose display name (any case) is `value`, if any. */
export function slugNamed(entries: Iterable<NamedEntry>, value: string): string | undefined {
  const wanted = value.trim().toLowerCase();
  for (const entry of entries) {
    if (entry.name.toLowerCase() === wanted || entry.nameCn?.toLowerCase() === wanted) return entry.slug;
  }
  return undefined;
}

/**
 * Why no `resource` has this slug, and where the slugs are listed. A value that breaks the slug
 * form gets the rule, and the slug a client meant, if any of `registered` (the registry's entries
 * by slug): the registered slug it normalises to (lowercase, single hyphens), for a client that
 * guessed the case or the separators, or the slug of the entry whose display name it is, for one
 * that took the name for the slug.
 */
export function unknownSlugMessage(
  resource: SlugResource,
  slug: string,
  registered: ReadonlyMap<string, NamedEntry> = new Map(),
): string {
  const rule = new RegExp(SLUG_PATTERN).test(slug) ? '' : `: ${resource} slugs are ${SLUG_RULE}`;
  const normalised = slug
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const slugMeant =
    normalised && registered.has(normalised) ? normalised : slugNamed(registered.values(), slug);
  const meant = slugMeant ? ` Did you mean "${slugMeant}"?` : '';
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

/** The rule an address follows, in the words both surfaces state it. */
export const ADDRESS_RULE = 'a 0x-prefixed address of 40 hex digits';

/** The rule a cursor argument follows, in GraphQL's words (a REST route names its endpoint). */
export const CURSOR_RULE = 'the nextCursor of a previous page, exactly as returned';

/** The rule a slug argument follows: where its values are listed, and its form. */
export const slugRule = (resource: SlugResource): string =>
  `a ${resource} slug from ${listedBy(SLUG_LISTINGS[resource])} (${SLUG_RULE})`;

/**
 * Why an optional input given empty is refused, in the words both surfaces use: an empty value is
 * a mistake, not an absence (`cursor=` would restart at the first page, `eventName=` list every
 * event). `subject` names the input as its surface does (REST "Parameter 'eventName'", GraphQL
 * "eventName"), `rule` states what it takes.
 */
export function emptyValueMessage(subject: string, rule: string): string {
  return `${subject} is empty: give it a value (${rule}) or leave it out.`;
}

/**
 * An optional string argument's value: undefined when it is absent (not given, or null); an empty
 * string is BAD_INPUT in emptyValueMessage's words, as REST refuses an empty parameter.
 */
export function optionalArgument(
  argument: string,
  value: string | null | undefined,
  rule: string,
): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (value === '') throw badInput(argument, emptyValueMessage(argument, rule));
  return value;
}

/** The rule an event name follows, in the words both surfaces state it. */
export const EVENT_NAME_RULE = `one of these event names, exactly as written (case-sensitive): ${EVENT_NAMES.join(', ')}`;

/**
 * Why `value` is none of `names`, a closed list matched exactly, in the words both surfaces use:
 * `subject` names the input as its surface does (REST "Parameter 'eventName'", GraphQL
 * "eventName"), `rule` states the list. Another spelling of a listed name (another case,
 * snake_case, kebab-case, words) gets the name meant, since an agent guessing the spelling would
 * otherwise read an empty page as "no such events".
 */
export function notListedMessage(
  subject: string,
  rule: string,
  names: readonly string[],
  value: string,
): string {
  const meant = nameMeant(names, value);
  const hint = meant ? ` Did you mean '${meant}'? Names are case-sensitive and written as listed.` : '';
  return `${subject} must be ${rule}; got '${value.slice(0, 80)}'.${hint}`;
}

/** An event name of the stream's closed list (event-names.ts), as written. */
export function checkEventName(argument: string, value: string): string {
  if (EVENT_NAMES.includes(value)) return value;
  throw badInput(argument, notListedMessage(argument, EVENT_NAME_RULE, EVENT_NAMES, value));
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

/**
 * Opaque cursors: base64url of "<kind><form>:<field>:<field>...:<check>", what the next page continues
 * from. An events cursor ('e') holds the sort key to continue below, whose block is the one the next
 * page must be read at or past (sources/subgraph.ts, blockOfSortKey), and the filters of its listing
 * (eventsCursor). A dividends cursor ('d') is made by dividendsCursor. Any position of the right form
 * is one a page could end at, so a cursor cut short or with a character altered on its way back would
 * be followed, skipping or repeating items without a word, or ending the stream early: the check, the
 * start of a SHA-256 of the rest, tells such a cursor from one this service wrote. It guards against
 * damage, not forgery (a forged cursor shows its maker nothing they could not ask for), so it needs
 * no secret the replicas share. The form, a digit, marks what a cursor holds: no cursor of one form,
 * cut short or altered, reads as one of the earlier forms (EARLIER_FORMS).
 */
type CursorKind = 'd' | 'e';

/** the form each kind of cursor is written in: events cursors carry their filters since form 3 */
const CURSOR_FORMS: Record<CursorKind, string> = { e: '3', d: '2' };

/** what each kind of cursor pages, as both surfaces name it, and the items it pages */
const CURSOR_KINDS = {
  e: { endpoint: 'GET /v1/events (or Query.events)', items: 'events' },
  d: { endpoint: 'GET /v1/funds/{slug}/dividends (or Fund.dividends)', items: 'rounds' },
} as const satisfies Record<CursorKind, { endpoint: string; items: string }>;

/**
 * The forms cursors of each kind had before: without a check (matched on the text), and, for events,
 * the form 2 cursor, checked but bound to no filters, which this version cannot tell from one of the
 * unfiltered stream (matched on its head, once its check holds: an altered form 3 cursor is not one).
 */
const EARLIER_FORMS: Record<CursorKind, RegExp[]> = {
  e: [/^e:\d{1,30}$/],
  d: [/^d:\d{1,30}$/, /^d:[0-9a-f]{8}:\d{1,10}:\d{1,10}$/],
};
const EARLIER_CHECKED_HEADS: Record<CursorKind, string[]> = { e: ['e2'], d: [] };

const checkOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

export function encodeCursor(kind: CursorKind, ...fields: (bigint | number | string)[]): string {
  const text = [`${kind}${CURSOR_FORMS[kind]}`, ...fields].join(':');
  return Buffer.from(`${text}:${checkOf(text)}`).toString('base64url');
}

/** A cursor refused as none this service returned to `kind`'s endpoint. */
const notReturned = (argument: string, kind: CursorKind) =>
  badInput(
    argument,
    `${argument} is not a nextCursor of ${CURSOR_KINDS[kind].endpoint} as it was returned: it is cut short, altered or made up. Pass nextCursor back exactly as returned, or omit ${argument} to start again from the newest ${CURSOR_KINDS[kind].items}.`,
  );

/** A cursor refused as one of an earlier version, which this one no longer reads. */
const ofEarlierForm = (argument: string, kind: CursorKind) =>
  badInput(
    argument,
    `${argument} is a cursor of an earlier version of this service, which this version no longer reads; start again from the newest ${CURSOR_KINDS[kind].items}: omit ${argument}.`,
  );

/**
 * The fields of a cursor of `kind`, whose check holds. A cursor of the other kind is refused naming
 * the endpoint it pages, one of an earlier form asking to start again, anything else as none this
 * service returned.
 */
function cursorFields(kind: CursorKind, argument: string, cursor: string): string[] {
  const bytes = new RegExp(CURSOR_PATTERN).test(cursor) ? Buffer.from(cursor, 'base64url') : Buffer.alloc(0);
  const text = bytes.toString();
  const [head, ...fields] = text.split(':');
  const check = fields.pop();
  // base64url spells the same bytes more than one way (the unused bits of the last character): only
  // the spelling this service writes is its cursor
  const written = bytes.toString('base64url') === cursor;
  if (written && check === checkOf(text.slice(0, text.lastIndexOf(':')))) {
    const earlier = EARLIER_CHECKED_HEADS[kind].includes(head ?? '');
    const found = (Object.keys(CURSOR_KINDS) as CursorKind[]).find(
      (k) => head === `${k}${CURSOR_FORMS[k]}` || EARLIER_CHECKED_HEADS[k].includes(head ?? ''),
    );
    if (found === kind) {
      if (earlier) throw ofEarlierForm(argument, kind);
      return fields;
    }
    if (found) {
      throw badInput(
        argument,
        `${argument} is a nextCursor of ${CURSOR_KINDS[found].endpoint}, not of ${CURSOR_KINDS[kind].endpoint}: pass it there, or omit ${argument} to start again from the newest ${CURSOR_KINDS[kind].items}.`,
      );
    }
  }
  if (EARLIER_FORMS[kind].some((form) => form.test(text))) throw ofEarlierForm(argument, kind);
  throw notReturned(argument, kind);
}

/** A cursor field holding a GraphQL Int (an epoch, a block number), or null. */
function intField(text: string | undefined): number | null {
  return text !== undefined && /^\d{1,10}$/.test(text) && Number(text) <= MAX_INT ? Number(text) : null;
}

/**
 * The filters of an events listing, as checked (event-filters.ts): addresses lowercase, the fund as
 * its vault. An events cursor is bound to them: followed under other filters, it would answer
 * another listing from a position of this one, as if that were the next page of this one.
 */
export interface EventsFilters {
  fund?: string;
  contract?: string;
  eventName?: string;
  fromBlock?: number;
  toBlock?: number;
}

/** the filters in the order they are named and hashed */
const EVENTS_FILTER_NAMES = ['fund', 'contract', 'eventName', 'fromBlock', 'toBlock'] as const;

/** what a request sending an events cursor repeats of the request that returned it, in both surfaces' words */
export const SAME_EVENTS_FILTERS = `the same filters (${EVENTS_FILTER_NAMES.join(', ')}: each given with the same value, or left out, as there; limit may change)`;

const givenFilters = (filters: EventsFilters) =>
  EVENTS_FILTER_NAMES.filter((name) => filters[name] !== undefined);

/**
 * A short hash of the filters given, which binds an events cursor to its listing; none for the
 * unfiltered stream, whose cursors are as they were before filters were bound.
 */
function filtersTag(filters: EventsFilters): string | undefined {
  const given = givenFilters(filters);
  if (given.length === 0) return undefined;
  const text = given.map((name) => `${name}=${filters[name]}`).join('&');
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** The cursor continuing, below the event of `sortKey`, the listing of `filters`. */
export function eventsCursor(sortKey: bigint, filters: EventsFilters): string {
  const tag = filtersTag(filters);
  return tag === undefined ? encodeCursor('e', sortKey) : encodeCursor('e', sortKey, tag);
}

/** An events cursor refused as one returned for a listing of other filters than `filters`. */
function forOtherFilters(argument: string, cursorFiltered: boolean, filters: EventsFilters) {
  const given = givenFilters(filters);
  const rule = 'a cursor continues only the listing that returned it';
  if (!cursorFiltered) {
    return badInput(
      argument,
      `${argument} was returned for a request with no filter, and this one filters by ${given.join(', ')}; ${rule}. Leave those filters out to continue it, or omit ${argument} to start again from the newest events they match.`,
    );
  }
  const these = given.length ? `filters by ${given.join(', ')}` : 'gives no filter';
  return badInput(
    argument,
    `${argument} was returned for a request with other filters than this one (which ${these}); ${rule}. Send it with ${SAME_EVENTS_FILTERS} as the request that returned it, or omit ${argument} to start again from the newest events.`,
  );
}

/**
 * The sort key an events cursor continues below, when it was returned for a request of `filters`
 * (none when left out). Its block (the upper 32 bits) and log index (the lower 32) are GraphQL
 * Ints, as an event's blockNumber and logIndex are: a key past either is no event's, so no cursor
 * this endpoint returned.
 */
export function decodeEventsCursor(argument: string, cursor: string, filters: EventsFilters = {}): bigint {
  const [key, tag, ...rest] = cursorFields('e', argument, cursor);
  const formed =
    key !== undefined &&
    /^\d{1,30}$/.test(key) &&
    (tag === undefined || /^[0-9a-f]{8}$/.test(tag)) &&
    rest.length === 0;
  const sortKey = formed ? BigInt(key) : null;
  if (sortKey === null || sortKey >> 32n > MAX_INT || (sortKey & 0xffff_ffffn) > MAX_INT) {
    throw notReturned(argument, 'e');
  }
  if (tag !== filtersTag(filters)) throw forOtherFilters(argument, tag !== undefined, filters);
  return sortKey;
}

/** A short hash of a fund's vault, which binds a dividends cursor to the fund it pages. */
const fundTag = (vault: string) => createHash('sha256').update(vault.toLowerCase()).digest('hex').slice(0, 8);

/**
 * Where a fund's dividends page ends: the epoch to continue below, and the block the page was read
 * at, which the next page must be read at or past. A round of a lower epoch may be posted after one
 * of a higher epoch, so only the block of the whole page tells what the next page must hold.
 */
interface DividendsPosition {
  epoch: number;
  block: number;
}

export function dividendsCursor(vault: string, { epoch, block }: DividendsPosition): string {
  return encodeCursor('d', fundTag(vault), epoch, block);
}

/**
 * The position a dividends cursor of `fund` holds. A cursor of another of `funds` is refused naming
 * the fund it belongs to: continued here, it would skip or repeat rounds without a word.
 */
export function decodeDividendsCursor(
  argument: string,
  cursor: string,
  fund: { slug: string; vault: string },
  funds: readonly { slug: string; vault: string }[],
): DividendsPosition {
  const [tag, epochField, blockField, ...rest] = cursorFields('d', argument, cursor);
  const [epoch, block] = [intField(epochField), intField(blockField)];
  if (tag === undefined || epoch === null || block === null || rest.length > 0) {
    throw notReturned(argument, 'd');
  }
  if (tag !== fundTag(fund.vault)) {
    const owner = funds.find((f) => fundTag(f.vault) === tag);
    if (!owner) throw notReturned(argument, 'd');
    throw badInput(
      argument,
      `${argument} pages the dividend rounds of fund ${owner.slug}, not ${fund.slug}: pass it to GET /v1/funds/${owner.slug}/dividends (or fund(slug: "${owner.slug}") { dividends }), or omit ${argument} to start at the newest rounds of ${fund.slug}.`,
    );
  }
  return { epoch, block };
}

/**
 * `read`, a page read at or past `cursorBlock`, the block the page before it was read at (from the
 * cursor in `argument`). When every query node asked has not indexed that block, the subgraph
 * source fails with a 503 saying to retry with the same cursor: behind a load balancer, another
 * replica of this service may have read that page from a node ahead of the ones reached now, and
 * the nodes catch up within seconds. That holds only for a block the chain has made: no node
 * indexes past the chain head, so a cursor whose block is beyond it was read by no node (it is
 * forged, or of another chain, or of a devnet since restarted), and a retry would wait forever.
 * Such a cursor is bad input, asking to start again without it. The head is asked of the chain
 * RPC only then, on the way to a 503, and only where one is configured: without it the two cannot
 * be told apart, and the 503 stands. An RPC node lagging the one the indexer follows could put a
 * genuine cursor of the newest page past the head it answers; its client then starts again from
 * the newest page, a lost position rather than a wrong answer.
 */
export async function pageAfterCursor<T>(
  chain: ChainLoaders | undefined,
  argument: string,
  cursorBlock: number | undefined,
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (cursorBlock === undefined || !chain) throw error;
    if (!(error instanceof NodesBehindError) || error.floor.reason !== 'cursor') throw error;
    // a head the RPC cannot tell now leaves the 503 as it was
    const head = await chain.headBlock().catch(() => {
      throw error;
    });
    if (BigInt(cursorBlock) <= head) throw error;
    throw badInput(
      argument,
      `${argument} continues from block ${cursorBlock}, which the chain has not reached (its head is block ${head}), so it is no cursor this service returned. Start again from the first page: omit ${argument}.`,
    );
  }
}
