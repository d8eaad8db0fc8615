// Environment configuration of `npm run indexer`, validated at start-up: each problem names the
// variable. With NETWORK=devnet and no RPC_URL, the RPC URL of the running `npm run devnet` is read
// from the deployment.json it writes (in DEVNET_DATA_DIR, default data/devnet, as `npm run devnet`).
// URLs are printed only as redactUrl() shows them (common/env.ts urlRefusal): providers put API keys in
// their path or query.
// Values are read by the rule every process shares (common/env.ts): surrounding whitespace trimmed, a
// blank value unset.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { envInteger, envValue, urlRefusal, type Env } from '../common/env.ts';
import { keepAliveTimeoutFromEnv } from '../common/http-server-limits.ts';
import { MAX_RANGES_AHEAD, type TransactionFetch } from './follower/range-fetcher.ts';
import { DEFAULT_NETWORKS_FILE, REORG_THRESHOLD } from './deployment.ts';
import { STATIC_FILTERS_ABOVE } from './runtime/data-sources.ts';
import { UNPRUNED_HISTORY_BLOCKS } from './runtime/manifest.ts';
import { ARWEAVE_GATEWAY } from './follower/arweave-client.ts';
import {
  DEFAULT_MAX_ADDRESSES_PER_REQUEST,
  DEFAULT_MAX_RANGE,
  DEFAULT_RPC_TIMEOUT_MS,
} from './follower/chain-source.ts';
import { DEFAULT_COMMIT_INTERVAL_MS } from './follower/block-runner.ts';
import { DEFAULT_FILE_MAX_RETRY_MS } from './follower/file-fetcher.ts';
import {
  DEFAULT_FILE_TIMEOUT_MS,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_POLL_INTERVAL_MS,
} from './follower-supervisor.ts';
import { DEFAULT_SUBGRAPH_NAME } from './store-and-query.ts';
import { DEFAULT_MAX_RESULT_BYTES } from './query/execute-query.ts';
import { DEFAULT_QUERY_TIMEOUT_MS } from './query/query-workers.ts';

export interface IndexerEnvConfig {
  rpcUrl: string;
  network: string;
  dataDir: string;
  port: number;
  pollIntervalMs: number;
  /** upper bound of the eth_getLogs block span (public RPCs often cap it) */
  maxBlockRange: number;
  /** most eth_getLogs ranges fetched at once over sparse stretches */
  rangesAhead: number;
  /** most addresses one eth_getLogs names */
  getLogsMaxAddresses: number;
  /** past this many data sources, templates' events are asked for from any address */
  staticFiltersThreshold: number;
  /** how often catch-up commits, in ms (0: every range) */
  commitIntervalMs: number;
  /** blocks of history the store keeps, in place of the manifest's indexerHints.prune */
  historyBlocks?: number;
  /** the deepest reorg a store keeping limited history must still revert */
  reorgThreshold: number;
  /** under nonFatalErrors, index on past handler errors before the first sync too (no pause) */
  disableFailFast: boolean;
  subgraphName: string;
  /** the most one query may read, in bytes of entities (graph-node's GRAPH_GRAPHQL_ERROR_RESULT_SIZE) */
  queryMaxResultBytes: number;
  /** the most a query may take, from its arrival to its answer (graph-node's GRAPH_GRAPHQL_QUERY_TIMEOUT) */
  queryTimeoutMs: number;
  /** how long the query server keeps an idle keep-alive connection (longer than a load balancer's) */
  keepAliveTimeoutMs: number;
  /** how long one JSON-RPC request may take before it fails and is retried */
  rpcTimeoutMs: number;
  /** what handlers get in event.transaction */
  transactions: TransactionFetch;
  /** where file data sources read their files (IPFS_URL, ARWEAVE_URL), and the bounds on it */
  files: {
    ipfsUrl?: string;
    arweaveUrl: string;
    timeoutMs: number;
    maxFileBytes: number;
    maxRetryMs: number;
  };
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  return envInteger(env, name, fallback, { min, max }, Error);
}

/** `value` if it is an http(s) URL; else an error naming the variable and what it should name. */
function httpUrl(name: string, value: string, what?: string): string {
  const refusal = urlRefusal(name, value, ['http:', 'https:'], what);
  if (refusal) throw new Error(refusal);
  return value;
}

/** A true/false variable; unset or blank is false. */
function flag(env: Env, name: string): boolean {
  const value = envValue(env, name) ?? 'false';
  if (value !== 'true' && value !== 'false') throw new Error(`${name} must be true or false, got "${value}"`);
  return value === 'true';
}

/** Where `npm run devnet` writes deployment.json: DEVNET_DATA_DIR, default data/devnet (from the working directory). */
export function devnetDataDir(env: Env): string {
  return resolve(envValue(env, 'DEVNET_DATA_DIR') ?? join('data', 'devnet'));
}

/** `path` relative to the working directory when under it (shorter to read), else absolute. */
export function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

/** The networks of subgraph/networks.json, or an error naming the file. */
function knownNetworks(networksFile: string): string[] {
  try {
    return Object.keys(JSON.parse(readFileSync(networksFile, 'utf8')) as Record<string, unknown>);
  } catch (error) {
    throw new Error(
      `NETWORK cannot be checked: ${shownPath(networksFile)} is unreadable (${(error as Error).message})`,
    );
  }
}

/** The RPC URL the running devnet wrote in its deployment.json; an error says where it looked and what to set. */
function devnetRpcUrl(env: Env): string {
  const dir = devnetDataDir(env);
  const file = join(dir, 'deployment.json');
  const devnetDir = envValue(env, 'DEVNET_DATA_DIR');
  const where = devnetDir ? `DEVNET_DATA_DIR=${devnetDir}` : 'DEVNET_DATA_DIR, default data/devnet';
  if (!existsSync(file)) {
    throw new Error(
      `RPC_URL is not set and there is no devnet deployment at ${shownPath(file)} (${where}): start \`npm run devnet\`, set DEVNET_DATA_DIR to the directory holding its deployment.json, or set RPC_URL to the chain's JSON-RPC URL (http(s)://host:port)`,
    );
  }
  let rpcUrl: unknown;
  try {
    rpcUrl = (JSON.parse(readFileSync(file, 'utf8')) as { rpcUrl?: unknown } | null)?.rpcUrl;
  } catch (error) {
    throw new Error(
      `RPC_URL is not set and the devnet deployment ${shownPath(file)} cannot be read (${(error as Error).message}): run \`npm run devnet\` again to rewrite it, or set RPC_URL`,
    );
  }
  if (typeof rpcUrl !== 'string' || rpcUrl === '') {
    throw new Error(
      `RPC_URL is not set and the devnet deployment ${shownPath(file)} has no "rpcUrl" string: run \`npm run devnet\` again to rewrite it, or set RPC_URL`,
    );
  }
  httpUrl(`"rpcUrl" of ${shownPath(file)}`, rpcUrl);
  return rpcUrl;
}

export function indexerConfigFromEnv(env: Env): IndexerEnvConfig {
  const network = envValue(env, 'NETWORK') ?? 'devnet';
  const networks = knownNetworks(DEFAULT_NETWORKS_FILE);
  if (!networks.includes(network)) {
    throw new Error(
      `NETWORK must be a network of ${shownPath(DEFAULT_NETWORKS_FILE)} (${networks.join(', ')}), got "${network}"`,
    );
  }
  const dataDir = resolve(envValue(env, 'DATA_DIR') ?? 'data');
  let rpcUrl = envValue(env, 'RPC_URL');
  if (rpcUrl === undefined) {
    if (network !== 'devnet') {
      throw new Error(
        `RPC_URL is required with NETWORK=${network}: the JSON-RPC endpoint of the chain to index (http(s)://host[:port][/path])`,
      );
    }
    rpcUrl = devnetRpcUrl(env);
  } else {
    httpUrl('RPC_URL', rpcUrl, 'the JSON-RPC endpoint of the chain to index');
  }
  const subgraphName = envValue(env, 'INDEXER_SUBGRAPH_NAME') ?? DEFAULT_SUBGRAPH_NAME;
  if (!/^[A-Za-z0-9][A-Za-z0-9_/-]*$/.test(subgraphName)) {
    throw new Error(
      `INDEXER_SUBGRAPH_NAME may hold letters, digits, '-', '_' and '/', got "${subgraphName}"`,
    );
  }
  const transactions = envValue(env, 'INDEXER_TRANSACTIONS') ?? 'full';
  if (transactions !== 'full' && transactions !== 'hash-only') {
    throw new Error(`INDEXER_TRANSACTIONS must be full or hash-only, got "${transactions}"`);
  }
  const ipfsUrl = envValue(env, 'IPFS_URL');
  return {
    rpcUrl,
    network,
    dataDir,
    port: integer(env, 'PORT', 8000, 0, 65535),
    pollIntervalMs: integer(env, 'INDEXER_POLL_INTERVAL_MS', DEFAULT_POLL_INTERVAL_MS, 10, 600_000),
    maxBlockRange: integer(env, 'INDEXER_MAX_BLOCK_RANGE', DEFAULT_MAX_RANGE, 1, 1_000_000),
    rangesAhead: integer(env, 'INDEXER_RANGES_AHEAD', MAX_RANGES_AHEAD, 1, 16),
    getLogsMaxAddresses: integer(
      env,
      'INDEXER_GET_LOGS_MAX_ADDRESSES',
      DEFAULT_MAX_ADDRESSES_PER_REQUEST,
      1,
      100_000,
    ),
    staticFiltersThreshold: integer(
      env,
      'INDEXER_STATIC_FILTERS_THRESHOLD',
      STATIC_FILTERS_ABOVE,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    commitIntervalMs: integer(env, 'INDEXER_COMMIT_INTERVAL_MS', DEFAULT_COMMIT_INTERVAL_MS, 0, 600_000),
    historyBlocks:
      envValue(env, 'INDEXER_HISTORY_BLOCKS') === undefined
        ? undefined
        : integer(env, 'INDEXER_HISTORY_BLOCKS', 0, 1, UNPRUNED_HISTORY_BLOCKS),
    reorgThreshold: integer(env, 'INDEXER_REORG_THRESHOLD', REORG_THRESHOLD, 0, 1_000_000),
    disableFailFast: flag(env, 'INDEXER_DISABLE_FAIL_FAST'),
    subgraphName,
    queryMaxResultBytes: integer(
      env,
      'INDEXER_QUERY_MAX_RESULT_BYTES',
      DEFAULT_MAX_RESULT_BYTES,
      1_000,
      Number.MAX_SAFE_INTEGER,
    ),
    queryTimeoutMs: integer(env, 'INDEXER_QUERY_TIMEOUT_MS', DEFAULT_QUERY_TIMEOUT_MS, 100, 3_600_000),
    rpcTimeoutMs: integer(env, 'INDEXER_RPC_TIMEOUT_MS', DEFAULT_RPC_TIMEOUT_MS, 1_000, 3_600_000),
    keepAliveTimeoutMs: keepAliveTimeoutFromEnv(env, Error),
    transactions,
    files: {
      ipfsUrl:
        ipfsUrl === undefined ? undefined : httpUrl('IPFS_URL', ipfsUrl, 'an IPFS gateway or kubo RPC API'),
      arweaveUrl: httpUrl(
        'ARWEAVE_URL',
        envValue(env, 'ARWEAVE_URL') ?? ARWEAVE_GATEWAY,
        'an Arweave gateway',
      ),
      timeoutMs: integer(env, 'INDEXER_FILE_TIMEOUT_MS', DEFAULT_FILE_TIMEOUT_MS, 100, 3_600_000),
      maxFileBytes: integer(env, 'INDEXER_FILE_MAX_BYTES', DEFAULT_MAX_FILE_BYTES, 1, 1024 * 1024 * 1024),
      maxRetryMs: integer(env, 'INDEXER_FILE_MAX_RETRY_MS', DEFAULT_FILE_MAX_RETRY_MS, 1_000, 86_400_000),
    },
  };
}
