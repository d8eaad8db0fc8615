// The subgraph source: the gateway's only path to indexed data, whether the endpoint is a
// hosted graph-node or the embedded indexer. It speaks the graph-node query dialect
// (collections with `where`/`orderBy`/`first`, `_meta`) over HTTP with graphql-request.
// Every query also asks for `_meta`, so each request knows which block its data reflects.
// A query never reads a block older than the newest this process has seen (graph-node's
// `block: { number_gte }`): behind a load balancer, query nodes reading replicas at different
// heights would otherwise show data going back and forth, and a cursor's next page could come from
// a node that has not indexed the block its first page was read at, skipping what lies between.
// A node behind answers an error instead; the query is asked once more (the balancer may pick
// another node), then fails with UPSTREAM_UNAVAILABLE saying the nodes are behind.
// Entity fields say `subgraphError: allow`: a subgraph with indexing errors still has its data
// served, flagged in freshness (health says `degraded`), rather than every request failing.
// Loaders are created per request: a request's lookups of funds or rounds are batched into
// one upstream query sized with `first`, and nothing is shared between requests.
// Each answer is read whole within SUBGRAPH_TIMEOUT_MS and at most MAX_ANSWER_BYTES (graphNodeFetch).
import DataLoader from 'dataloader';
import { ClientError, GraphQLClient } from 'graphql-request';
import { answerTooLarge, boundedFetch, excerpt } from '../../common/bounded-fetch.ts';
import { httpEndpoint } from '../../common/url.ts';
import { GatewayError, upstreamUnavailable } from '../errors.ts';

export interface SubgraphConfig {
  url: string;
  timeoutMs: number;
  /** largest `first` (and DataLoader batch) sent in one query; graph-node's default cap is 1000 */
  maxBatch: number;
  /** injectable for instrumentation (tests count upstream requests); defaults to global fetch */
  fetch?: typeof fetch;
}

interface SubgraphMeta {
  block: { number: number; hash: string | null; timestamp: number | null };
  /** the deployment id that answered: a new version deployed under the same name shows here */
  deployment: string | null;
  hasIndexingErrors: boolean;
}

/**
 * The subgraph as one reading of its `_meta`: its latest block, whose hash tells a block replaced
 * by a reorg from the one it replaced, and whether it reports indexing errors.
 */
export interface IndexedState {
  number: number;
  hash: string | null;
  hasIndexingErrors: boolean;
}

/**
 * The lowest block a query may read, and why: the newest block an answer to this process showed,
 * or the block a cursor's page was read at, whichever is higher.
 */
interface BlockFloor {
  number: number;
  reason: 'seen' | 'cursor';
}

/** What one request's data reflects: the lowest indexed block any of its queries saw. */
export class Freshness {
  indexedBlock: number | null = null;
  indexedHash: string | null = null;
  indexedAt: number | null = null;
  deployment: string | null = null;
  hasIndexingErrors = false;

  record(meta: SubgraphMeta): void {
    if (this.indexedBlock === null || meta.block.number < this.indexedBlock) {
      this.indexedBlock = meta.block.number;
      this.indexedHash = meta.block.hash;
      this.indexedAt = meta.block.timestamp;
      this.deployment = meta.deployment;
    }
    this.hasIndexingErrors ||= meta.hasIndexingErrors;
  }
}

/**
 * `_meta`, read at or past block `minimum`. graph-node runs consecutive top-level fields with the
 * same `block` argument together, under `subgraphError: deny` unless every one of them says
 * `allow`, and `_meta` has no such argument (graphql/src/execution/query.rs, `block_constraint`):
 * asked with the entity field, `_meta` would withhold the entity data of a subgraph with indexing
 * errors. Beside an entity field it takes `number_gte: 0`, a `block` of its own that still means
 * the latest block; the entity field carries the floor (or nothing while there is none).
 */
const metaField = (minimum: number) =>
  `_meta(block: { number_gte: ${minimum} }) { block { number hash timestamp } deployment hasIndexingErrors }`;

/** graph-node's words for a `block` its node has not indexed yet (store/src/deployment.rs, block_queryable). */
const NOT_YET_INDEXED = /has only indexed up to block number \d+/;

/** The one error graph-node adds to the data of a subgraph with indexing errors. */
const INDEXING_ERROR = 'indexing_error';

/**
 * What an answer's `errors` say: nothing, only graph-node's `indexing_error` (the data is
 * served, flagged), that the node has not indexed the block asked for (`behind`), or anything
 * else (the request fails).
 */
function errorsKind(errors: unknown): 'none' | 'indexing' | 'behind' | 'other' {
  if (errors === undefined || (Array.isArray(errors) && errors.length === 0)) return 'none';
  if (!Array.isArray(errors)) return 'other';
  const messages = errors.map((e) => (e as { message?: unknown } | null)?.message);
  if (messages.every((m) => m === INDEXING_ERROR)) return 'indexing';
  if (messages.some((m) => typeof m === 'string' && NOT_YET_INDEXED.test(m))) return 'behind';
  return 'other';
}

/**
 * The 503 for a query every try of which reached a node that has not indexed `floor` yet. Its
 * words are the service's own (the upstream's stay in the cause), and say why the block is needed
 * and that a retry is the remedy: the nodes catch up within seconds. It keeps the floor, so that a
 * resolver can tell a cursor's block no node will ever reach (inputs.ts, pageAfterCursor).
 */
export class NodesBehindError extends GatewayError {
  constructor(
    readonly floor: BlockFloor,
    cause: unknown,
  ) {
    const [needed, retry] =
      floor.reason === 'cursor'
        ? [`block ${floor.number}, which the cursor's page was read at`, ' with the same cursor']
        : [`block ${floor.number}, the newest this service has read`, ''];
    super(
      'UPSTREAM_UNAVAILABLE',
      `The subgraph's query nodes are behind: the node that answered has not indexed ${needed}, and older data is not served in its place. Retry in a few seconds${retry}.`,
      { upstream: 'subgraph', cause },
    );
  }
}

/**
 * Renders a `where` object as a GraphQL input literal. Values are inlined rather than sent
 * as variables because graph-node's generated filter types differ per field kind (String,
 * Bytes, BigInt); every value reaching here was validated by the caller.
 */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (typeof value === 'string') return JSON.stringify(value);
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{ ${entries.map(([k, v]) => `${k}: ${literal(v)}`).join(', ')} }`;
  }
  throw new TypeError(`cannot render ${String(value)} as a GraphQL literal`);
}

/**
 * A field's expected JSON type in the subgraph's answer ('?': may be null). BigInt fields
 * arrive as decimal strings ('uint'); `args` is JSON text ('json'); `oneOf`: an enum's values.
 */
type FieldRule =
  | 'string'
  | 'string?'
  | 'uint'
  | 'uint?'
  | 'json'
  | 'int'
  | 'boolean'
  | 'strings'
  | { oneOf: readonly string[] }
  | EntityRule;
/**
 * A related entity, or null. `from`: the subgraph's name for the field where the row's differs
 * (the query asks for it under the row's name, as an alias).
 */
interface EntityRule {
  row: RowShape;
  from?: string;
}
type RowShape = Readonly<Record<string, FieldRule>>;

/** The value a rule lets through. */
type ValueOf<R> = R extends 'string' | 'uint' | 'json'
  ? string
  : R extends 'string?' | 'uint?'
    ? string | null
    : R extends 'int'
      ? number
      : R extends 'boolean'
        ? boolean
        : R extends 'strings'
          ? string[]
          : R extends { oneOf: readonly (infer V)[] }
            ? V
            : R extends { row: infer S extends RowShape }
              ? RowOf<S> | null
              : never;

/** A row as its shape lets it through: the shapes below are the one description of each entity. */
type RowOf<S extends RowShape> = { -readonly [F in keyof S]: ValueOf<S[F]> };

/** The NavStatus values of the subgraph schema, in lifecycle order. */
export const NAV_STATUSES = ['Draft', 'PendingVerification', 'Verified', 'Published'] as const;

const NAV_SHAPE = {
  epoch: 'int',
  status: { oneOf: NAV_STATUSES },
  navPerShare: 'uint',
  totalAssets: 'uint',
  totalSupply: 'uint',
  publishedAt: 'uint?',
  publishedTxHash: 'string?',
} as const satisfies RowShape;

const FUND_SHAPE = {
  id: 'string',
  slug: 'string',
  closed: 'boolean',
  pausedModules: 'strings',
  /** the record of the highest Published epoch (the subgraph's `latestPublishedNav`) */
  latestNav: { row: NAV_SHAPE, from: 'latestPublishedNav' },
  /** the record of the highest epoch drafted, whatever its status (the subgraph's `latestNav`) */
  latestRecordedNav: { row: NAV_SHAPE, from: 'latestNav' },
} as const satisfies RowShape;

const DIVIDEND_ROUND_SHAPE = {
  id: 'string',
  epoch: 'int',
  merkleRoot: 'string',
  total: 'uint',
  leafCount: 'int',
  uri: 'string',
  claimedCount: 'int',
  claimedAmount: 'uint',
  postedAtBlock: 'uint',
  postedAt: 'uint',
  postedTxHash: 'string',
} as const satisfies RowShape;

const PROTOCOL_EVENT_SHAPE = {
  id: 'string',
  contract: 'string',
  eventName: 'string',
  blockNumber: 'uint',
  timestamp: 'uint',
  txHash: 'string',
  logIndex: 'uint',
  sortKey: 'uint',
  args: 'json',
  /** the vault of the fund the event concerns, lowercase; null for none */
  fund: 'string?',
} as const satisfies RowShape;

export type NavRow = RowOf<typeof NAV_SHAPE>;
export type FundRow = RowOf<typeof FUND_SHAPE>;
export type DividendRoundRow = RowOf<typeof DIVIDEND_ROUND_SHAPE>;
export type ProtocolEventRow = RowOf<typeof PROTOCOL_EVENT_SHAPE>;

/**
 * The rows each collection must hold, which are also the fields its queries ask for (selection()),
 * so that nothing is asked that is not checked. An answer of another shape (a proxy's error page, a
 * different schema) is the upstream's fault: it becomes UPSTREAM_UNAVAILABLE, never a crash
 * reported as an internal error nor a wrong body.
 */
const COLLECTION_SHAPES = {
  funds: FUND_SHAPE,
  navRecords: NAV_SHAPE,
  dividendRounds: DIVIDEND_ROUND_SHAPE,
  protocolEvents: PROTOCOL_EVENT_SHAPE,
} as const;
type Collection = keyof typeof COLLECTION_SHAPES;
type CollectionRow<C extends Collection> = RowOf<(typeof COLLECTION_SHAPES)[C]>;

/** The GraphQL selection asking for a shape's fields, a renamed entity under its alias. */
function selection(shape: RowShape): string {
  return Object.entries(shape)
    .map(([field, rule]) => {
      if (typeof rule === 'string' || 'oneOf' in rule) return field;
      const asked = rule.from === undefined ? field : `${field}: ${rule.from}`;
      return `${asked} { ${selection(rule.row)} }`;
    })
    .join(' ');
}

/** Each collection's selection, built once: every query of the collection asks for it. */
const COLLECTION_FIELDS = Object.fromEntries(
  Object.entries(COLLECTION_SHAPES).map(([collection, shape]) => [collection, selection(shape)]),
) as Record<Collection, string>;

const isUint = (v: unknown) => typeof v === 'string' && /^\d{1,78}$/.test(v);

function isJsonObject(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

function fits(value: unknown, shape: RowShape): boolean {
  if (!value || typeof value !== 'object') return false;
  const row = value as Record<string, unknown>;
  return Object.entries(shape).every(([field, rule]) => {
    const v = row[field];
    if (rule === 'string') return typeof v === 'string';
    if (rule === 'string?') return v === null || typeof v === 'string';
    if (rule === 'uint') return isUint(v);
    if (rule === 'uint?') return v === null || isUint(v);
    if (rule === 'json') return typeof v === 'string' && isJsonObject(v);
    if (rule === 'int') return Number.isSafeInteger(v);
    if (rule === 'boolean') return typeof v === 'boolean';
    if (rule === 'strings') return Array.isArray(v) && v.every((x) => typeof x === 'string');
    if ('oneOf' in rule) return typeof v === 'string' && rule.oneOf.includes(v);
    return v === null || fits(v, rule.row);
  });
}

/** The rows of `collection` in an answer, checked against the collection's shape. */
function checkedRows<C extends Collection>(collection: C, data: Record<string, unknown>): CollectionRow<C>[] {
  const rows = data[collection];
  if (!Array.isArray(rows) || !rows.every((row) => fits(row, COLLECTION_SHAPES[collection]))) {
    throw upstreamUnavailable('subgraph', new Error(`the subgraph answered malformed ${collection}`));
  }
  return rows as CollectionRow<C>[];
}

/**
 * Whether a failed query is worth one more try: a 5xx or 429, or a network failure (fetch's
 * TypeError). A timeout (AbortSignal.timeout's TimeoutError) is not: it spent the whole
 * SUBGRAPH_TIMEOUT_MS, and a second try would make the client wait twice that for its 503. Nor is an
 * answer past MAX_ANSWER_BYTES: an endpoint answering that much to a query answers so again.
 */
function isTransient(error: unknown): boolean {
  if (error instanceof ClientError) return error.response.status >= 500 || error.response.status === 429;
  return error instanceof Error && error.name !== 'TimeoutError' && !answerTooLarge(error);
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Whether `body` holds a JSON object, as far as its first byte other than whitespace tells (`{`). */
const opensObject = (body: Uint8Array) => body.find((byte) => !JSON_WHITESPACE.has(byte)) === 0x7b;

/**
 * The fetch graphql-request sends each query to a graph-node endpoint (`upstream`: the subgraph, the
 * indexing status API) with: the answer read whole within the query's signal and at most
 * MAX_ANSWER_BYTES. An answer graphql-request can only refuse (an HTTP error, a body that is not
 * JSON or no JSON object) it quotes whole in its error, so that one reaches it cut to an excerpt: a
 * proxy's 50 MiB page made a log line of 50 MB.
 */
export function graphNodeFetch(upstream: string, fetchFn?: typeof fetch): typeof fetch {
  return boundedFetch(upstream, {
    fetch: fetchFn,
    quotedOnly: (response, body) =>
      !response.ok || !/json/i.test(response.headers.get('content-type') ?? '') || !opensObject(body),
  });
}

/** One answer as received: its data (missing or null if the subgraph sent none) and its errors. */
interface SubgraphAnswer<T> {
  data: T | null | undefined;
  errors?: unknown;
}

export interface SubgraphClient {
  /**
   * Runs `document`, one top-level collection field (or none), with `_meta` added beside it.
   * `asked`: what the field's `block: { number_gte }` asked for (see floor()), which a node that
   * has not indexed it refuses; the answer's `_meta` tells the block the data reflects.
   */
  query<T>(document: string, freshness: Freshness, asked?: BlockFloor): Promise<T & { _meta: SubgraphMeta }>;
  /**
   * The block a query must read at or past now: the newest this process has seen, or `cursorBlock`
   * when that is higher. Undefined before any answer (block 0 included), when any block will do.
   */
  floor(cursorBlock?: number): BlockFloor | undefined;
  /** the subgraph's latest block and errors flag (its `_meta` alone), at or past floor() */
  indexedBlock(): Promise<IndexedState>;
  readonly config: SubgraphConfig;
}

export function createSubgraphClient(config: SubgraphConfig): SubgraphClient {
  // errorPolicy 'all': an answer's GraphQL errors come back with its data instead of being
  // thrown, so that graph-node's `indexing_error` can be told apart from real failures
  // a URL with credentials, which fetch refuses, sends them as Basic authorization instead
  const endpoint = httpEndpoint(config.url);
  const client = new GraphQLClient(endpoint.url, {
    errorPolicy: 'all',
    headers: endpoint.headers,
    fetch: graphNodeFetch('subgraph', config.fetch),
  });
  /** the newest block any answer to this process showed */
  let newestSeen = 0;
  const floor = (cursorBlock = 0): BlockFloor | undefined => {
    if (cursorBlock > newestSeen) return { number: cursorBlock, reason: 'cursor' };
    return newestSeen > 0 ? { number: newestSeen, reason: 'seen' } : undefined;
  };

  async function once<T>(document: string): Promise<SubgraphAnswer<T>> {
    return client.rawRequest<T>({ query: document, signal: AbortSignal.timeout(config.timeoutMs) });
  }
  /** One try: a transient failure is asked again once. */
  async function send<T>(document: string): Promise<SubgraphAnswer<T>> {
    try {
      try {
        return await once<T>(document);
      } catch (error) {
        if (!isTransient(error)) throw error;
        return await once<T>(document);
      }
    } catch (error) {
      throw upstreamUnavailable('subgraph', error);
    }
  }
  /**
   * Sends a document that asks for `_meta` (its entity field, if any, at or past `asked`), and
   * checks and records the answer.
   */
  async function ask<T>(
    document: string,
    freshness: Freshness,
    asked: BlockFloor | undefined,
  ): Promise<T & { _meta: SubgraphMeta }> {
    type Answer = SubgraphAnswer<T & { _meta: SubgraphMeta }>;
    let answer: Answer = await send(document);
    // a load balancer may send the second try to a node that has the block
    if (errorsKind(answer.errors) === 'behind') answer = await send(document);
    const { data, errors } = answer;
    const kind = errorsKind(errors);
    if (kind === 'behind' && asked)
      throw new NodesBehindError(asked, new Error(excerpt(JSON.stringify(errors))));
    if (kind !== 'none' && kind !== 'indexing')
      throw upstreamUnavailable(
        'subgraph',
        new Error(`the subgraph answered errors: ${excerpt(JSON.stringify(errors))}`),
      );
    if (typeof data?._meta?.block?.number !== 'number')
      throw upstreamUnavailable('subgraph', new Error('response without _meta'));
    // graph-node's answer to a field left at `subgraphError: deny`: nothing but `_meta`
    if (kind === 'indexing' && Object.keys(data).every((field) => field === '_meta'))
      throw upstreamUnavailable('subgraph', new Error('the subgraph withheld its data for indexing errors'));
    newestSeen = Math.max(newestSeen, data._meta.block.number);
    freshness.record({
      ...data._meta,
      deployment: data._meta.deployment ?? null,
      hasIndexingErrors: data._meta.hasIndexingErrors || kind === 'indexing',
    });
    return data;
  }

  return {
    config,
    query<T>(document: string, freshness: Freshness, asked?: BlockFloor) {
      return ask<T>(document.replace(/\}\s*$/, ` ${metaField(0)} }`), freshness, asked);
    },
    floor,
    async indexedBlock(): Promise<IndexedState> {
      const freshness = new Freshness();
      const now = floor();
      // `_meta` alone, so it can carry the floor itself
      await ask(`{ ${metaField(now?.number ?? 0)} }`, freshness, now);
      return {
        number: freshness.indexedBlock!,
        hash: freshness.indexedHash,
        hasIndexingErrors: freshness.hasIndexingErrors,
      };
    },
  };
}

export interface SubgraphLoaders {
  /** keyed by lowercase vault address */
  fund: DataLoader<string, FundRow | null>;
  /** keyed by round id `<vault>-<epoch>` */
  dividendRound: DataLoader<string, DividendRoundRow | null>;
  navHistory(args: { vault: string; from?: number; to?: number; limit: number }): Promise<NavRow[]>;
  /**
   * A fund's rounds below `beforeEpoch`, newest first, read at or past `atLeast` (the block the
   * previous page was read at), and the block they were read at.
   */
  dividendRounds(args: {
    vault: string;
    beforeEpoch?: number;
    atLeast?: number;
    first: number;
  }): Promise<{ rows: DividendRoundRow[]; block: number }>;
  /** events below `beforeSortKey`, newest first, read at or past the block of that sort key */
  events(args: {
    contract?: string;
    eventName?: string;
    /** a vault, lowercase: the events concerning its fund */
    fund?: string;
    fromBlock?: number;
    toBlock?: number;
    beforeSortKey?: bigint;
    first: number;
  }): Promise<ProtocolEventRow[]>;
  /** every indexed fund (health) */
  allFunds(): Promise<FundRow[]>;
  readonly freshness: Freshness;
}

/**
 * The block of an event's sort key, which the mapping makes block number x 2^32 + log index
 * (subgraph/src/protocol-event.ts). Every event below a sort key is in its block or an earlier
 * one, so a node that has indexed that block holds all of them.
 */
export function blockOfSortKey(sortKey: bigint): number {
  return Number(sortKey >> 32n);
}

function byId<T extends { id: string }>(keys: readonly string[], rows: T[]): (T | null)[] {
  const map = new Map(rows.map((row) => [row.id.toLowerCase(), row]));
  return keys.map((key) => map.get(key) ?? null);
}

export function createSubgraphLoaders(client: SubgraphClient): SubgraphLoaders {
  const freshness = new Freshness();
  const { maxBatch } = client.config;
  /**
   * One collection's rows (the fields its shape lists), read at or past the floor (see
   * SubgraphClient.floor), with `subgraphError: allow`, checked against that shape; and the block
   * they were read at (`_meta` follows the field, which graph-node runs first: its block is the
   * rows' or a later one).
   */
  const read = async <C extends Collection>(collection: C, args: string, cursorBlock?: number) => {
    const floor = client.floor(cursorBlock);
    const block = floor ? `block: { number_gte: ${floor.number} }, ` : '';
    const document = `{ ${collection}(${block}${args}, subgraphError: allow) { ${COLLECTION_FIELDS[collection]} } }`;
    const data = await client.query<Record<string, unknown>>(document, freshness, floor);
    return { rows: checkedRows(collection, data), block: data._meta.block.number };
  };
  const fund = new DataLoader<string, FundRow | null>(
    async (keys) => {
      const where = literal({ id_in: keys });
      const { rows } = await read('funds', `first: ${keys.length}, where: ${where}`);
      return byId(keys, rows);
    },
    { maxBatchSize: maxBatch },
  );

  return {
    freshness,
    fund,
    dividendRound: new DataLoader(
      async (keys) => {
        const where = literal({ id_in: keys });
        const { rows } = await read('dividendRounds', `first: ${keys.length}, where: ${where}`);
        return byId(keys, rows);
      },
      { maxBatchSize: maxBatch },
    ),
    async navHistory({ vault, from, to, limit }) {
      // With `from`, the first `limit` epochs from it; otherwise the last `limit` up to `to`.
      const ascending = from !== undefined;
      const where = literal({ fund: vault, epoch_gte: from, epoch_lte: to });
      const { rows } = await read(
        'navRecords',
        `first: ${Math.min(limit, maxBatch)}, where: ${where}, orderBy: epoch, orderDirection: ${ascending ? 'asc' : 'desc'}`,
      );
      return ascending ? rows : rows.reverse();
    },
    async dividendRounds({ vault, beforeEpoch, atLeast, first }) {
      const where = literal({ fund: vault, epoch_lt: beforeEpoch });
      return read(
        'dividendRounds',
        `first: ${Math.min(first, maxBatch)}, where: ${where}, orderBy: epoch, orderDirection: desc`,
        atLeast,
      );
    },
    async events({ contract, eventName, fund, fromBlock, toBlock, beforeSortKey, first }) {
      const where = literal({
        contract,
        eventName,
        fund,
        blockNumber_gte: fromBlock === undefined ? undefined : String(fromBlock),
        blockNumber_lte: toBlock === undefined ? undefined : String(toBlock),
        sortKey_lt: beforeSortKey,
      });
      const { rows } = await read(
        'protocolEvents',
        `first: ${Math.min(first, maxBatch)}, where: ${where}, orderBy: sortKey, orderDirection: desc`,
        beforeSortKey === undefined ? undefined : blockOfSortKey(beforeSortKey),
      );
      return rows;
    },
    async allFunds() {
      const { rows } = await read(
        'funds',
        `first: ${maxBatch}, orderBy: registeredAtBlock, orderDirection: asc`,
      );
      for (const row of rows) fund.prime(row.id.toLowerCase(), row);
      return rows;
    },
  };
}
