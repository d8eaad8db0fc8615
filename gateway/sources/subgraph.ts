// The subgraph source: the gateway's only path to indexed data, whether the endpoint is a
// hosted graph-node or the embedded indexer. It speaks the graph-node query dialect
// (collections with `where`/`orderBy`/`first`, `_meta`) over HTTP with graphql-request.
// Every query also asks for `_meta`, so each request knows which block its data reflects.
// Entity fields say `subgraphError: allow`: a subgraph with indexing errors still has its data
// served, flagged in freshness (health says `degraded`), rather than every request failing.
// Loaders are created per request: a request's lookups of funds or rounds are batched into
// one upstream query sized with `first`, and nothing is shared between requests.
import DataLoader from 'dataloader';
import { ClientError, GraphQLClient } from 'graphql-request';
import { rpcEndpoint } from '../../common/url.ts';
import { upstreamUnavailable } from '../errors.ts';

export interface SubgraphConfig {
  url: string;
  timeoutMs: number;
  /** largest `first` (and DataLoader batch) sent in one query; graph-node's default cap is 1000 */
  maxBatch: number;
  /** injectable for instrumentation (tests count upstream requests); defaults to global fetch */
  fetch?: typeof fetch;
}

export interface NavRow {
  epoch: number;
  status: 'Draft' | 'PendingVerification' | 'Verified' | 'Published';
  navPerShare: string;
  totalAssets: string;
  totalSupply: string;
  publishedAt: string | null;
  publishedTxHash: string | null;
}

export interface FundRow {
  id: string;
  slug: string;
  closed: boolean;
  pausedModules: string[];
  latestPublishedNav: NavRow | null;
  latestNav: NavRow | null;
}

export interface DividendRoundRow {
  id: string;
  epoch: number;
  merkleRoot: string;
  total: string;
  leafCount: number;
  uri: string;
  claimedCount: number;
  claimedAmount: string;
  postedAtBlock: string;
  postedAt: string;
  postedTxHash: string;
}

export interface ProtocolEventRow {
  id: string;
  contract: string;
  eventName: string;
  blockNumber: string;
  timestamp: string;
  txHash: string;
  logIndex: string;
  sortKey: string;
  args: string;
}

export interface SubgraphMeta {
  block: { number: number; hash: string | null; timestamp: number | null };
  hasIndexingErrors: boolean;
}

/** An indexed block: its hash tells a block replaced by a reorg from the one it replaced. */
export interface IndexedBlockRef {
  number: number;
  hash: string | null;
}

/** What one request's data reflects: the lowest indexed block any of its queries saw. */
export class Freshness {
  indexedBlock: number | null = null;
  indexedHash: string | null = null;
  indexedAt: number | null = null;
  hasIndexingErrors = false;

  record(meta: SubgraphMeta): void {
    if (this.indexedBlock === null || meta.block.number < this.indexedBlock) {
      this.indexedBlock = meta.block.number;
      this.indexedHash = meta.block.hash;
      this.indexedAt = meta.block.timestamp;
    }
    this.hasIndexingErrors ||= meta.hasIndexingErrors;
  }
}

const NAV_FIELDS = 'epoch status navPerShare totalAssets totalSupply publishedAt publishedTxHash';
const FUND_FIELDS = `id slug closed pausedModules latestPublishedNav { ${NAV_FIELDS} } latestNav { ${NAV_FIELDS} }`;
const ROUND_FIELDS =
  'id epoch merkleRoot total leafCount uri claimedCount claimedAmount postedAtBlock postedAt postedTxHash';
const EVENT_FIELDS = 'id contract eventName blockNumber timestamp txHash logIndex sortKey args';

/**
 * graph-node runs consecutive top-level fields with the same `block` argument together, under
 * `subgraphError: deny` unless every one of them says `allow`, and `_meta` has no such argument
 * (graphql/src/execution/query.rs, `block_constraint`): asked with the entity field, `_meta`
 * would withhold the entity data of a subgraph with indexing errors. A `block` of its own that
 * still means the latest block (`number_gte: 0`) keeps it apart.
 */
const META_FIELDS = '_meta(block: { number_gte: 0 }) { block { number hash timestamp } hasIndexingErrors }';

/** The one error graph-node adds to the data of a subgraph with indexing errors. */
const INDEXING_ERROR = 'indexing_error';

/**
 * What an answer's `errors` say: nothing, only graph-node's `indexing_error` (the data is
 * served, flagged), or anything else (the request fails).
 */
function errorsKind(errors: unknown): 'none' | 'indexing' | 'other' {
  if (errors === undefined || (Array.isArray(errors) && errors.length === 0)) return 'none';
  const indexingOnly =
    Array.isArray(errors) &&
    errors.every((e) => (e as { message?: unknown } | null)?.message === INDEXING_ERROR);
  return indexingOnly ? 'indexing' : 'other';
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
 * arrive as decimal strings ('uint'); `args` is JSON text ('json').
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
  | { row: RowShape };
type RowShape = Record<string, FieldRule>;

const NAV_SHAPE: RowShape = {
  epoch: 'int',
  status: 'string',
  navPerShare: 'uint',
  totalAssets: 'uint',
  totalSupply: 'uint',
  publishedAt: 'uint?',
  publishedTxHash: 'string?',
};
const fieldsOf = (rule: FieldRule, fields: string): RowShape =>
  Object.fromEntries(fields.split(' ').map((f) => [f, rule]));

/**
 * The rows each collection must hold. An answer of another shape (a proxy's error page, a
 * different schema) is the upstream's fault: it becomes UPSTREAM_UNAVAILABLE, never a crash
 * reported as an internal error nor a wrong body.
 */
const COLLECTION_SHAPES: Record<string, RowShape> = {
  funds: {
    ...fieldsOf('string', 'id slug'),
    closed: 'boolean',
    pausedModules: 'strings',
    latestPublishedNav: { row: NAV_SHAPE },
    latestNav: { row: NAV_SHAPE },
  },
  navRecords: NAV_SHAPE,
  dividendRounds: {
    ...fieldsOf('string', 'id merkleRoot uri postedTxHash'),
    ...fieldsOf('uint', 'total claimedAmount postedAtBlock postedAt'),
    epoch: 'int',
    leafCount: 'int',
    claimedCount: 'int',
  },
  protocolEvents: {
    ...fieldsOf('string', 'id contract eventName txHash'),
    ...fieldsOf('uint', 'blockNumber timestamp logIndex sortKey'),
    args: 'json',
  },
};

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
    return v === null || fits(v, rule.row);
  });
}

/** Checks every collection the document asks for against its row shape. */
function checkShape<T>(document: string, data: T): T {
  for (const [name, shape] of Object.entries(COLLECTION_SHAPES)) {
    if (!new RegExp(`^\\{\\s*${name}\\(`).test(document)) continue;
    const rows = (data as Record<string, unknown>)[name];
    if (!Array.isArray(rows) || !rows.every((row) => fits(row, shape))) {
      throw upstreamUnavailable('subgraph', new Error(`the subgraph answered malformed ${name}`));
    }
  }
  return data;
}

/**
 * Whether a failed query is worth one more try: a 5xx or 429, or a network failure (fetch's
 * TypeError). A timeout (AbortSignal.timeout's TimeoutError) is not: it spent the whole
 * SUBGRAPH_TIMEOUT_MS, and a second try would make the client wait twice that for its 503.
 */
function isTransient(error: unknown): boolean {
  if (error instanceof ClientError) return error.response.status >= 500 || error.response.status === 429;
  return error instanceof Error && error.name !== 'TimeoutError';
}

/** One answer as received: its data (missing or null if the subgraph sent none) and its errors. */
interface SubgraphAnswer<T> {
  data: T | null | undefined;
  errors?: unknown;
}

export interface SubgraphClient {
  query<T>(document: string, freshness: Freshness): Promise<T>;
  /** the latest block the subgraph has indexed (its `_meta` alone) */
  indexedBlock(): Promise<IndexedBlockRef>;
  readonly config: SubgraphConfig;
}

export function createSubgraphClient(config: SubgraphConfig): SubgraphClient {
  // errorPolicy 'all': an answer's GraphQL errors come back with its data instead of being
  // thrown, so that graph-node's `indexing_error` can be told apart from real failures
  // a URL with credentials, which fetch refuses, sends them as Basic authorization instead
  const endpoint = rpcEndpoint(config.url);
  const client = new GraphQLClient(endpoint.url, {
    errorPolicy: 'all',
    headers: endpoint.headers,
    ...(config.fetch ? { fetch: config.fetch } : {}),
  });
  async function once<T>(document: string): Promise<SubgraphAnswer<T>> {
    return client.rawRequest<T>({ query: document, signal: AbortSignal.timeout(config.timeoutMs) });
  }
  return {
    config,
    async query<T>(document: string, freshness: Freshness): Promise<T> {
      const withMeta = document.replace(/\}\s*$/, ` ${META_FIELDS} }`);
      let response: SubgraphAnswer<T & { _meta: SubgraphMeta }>;
      try {
        try {
          response = await once(withMeta);
        } catch (error) {
          if (!isTransient(error)) throw error;
          response = await once(withMeta);
        }
      } catch (error) {
        throw upstreamUnavailable('subgraph', error);
      }
      const { data, errors } = response;
      const kind = errorsKind(errors);
      if (kind === 'other')
        throw upstreamUnavailable(
          'subgraph',
          new Error(`the subgraph answered errors: ${JSON.stringify(errors)}`),
        );
      if (typeof data?._meta?.block?.number !== 'number')
        throw upstreamUnavailable('subgraph', new Error('response without _meta'));
      // graph-node's answer to a field left at `subgraphError: deny`: nothing but `_meta`
      if (kind === 'indexing' && Object.keys(data).every((field) => field === '_meta'))
        throw upstreamUnavailable(
          'subgraph',
          new Error('the subgraph withheld its data for indexing errors'),
        );
      freshness.record({
        ...data._meta,
        hasIndexingErrors: data._meta.hasIndexingErrors || kind === 'indexing',
      });
      return data;
    },
    async indexedBlock(): Promise<IndexedBlockRef> {
      const freshness = new Freshness();
      // an empty selection: query() adds the `_meta` fields, which are all this asks for
      await this.query('{ }', freshness);
      return { number: freshness.indexedBlock!, hash: freshness.indexedHash };
    },
  };
}

export interface SubgraphLoaders {
  /** keyed by lowercase vault address */
  fund: DataLoader<string, FundRow | null>;
  /** keyed by round id `<vault>-<epoch>` */
  dividendRound: DataLoader<string, DividendRoundRow | null>;
  navHistory(args: { vault: string; from?: number; to?: number; limit: number }): Promise<NavRow[]>;
  dividendRounds(args: { vault: string; beforeEpoch?: number; first: number }): Promise<DividendRoundRow[]>;
  events(args: {
    contract?: string;
    eventName?: string;
    fromBlock?: number;
    toBlock?: number;
    beforeSortKey?: bigint;
    first: number;
  }): Promise<ProtocolEventRow[]>;
  /** every indexed fund (health) */
  allFunds(): Promise<FundRow[]>;
  readonly freshness: Freshness;
}

function byId<T extends { id: string }>(keys: readonly string[], rows: T[]): (T | null)[] {
  const map = new Map(rows.map((row) => [row.id.toLowerCase(), row]));
  return keys.map((key) => map.get(key) ?? null);
}

export function createSubgraphLoaders(client: SubgraphClient): SubgraphLoaders {
  const freshness = new Freshness();
  const { maxBatch } = client.config;
  const query = async <T>(document: string) =>
    checkShape(document, await client.query<T>(document, freshness));
  const fund = new DataLoader<string, FundRow | null>(
    async (keys) => {
      const where = literal({ id_in: keys });
      const data = await query<{ funds: FundRow[] }>(
        `{ funds(first: ${keys.length}, where: ${where}, subgraphError: allow) { ${FUND_FIELDS} } }`,
      );
      return byId(keys, data.funds);
    },
    { maxBatchSize: maxBatch },
  );

  return {
    freshness,
    fund,
    dividendRound: new DataLoader(
      async (keys) => {
        const where = literal({ id_in: keys });
        const data = await query<{ dividendRounds: DividendRoundRow[] }>(
          `{ dividendRounds(first: ${keys.length}, where: ${where}, subgraphError: allow) { ${ROUND_FIELDS} } }`,
        );
        return byId(keys, data.dividendRounds);
      },
      { maxBatchSize: maxBatch },
    ),
    async navHistory({ vault, from, to, limit }) {
      // With `from`, the first `limit` epochs from it; otherwise the last `limit` up to `to`.
      const ascending = from !== undefined;
      const where = literal({ fund: vault, epoch_gte: from, epoch_lte: to });
      const data = await query<{ navRecords: NavRow[] }>(
        `{ navRecords(first: ${Math.min(limit, maxBatch)}, where: ${where}, orderBy: epoch, orderDirection: ${
          ascending ? 'asc' : 'desc'
        }, subgraphError: allow) { ${NAV_FIELDS} } }`,
      );
      return ascending ? data.navRecords : data.navRecords.reverse();
    },
    async dividendRounds({ vault, beforeEpoch, first }) {
      const where = literal({ fund: vault, epoch_lt: beforeEpoch });
      const data = await query<{ dividendRounds: DividendRoundRow[] }>(
        `{ dividendRounds(first: ${Math.min(first, maxBatch)}, where: ${where}, orderBy: epoch, orderDirection: desc, subgraphError: allow) { ${ROUND_FIELDS} } }`,
      );
      return data.dividendRounds;
    },
    async events({ contract, eventName, fromBlock, toBlock, beforeSortKey, first }) {
      const where = literal({
        contract,
        eventName,
        blockNumber_gte: fromBlock === undefined ? undefined : String(fromBlock),
        blockNumber_lte: toBlock === undefined ? undefined : String(toBlock),
        sortKey_lt: beforeSortKey,
      });
      const data = await query<{ protocolEvents: ProtocolEventRow[] }>(
        `{ protocolEvents(first: ${Math.min(first, maxBatch)}, where: ${where}, orderBy: sortKey, orderDirection: desc, subgraphError: allow) { ${EVENT_FIELDS} } }`,
      );
      return data.protocolEvents;
    },
    async allFunds() {
      const data = await query<{ funds: FundRow[] }>(
        `{ funds(first: ${maxBatch}, orderBy: registeredAtBlock, orderDirection: asc, subgraphError: allow) { ${FUND_FIELDS} } }`,
      );
      for (const row of data.funds) fund.prime(row.id.toLowerCase(), row);
      return data.funds;
    },
  };
}
