// The subgraph source: the gateway's only path to indexed data, whether the endpoint is a
// hosted graph-node or the embedded indexer. It speaks the graph-node query dialect
// (collections with `where`/`orderBy`/`first`, `_meta`) over HTTP with graphql-request.
// Every query also asks for `_meta`, so each request knows which block its data reflects.
// A query never reads a block older than the newest this process has seen (graph-node's
// `block: { number_gte }`): behind a load balancer, query nodes reading replicas at different
// heights would otherwise show data going back and forth, and a cursor's next page could come from
// a node that has not indexed the block its first page was read at, skipping what lies between.
// A node behind answers an error instead; the query is asked once more (the balancer may pick
// another node), then fails with UPSTREAM_UNAVAILABLE saying the nodes are behind. Unless that
// newest block is gone: after a reorg to a shorter chain graph-node reverts it, and on a quiet chain
// nothing would ever be indexed at its height again. Where the chain RPC is given, it tells the two
// apart (see settleFloor), and a block it no longer holds stops being the floor.
// A node's refusal names the deployment that answered: one other than the last `_meta.deployment`
// seen is a new version deployed under the same name, re-indexing from the start for what may be
// hours, and says so instead of asking for a retry in seconds.
// The endpoint may be graph-node itself or The Graph's gateway in front of indexers, whose words
// differ (see readErrors): both have refusals that last until the operator acts (an API key, a
// subgraph that is not there), answered as such rather than as an outage to retry.
// Entity fields say `subgraphError: allow`: a subgraph with indexing errors still has its data
// served, flagged in freshness (health says `degraded`), rather than every request failing.
// Loaders are created per request: a request's lookups of funds, rounds or settlements by id are
// batched into one upstream query sized with `first`, and nothing is shared between requests.
// Each answer is read whole within SUBGRAPH_TIMEOUT_MS and at most MAX_ANSWER_BYTES (graphNodeFetch).
import DataLoader from 'dataloader';
import { ClientError, GraphQLClient } from 'graphql-request';
import { answerTooLarge, boundedFetch, excerpt } from '../../common/bounded-fetch.ts';
import { httpEndpoint } from '../../common/url.ts';
import { GatewayError, upstreamRefused, upstreamUnavailable } from '../errors.ts';
import type { ChainSource } from './chain.ts';

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
 * by a reorg from the one it replaced, whether it reports indexing errors, and the deployment that
 * answered (a redeploy under the same name answers from another one, whose data may differ).
 */
export interface IndexedState {
  number: number;
  hash: string | null;
  hasIndexingErrors: boolean;
  /** `_meta.deployment`, null when it names none */
  deployment: string | null;
}

/**
 * The lowest block a query may read, and why: the newest block an answer to this process showed,
 * or the block a cursor's page was read at, whichever is higher.
 */
interface BlockFloor {
  number: number;
  reason: 'seen' | 'cursor';
}

/** A block an answer showed. */
interface SeenBlock {
  number: number;
  hash: string | null;
}

/** What the subgraph source asks the chain RPC: whether a block it has served is still on chain. */
export type ChainBlocks = Pick<ChainSource, 'readHead' | 'blockAt'>;

/** What one request's data reflects: the lowest indexed block any of its queries saw. */
export class Freshness {
  indexedBlock: number | null = null;
  indexedHash: string | null = null;
  indexedAt: number | null = null;
  deployment: string | null = null;
  hasIndexingErrors = false;
  /** the floor's lowering (see settleFloor) the first answer was asked under */
  private firstLowering: number | null = null;
  /** whether answers came from both sides of a lowering */
  private straddles = false;

  /** `lowering`: how many times the floor had come down when the answer's query was sent */
  record(meta: SubgraphMeta, lowering: number): void {
    if (this.indexedBlock === null || meta.block.number < this.indexedBlock) {
      this.indexedBlock = meta.block.number;
      this.indexedHash = meta.block.hash;
      this.indexedAt = meta.block.timestamp;
      this.deployment = meta.deployment;
    }
    this.hasIndexingErrors ||= meta.hasIndexingErrors;
    this.firstLowering ??= lowering;
    this.straddles ||= lowering !== this.firstLowering;
    // answers from both sides of a reorg: the data reflects no one block, so no hash stands for it
    // and a cached body of it is outdated at its next check (rest/response-cache.ts)
    if (this.straddles) this.indexedHash = null;
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

/**
 * graph-node's words for a `block` its node has not indexed yet, naming the deployment that answered
 * (graph/src/data/subgraph/mod.rs block_queryable; graphql/src/store/resolver.rs for `number_gte`).
 */
const NOT_YET_INDEXED = /(?:subgraph (\S+) )?has only indexed up to block number (\d+)/;

/** graph-node's words for a deployment that has indexed no block at all (store/postgres/src/deployment.rs). */
const NOT_STARTED = /Subgraph `([^`]+)` has not started syncing yet/;

/** graph-node's words for a name or id it serves no deployment under (graph/src/data/query/error.rs). */
const NO_SUCH_DEPLOYMENT = /^deployment `[^`]*` does not exist$/;

/** The embedded indexer's words for a store SQLite finds damaged (indexer/store/sqlite-store.ts damagedStoreMessage). */
const DAMAGED_STORE = /^(?:the store .+|the indexer's store) is damaged \(/s;

/** The one error graph-node adds to the data of a subgraph with indexing errors. */
const INDEXING_ERROR = 'indexing_error';

/**
 * The reason each indexer failed, when `message` is The Graph's gateway's answer to a query no
 * indexer answered (edgeandnode/gateway src/errors.rs, BadIndexers): "bad indexers: {0x…:
 * Unavailable(missing block: 500, latest: 382), 0x…: Timeout}"; null for any other message.
 */
function indexerFailures(message: string): string[] | null {
  const list = /^bad indexers: \{(.*)\}$/s.exec(message)?.[1];
  if (list === undefined) return null;
  const starts = [...list.matchAll(/(?:^|, )\S+?: (?=Unavailable\(|Timeout\b|BadResponse\()/g)];
  return starts.map((start, i) => list.slice(start.index + start[0].length, starts[i + 1]?.index));
}

/** The Graph's gateway's reason for an indexer without the block asked for (src/errors.rs, MissingBlockError). */
const MISSING_BLOCK = /^Unavailable\(missing block(?:: \d+)?(?:, latest: (\d+))?\)$/;

/**
 * A refusal that lasts until the service's operator acts: `reason` says what is refused in the
 * service's words, for clients; `remedy` says what to fix, for the operator.
 */
interface LastingRefusal {
  reason: string;
  remedy: string;
}

/** The Graph's gateway's refusal of every indexer's answer holding indexing errors (src/indexer_client.rs). */
const UNATTESTABLE_ERRORS: LastingRefusal = {
  reason:
    "it has indexing errors, and The Graph's gateway, which serves it, passes on no answer holding them",
  remedy:
    "every indexer answered with graph-node's indexing_error, which an indexer cannot attest, so The Graph's gateway passes none of their answers on: the deployment has failed on a deterministic error. Deploy a version that does not fail, or serve the subgraph from a graph-node of your own, whose answers keep the data with the errors flagged",
};

/**
 * The lasting refusals of graph-node, of The Graph's gateway (src/errors.rs: Auth, SubgraphNotFound)
 * and of the embedded indexer (a damaged store).
 */
function lastingRefusal(text: string): LastingRefusal | null {
  if (text.startsWith('auth error:'))
    return {
      reason: "The Graph's gateway, which serves it, does not accept the service's API key",
      remedy:
        "The Graph's gateway refuses the API key in SUBGRAPH_URL: check the key in Subgraph Studio (its billing and spending limit, and the subgraphs and domains it is authorized for), or put another key in SUBGRAPH_URL",
    };
  if (text.startsWith('subgraph not found:'))
    return {
      reason: "The Graph's gateway, which serves it, serves no such subgraph",
      remedy:
        'The Graph\'s gateway serves no subgraph or deployment by the id in SUBGRAPH_URL ("no allocations": no indexer serves it yet): check the id, or wait for indexers to pick a newly published subgraph up',
    };
  if (DAMAGED_STORE.test(text))
    return {
      reason: 'the indexer serving it has a damaged store, which it cannot read',
      remedy:
        'the embedded indexer found its SQLite store damaged: stop it, delete the store file it names and its -wal and -shm files, and start it again to index from the start block',
    };
  if (NO_SUCH_DEPLOYMENT.test(text))
    return {
      reason: 'the graph-node serving it has no such subgraph deployed',
      remedy:
        'graph-node has nothing deployed under the name or id in SUBGRAPH_URL: deploy the subgraph there (README: subgraph:deploy), or correct SUBGRAPH_URL',
    };
  return null;
}

/**
 * What an answer's `errors` say: nothing; only graph-node's `indexing_error` (the data is served,
 * flagged); that the node has not indexed the block asked for (`behind`, with the deployment that
 * said so and the block it has indexed, where its words name them); that the subgraph exists but
 * has indexed no block yet (`unsynced`); a refusal that lasts (`refused`); or anything else (the
 * request fails, to be retried).
 */
type ErrorsVerdict =
  | { kind: 'none' }
  | { kind: 'indexing' }
  | { kind: 'behind'; deployment: string | null; indexedTo: number | null }
  | { kind: 'unsynced'; deployment: string | null }
  | { kind: 'refused'; refusal: LastingRefusal }
  | { kind: 'other' };

/**
 * Reads an answer's `errors` in graph-node's words and in The Graph's gateway's. The gateway never
 * passes graph-node's words on: when no indexer has the block asked for it answers "bad indexers:"
 * with each indexer's reason, which is `behind` only when every indexer lacks a block (one timing
 * out is an outage like any other); an answer with indexing errors cannot be attested, so on The
 * Graph Network a deployment with indexing errors is refused by every indexer, which lasts.
 */
export function readErrors(errors: unknown): ErrorsVerdict {
  if (errors === undefined || (Array.isArray(errors) && errors.length === 0)) return { kind: 'none' };
  if (!Array.isArray(errors)) return { kind: 'other' };
  const messages = errors.map((e) => (e as { message?: unknown } | null)?.message);
  if (messages.every((m) => m === INDEXING_ERROR)) return { kind: 'indexing' };
  const texts = messages.filter((m): m is string => typeof m === 'string');
  for (const text of texts) {
    const behind = NOT_YET_INDEXED.exec(text);
    if (behind) return { kind: 'behind', deployment: behind[1] ?? null, indexedTo: Number(behind[2]) };
    const unstarted = NOT_STARTED.exec(text);
    if (unstarted) return { kind: 'unsynced', deployment: unstarted[1]! };
    const failures = indexerFailures(text);
    if (failures !== null && failures.length > 0) {
      const missing = failures.map((failure) => MISSING_BLOCK.exec(failure));
      if (missing.every((m) => m !== null)) {
        const latest = missing.flatMap((m) => (m[1] === undefined ? [] : [Number(m[1])]));
        return {
          kind: 'behind',
          deployment: null,
          indexedTo: latest.length > 0 ? Math.max(...latest) : null,
        };
      }
      if (failures.every((failure) => failure.startsWith('BadResponse(') && failure.includes(INDEXING_ERROR)))
        return { kind: 'refused', refusal: UNATTESTABLE_ERRORS };
    }
    const refusal = lastingRefusal(text);
    if (refusal) return { kind: 'refused', refusal };
  }
  if (texts.includes('no indexers found')) return { kind: 'unsynced', deployment: null };
  return { kind: 'other' };
}

/**
 * A new deployment under the subgraph's name, re-indexing from its start block: the block it has
 * indexed (null: none yet), and the deployment it replaced, the one this process read before.
 */
interface Resync {
  deployment: string;
  indexedTo: number | null;
  replaced: string;
}

/**
 * The 503 for a query every try of which reached a node that has not indexed `floor` yet. Its
 * words are the service's own (the upstream's stay in the cause), and say why the block is needed
 * and that a retry is the remedy: the nodes catch up within seconds, unless the node is a new
 * deployment re-indexing from the start (`resync`), which can take hours. It keeps the floor, so
 * that a resolver can tell a cursor's block no node will ever reach (inputs.ts, pageAfterCursor),
 * and what the chain RPC said of the floor's block (`onChain`, see settleFloor): true, the nodes are
 * behind a block the chain holds; false, the chain no longer holds it (a reorg whose revert is being
 * re-indexed); null, not asked (a cursor's floor, a re-indexing deployment, no RPC, or the RPC failing).
 */
export class NodesBehindError extends GatewayError {
  constructor(
    readonly floor: BlockFloor,
    cause: unknown,
    readonly onChain: boolean | null,
    resync?: Resync,
  ) {
    const [needed, retry] =
      floor.reason === 'cursor'
        ? [`block ${floor.number}, which the cursor's page was read at`, ' with the same cursor']
        : [`block ${floor.number}, the newest this service has read`, ''];
    const reached = resync?.indexedTo == null ? 'no block yet' : `block ${resync.indexedTo}`;
    super(
      'UPSTREAM_UNAVAILABLE',
      resync
        ? `The subgraph is being re-indexed: a new version of it (deployment ${resync.deployment}) indexes the chain from its start and has reached ${reached}, not yet ${needed}, and older data is not served in its place. Retry later${retry}: re-indexing can take hours.`
        : `The subgraph's query nodes are behind: the node that answered has not indexed ${needed}, and older data is not served in its place. Retry in a few seconds${retry}.`,
      { upstream: 'subgraph', cause, retryAfterSeconds: resync ? RESYNC_RETRY_AFTER_SECONDS : undefined },
    );
  }
}

/**
 * How long a client waits before it asks again of a deployment re-indexing from its start: that
 * takes minutes to hours, and a retry every few seconds would only spend the client's rate limit.
 */
export const RESYNC_RETRY_AFTER_SECONDS = 60;

/** What the log says of a re-indexing deployment: how far it is, and how to serve the old one meanwhile. */
function resyncCause(resync: Resync, floor: BlockFloor, errors: unknown): Error {
  const reached = resync.indexedTo === null ? 'has indexed no block yet' : `is at block ${resync.indexedTo}`;
  return new Error(
    `SUBGRAPH_URL now serves deployment ${resync.deployment}, a new version that replaced ${resync.replaced} and ${reached}; requests needing block ${floor.number} fail until it gets there. To serve ${resync.replaced} meanwhile, point SUBGRAPH_URL at its /subgraphs/id/${resync.replaced} path. The subgraph answered: ${excerpt(JSON.stringify(errors))}`,
  );
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

/** what a NAV record needs of its epoch's settlement: when the vault settled it */
const SETTLEMENT_SHAPE = {
  id: 'string',
  timestamp: 'uint',
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
export type SettlementRow = RowOf<typeof SETTLEMENT_SHAPE>;

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
  settlements: SETTLEMENT_SHAPE,
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
   * Runs one top-level collection field, `field(floor)` (see floor(); it asks for the floor with
   * `block: { number_gte }`, which a node that has not indexed it refuses), with `_meta` added
   * beside it, which tells the block the data reflects. `cursorBlock`: the block a cursor's page was
   * read at, which the field must read at or past too.
   */
  query<T>(
    field: (floor: BlockFloor | undefined) => string,
    freshness: Freshness,
    cursorBlock?: number,
  ): Promise<T & { _meta: SubgraphMeta }>;
  /** the subgraph's latest block and errors flag (its `_meta` alone), at or past the floor */
  indexedBlock(): Promise<IndexedState>;
  readonly config: SubgraphConfig;
}

/**
 * The subgraph source. `chain`: the chain RPC the gateway reads, if one is configured; it tells a
 * floor block a reorg took away from one the nodes have not indexed yet (see settleFloor).
 */
export function createSubgraphClient(config: SubgraphConfig, chain?: ChainBlocks): SubgraphClient {
  // errorPolicy 'all': an answer's GraphQL errors come back with its data instead of being
  // thrown, so that graph-node's `indexing_error` can be told apart from real failures
  // a URL with credentials, which fetch refuses, sends them as Basic authorization instead
  const endpoint = httpEndpoint(config.url);
  const client = new GraphQLClient(endpoint.url, {
    errorPolicy: 'all',
    headers: endpoint.headers,
    fetch: graphNodeFetch('subgraph', config.fetch),
  });
  /** the newest block any answer to this process showed (or the one settleFloor lowered it to) */
  let newestSeen: SeenBlock = { number: 0, hash: null };
  /** how many times settleFloor lowered newestSeen: answers asked for before a lowering may be orphans */
  let lowerings = 0;
  /** the deployment the last answer came from (`_meta.deployment`), null before one names it */
  let lastDeployment: string | null = null;
  /** A refusal naming a deployment other than the last one read: a new version re-indexing. */
  const resyncIn = (verdict: ErrorsVerdict): Resync | undefined => {
    if (verdict.kind !== 'behind' && verdict.kind !== 'unsynced') return undefined;
    if (verdict.deployment === null || lastDeployment === null || verdict.deployment === lastDeployment)
      return undefined;
    const indexedTo = verdict.kind === 'behind' ? verdict.indexedTo : null;
    return { deployment: verdict.deployment, indexedTo, replaced: lastDeployment };
  };
  /**
   * The block a query must read at or past now: the newest this process has seen, or `cursorBlock`
   * when that is higher. Undefined before any answer (block 0 included), when any block will do.
   */
  const floor = (cursorBlock = 0): BlockFloor | undefined => {
    if (cursorBlock > newestSeen.number) return { number: cursorBlock, reason: 'cursor' };
    return newestSeen.number > 0 ? { number: newestSeen.number, reason: 'seen' } : undefined;
  };
  const isNewestSeen = (block: SeenBlock) =>
    block.number === newestSeen.number && block.hash === newestSeen.hash;
  const see = (block: SeenBlock) => {
    // the same height with another hash: a reorg replaced the block, and the newer answer shows it
    const replaced = block.number === newestSeen.number && block.hash !== null && !isNewestSeen(block);
    if (block.number > newestSeen.number || replaced) newestSeen = block;
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
  /** The subgraph's latest block, whatever its height (`_meta` with no floor). */
  async function latestIndexed(): Promise<SeenBlock> {
    const { data } = await send<{ _meta?: SubgraphMeta }>(`{ _meta { block { number hash } } }`);
    const block = data?._meta?.block;
    if (typeof block?.number !== 'number')
      throw upstreamUnavailable('subgraph', new Error('response without _meta'));
    return { number: block.number, hash: block.hash ?? null };
  }

  /**
   * Asked when every try of a query reached a node below `seen`, the newest block this process has
   * served: whether the chain RPC still holds that block (true: the nodes are behind it, and the
   * floor stands; false or null, see NodesBehindError.onChain). A block the chain no longer holds was
   * taken away by a reorg, and graph-node reverted it: when the subgraph's own latest block is on
   * the chain, the floor comes down to it ('lowered'). A chain that ends below `seen` is a reorg to
   * a shorter branch only once the subgraph has indexed that chain's head; before, it may be an RPC
   * node behind the subgraph's, and the floor stands.
   */
  async function settleFloor(seen: SeenBlock): Promise<'lowered' | boolean | null> {
    if (!chain || seen.hash === null) return null;
    try {
      const head = await chain.readHead();
      const atSeen = BigInt(seen.number) > head.number ? null : await chain.blockAt(BigInt(seen.number));
      if (atSeen?.hash === seen.hash) return true;
      const now = await latestIndexed();
      if (now.number >= seen.number) return false;
      const nowIsHead = BigInt(now.number) === head.number;
      const atNow = nowIsHead ? head : await chain.blockAt(BigInt(now.number));
      if (atNow?.hash !== now.hash || (atSeen === null && !nowIsHead)) return false;
      // another request's answer may have raised the floor meanwhile: that floor is not this verdict's
      if (!isNewestSeen(seen)) return null;
      newestSeen = now;
      lowerings += 1;
      return 'lowered';
    } catch {
      return null;
    }
  }
  /** one settleFloor at a time: the requests refused meanwhile share its verdict */
  let settling: Promise<'lowered' | boolean | null> | null = null;

  /**
   * Sends the document `build` makes for the floor (`_meta` with or without an entity field), and
   * checks and records the answer. When every try reached a node below the newest block seen, and
   * that block is gone from the chain, the floor comes down and the document is asked once more.
   */
  async function ask<T>(
    build: (floor: BlockFloor | undefined) => string,
    freshness: Freshness,
    cursorBlock?: number,
  ): Promise<T & { _meta: SubgraphMeta }> {
    type Answer = SubgraphAnswer<T & { _meta: SubgraphMeta }>;
    const tryTwice = async (document: string): Promise<Answer> => {
      const answer: Answer = await send(document);
      // a load balancer may send the second try to a node that has the block
      return readErrors(answer.errors).kind === 'behind' ? send(document) : answer;
    };
    let asked = floor(cursorBlock);
    let lowering = lowerings;
    let answer = await tryTwice(build(asked));
    let verdict = readErrors(answer.errors);
    let onChain: boolean | null = null;
    const resync = resyncIn(verdict);
    // a deployment re-indexing from its start is far below any block, whatever the chain holds
    if (verdict.kind === 'behind' && !resync && asked?.reason === 'seen') {
      const settled = await (settling ??= settleFloor(newestSeen).finally(() => {
        settling = null;
      }));
      if (settled === 'lowered') {
        asked = floor(cursorBlock);
        lowering = lowerings;
        answer = await tryTwice(build(asked));
        verdict = readErrors(answer.errors);
        // settleFloor found the block it lowered the floor to on chain
        onChain = true;
      } else onChain = settled;
    }
    const { data, errors } = answer;
    if (asked && resync) {
      // the deployment SUBGRAPH_URL serves now, as health names it beside this failure
      freshness.deployment ??= resync.deployment;
      throw new NodesBehindError(asked, resyncCause(resync, asked, errors), null, resync);
    }
    if (verdict.kind === 'behind' && asked)
      throw new NodesBehindError(asked, new Error(excerpt(JSON.stringify(errors))), onChain);
    if (verdict.kind === 'refused')
      throw upstreamRefused(
        'subgraph',
        verdict.refusal.reason,
        new Error(`${verdict.refusal.remedy} (the subgraph answered ${excerpt(JSON.stringify(errors))})`),
      );
    if (verdict.kind !== 'none' && verdict.kind !== 'indexing')
      throw upstreamUnavailable(
        'subgraph',
        new Error(`the subgraph answered errors: ${excerpt(JSON.stringify(errors))}`),
      );
    if (typeof data?._meta?.block?.number !== 'number')
      throw upstreamUnavailable('subgraph', new Error('response without _meta'));
    // graph-node's answer to a field left at `subgraphError: deny`: nothing but `_meta`
    if (verdict.kind === 'indexing' && Object.keys(data).every((field) => field === '_meta'))
      throw upstreamUnavailable('subgraph', new Error('the subgraph withheld its data for indexing errors'));
    // an answer asked for before the floor came down may be from the branch a reorg took away
    if (lowering === lowerings) see({ number: data._meta.block.number, hash: data._meta.block.hash ?? null });
    lastDeployment = data._meta.deployment ?? lastDeployment;
    freshness.record(
      {
        ...data._meta,
        deployment: data._meta.deployment ?? null,
        hasIndexingErrors: data._meta.hasIndexingErrors || verdict.kind === 'indexing',
      },
      lowering,
    );
    return data;
  }

  return {
    config,
    query<T>(field: (floor: BlockFloor | undefined) => string, freshness: Freshness, cursorBlock?: number) {
      return ask<T>((asked) => `{ ${field(asked)} ${metaField(0)} }`, freshness, cursorBlock);
    },
    async indexedBlock(): Promise<IndexedState> {
      const freshness = new Freshness();
      // `_meta` alone, so it can carry the floor itself
      await ask((asked) => `{ ${metaField(asked?.number ?? 0)} }`, freshness);
      return {
        number: freshness.indexedBlock!,
        hash: freshness.indexedHash,
        hasIndexingErrors: freshness.hasIndexingErrors,
        deployment: freshness.deployment,
      };
    },
  };
}

export interface SubgraphLoaders {
  /** keyed by lowercase vault address */
  fund: DataLoader<string, FundRow | null>;
  /** keyed by round id `<vault>-<epoch>` */
  dividendRound: DataLoader<string, DividendRoundRow | null>;
  /** keyed by settlement id `<vault>-<epoch>`: the vault's settlement of that epoch, null before it */
  settlement: DataLoader<string, SettlementRow | null>;
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
    const field = (floor: BlockFloor | undefined) => {
      const block = floor ? `block: { number_gte: ${floor.number} }, ` : '';
      return `${collection}(${block}${args}, subgraphError: allow) { ${COLLECTION_FIELDS[collection]} }`;
    };
    const data = await client.query<Record<string, unknown>>(field, freshness, cursorBlock);
    return { rows: checkedRows(collection, data), block: data._meta.block.number };
  };
  /** A loader of `collection`'s rows by id (lowercase), batched into one `id_in` query of up to maxBatch. */
  const byIdLoader = <C extends 'funds' | 'dividendRounds' | 'settlements'>(collection: C) =>
    new DataLoader<string, CollectionRow<C> | null>(
      async (keys) => {
        const { rows } = await read(collection, `first: ${keys.length}, where: ${literal({ id_in: keys })}`);
        return byId(keys, rows);
      },
      { maxBatchSize: maxBatch },
    );
  const fund = byIdLoader('funds');

  return {
    freshness,
    fund,
    dividendRound: byIdLoader('dividendRounds'),
    settlement: byIdLoader('settlements'),
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
