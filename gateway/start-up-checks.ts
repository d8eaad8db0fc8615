// What the service checks in network mode before it listens (devnet mode builds its own subgraph
// and chain, which cannot disagree): that SUBGRAPH_URL serves a graph-node-dialect subgraph, that
// SUBGRAPH_STATUS_URL, if set, is the status API of the indexer of that subgraph's deployment (on
// the network REGISTRY names), and that RPC_URL serves the chain REGISTRY describes, with contract code at every address the
// registry names and each fund's asset, share token, policy and decimals as the registry gives them,
// and that a DISTRIBUTIONS_BASE directory can be read. Without these, a wrong URL
// or registry still started and answered every request with a plausible but wrong body, or a 503
// "retry later" that no retry could fix.
//
// An upstream that cannot be reached at all is waited for, within a bound, rather than refused at
// once: the service usually starts beside its graph-node and node (one compose file, one pod), and
// a graph-node that is still starting or restarting is an outage of seconds, not a configuration
// error; refusing would turn it into a dead service wherever nothing restarts it. So is one that
// answers with its database down ("Store error: database unavailable", with HTTP 200), one whose
// connection closes mid-answer, and a subgraph that exists but has indexed no block yet (graph-node's
// "has not started syncing yet", The Graph's gateway's "no indexers found" just after publishing).
// Waiting without a bound would hide a mistyped host, so after DEFAULT_UPSTREAM_WAIT the refusal
// names the cause.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { BaseError, HttpRequestError, TimeoutError, getAddress, parseAbi } from 'viem';
import { answerTooLarge, boundedFetch, MAX_QUOTED_CHARS } from '../common/bounded-fetch.ts';
import { innermostCause, innermostMessage } from '../common/error-causes.ts';
import { httpEndpoint, scrubbedExcerpt, scrubUrls } from '../common/url.ts';
import { createChainSource, type ChainConfig } from './sources/chain.ts';
import {
  indexingStatusIn,
  STATUS_QUERY,
  type IndexingStatus,
  type StatusAnswer,
} from './sources/indexing-status.ts';
import type { Registry } from './sources/registry.ts';
import { readErrors } from './sources/subgraph.ts';

export interface UpstreamWait {
  /** how long an unreachable upstream is waited for before the start is refused */
  waitMs: number;
  /** the pause between two attempts */
  retryEveryMs: number;
  /** told once when the wait begins, so that a slow start says what it waits for */
  log: (line: string) => void;
}

export const DEFAULT_UPSTREAM_WAIT: Omit<UpstreamWait, 'log'> = { waitMs: 30_000, retryEveryMs: 2_000 };

/**
 * A failure that waiting may end: no answer at all (or one cut off), a timeout, a proxy saying its
 * upstream is down, graph-node saying its database is, or a subgraph with no block indexed yet
 * (`answered`: the upstream did answer). `remedy`: what the refusal says to do once the wait is over.
 */
class Unreachable extends Error {
  constructor(
    message: string,
    readonly answered = false,
    readonly remedy?: string,
  ) {
    super(message);
  }
}

/** Runs `attempt` until it succeeds, throws anything but Unreachable, or the wait is over. */
async function whenReachable<T>(what: string, attempt: () => Promise<T>, wait: UpstreamWait): Promise<T> {
  const started = performance.now();
  for (let first = true; ; first = false) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof Unreachable)) throw error;
      if (performance.now() - started + wait.retryEveryMs > wait.waitMs)
        throw new Error(
          `${error.answered ? 'still failing after' : 'no answer within'} ${wait.waitMs / 1000} s: ${error.message}${error.remedy === undefined ? '' : `: ${error.remedy}`}`,
        );
      if (first)
        wait.log(
          `waiting up to ${wait.waitMs / 1000} s for ${what} (${error.message}); retrying every ${wait.retryEveryMs / 1000} s`,
        );
      await sleep(wait.retryEveryMs);
    }
  }
}

const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);

/**
 * graph-node's words for a failure of its database or of its load, which it answers with HTTP 200
 * and which end as it recovers (graph/src/components/store/err.rs: DatabaseUnavailable,
 * StatementTimeout; graph/src/data/query/error.rs: Timeout, Throttled): "Store error: database
 * unavailable" while its Postgres restarts.
 */
const GRAPH_NODE_OUTAGE =
  /database unavailable|database query timed out|^Query timed out$|service is overloaded/;

interface SubgraphEndpoint {
  url: string;
  timeoutMs: number;
}

/**
 * What an endpoint's GraphQL `errors` say of it beyond its check's refusal: a state to wait out
 * (`waitFor`: what it is; `remedy`: what to do if it lasts), or another reason to refuse it.
 */
type ErrorsReading = { waitFor: string; remedy: string } | { refused: string } | undefined;

/** A GraphQL request a check sends, and what it says of an endpoint that answers it wrongly. */
interface CheckQuery {
  query: string;
  variables?: Record<string, unknown>;
  /** the endpoint's kind, as an answer too large to read names it */
  upstream: string;
  /** the request, as the refusals name it: "a _meta query" */
  asked: string;
  /** why an answer that is not JSON (or too large to be its answer) rules the endpoint out */
  notJson: string;
  /** why an answer with GraphQL errors, or a 4xx, rules the endpoint out */
  refused: string;
  /** reads the endpoint's GraphQL `errors` where they may say more than `refused` */
  readErrors?: (errors: unknown) => ErrorsReading;
}

/**
 * POSTs `check.query` to `endpoint` and gives the answer's data; refuses an HTTP error, a page that
 * is not JSON and GraphQL errors. A failure that waiting may end is Unreachable.
 */
async function askEndpoint(endpoint: SubgraphEndpoint, check: CheckQuery): Promise<unknown> {
  const { url, headers } = httpEndpoint(endpoint.url);
  const scrub = (message: string) => scrubUrls(message, [endpoint.url]);
  /** what the endpoint said, quoted as the failure log quotes it */
  const quote = (words: string) => JSON.stringify(scrubbedExcerpt(words, MAX_QUOTED_CHARS, [endpoint.url]));
  let response: Response;
  let text: string;
  try {
    // the body is read within the timeout and up to a size (an answer of gigabytes would take the
    // process's memory); a connection closed mid-body is no answer either
    response = await boundedFetch(check.upstream)(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: check.query, variables: check.variables }),
      signal: AbortSignal.timeout(endpoint.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    const tooLarge = answerTooLarge(error);
    if (tooLarge) throw new Error(`${tooLarge.reason}: ${check.notJson}`);
    throw new Unreachable(scrub(causeOf(error)));
  }
  if (TRANSIENT_STATUSES.has(response.status)) throw new Unreachable(`HTTP ${response.status}`);
  const answered = `it answered ${check.asked} with HTTP ${response.status}`;
  // a server's failure, not a sign of what it serves
  const failed = response.status >= 500 ? 'the server failed answering it (its log says why)' : undefined;
  let body: { data?: unknown; errors?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    const type = response.headers.get('content-type') ?? 'no content type';
    throw new Error(
      failed
        ? `${answered} (${type}): ${quote(text)}: ${failed}`
        : `${answered} (${type}), not JSON: ${check.notJson}`,
    );
  }
  const errors = Array.isArray(body?.errors)
    ? body.errors.map((e) => String((e as { message?: unknown } | null)?.message ?? JSON.stringify(e)))
    : [];
  const said = errors.length > 0 ? ` and the errors ${quote(errors.join('; '))}` : '';
  if (errors.length > 0 && errors.every((error) => GRAPH_NODE_OUTAGE.test(error)))
    throw new Unreachable(`${answered}${said}`, true);
  const read = errors.length > 0 ? check.readErrors?.(body.errors) : undefined;
  if (read && 'waitFor' in read)
    throw new Unreachable(`${read.waitFor}: ${answered}${said}`, true, read.remedy);
  if (errors.length > 0 || !response.ok)
    throw new Error(`${answered}${said}: ${failed ?? read?.refused ?? check.refused}`);
  return body?.data;
}

/**
 * Asks `url` for `_meta { block { number } }`, graph-node's dialect, and refuses any other answer:
 * an HTTP error (a path that serves no subgraph), a page that is not JSON, GraphQL errors, or a
 * GraphQL server of another schema. Unreachable, it is waited for (see the top of this file).
 * Resolves with the deployment it serves (`_meta.deployment`), null when it does not say.
 */
export async function checkSubgraphEndpoint(
  endpoint: SubgraphEndpoint,
  wait: UpstreamWait,
): Promise<string | null> {
  return whenReachable(
    'SUBGRAPH_URL',
    async () => {
      const data = (await askEndpoint(endpoint, {
        query: '{ _meta { block { number } deployment hasIndexingErrors } }',
        upstream: 'subgraph',
        asked: 'a _meta query',
        notJson: 'it is no graph-node subgraph endpoint',
        refused: 'it serves no graph-node subgraph there',
        readErrors: subgraphErrors,
      })) as { _meta?: { block?: { number?: unknown }; deployment?: unknown } } | null | undefined;
      if (typeof data?._meta?.block?.number !== 'number')
        throw new Error(
          'it answered a _meta query without _meta.block.number: it is no graph-node-dialect subgraph',
        );
      return typeof data._meta.deployment === 'string' ? data._meta.deployment : null;
    },
    wait,
  );
}

/**
 * What a subgraph endpoint's errors say beyond "no subgraph here": one that exists and has indexed
 * no block yet is waited for; a refusal of graph-node's or The Graph's gateway's that lasts (an API
 * key, a subgraph not deployed or published) says what to fix.
 */
function subgraphErrors(errors: unknown): ErrorsReading {
  const verdict = readErrors(errors);
  if (verdict.kind === 'unsynced')
    return {
      waitFor: 'the subgraph exists but has indexed nothing yet',
      remedy:
        'start the service once its indexer has indexed the first blocks (its indexing status shows how far it is)',
    };
  if (verdict.kind === 'refused') return { refused: verdict.refusal.remedy };
  return undefined;
}

/**
 * Asks the index-node status API at `endpoint` for `deployment`, the one SUBGRAPH_URL serves, and
 * refuses an endpoint that is no status API or does not know that deployment (the status API of
 * another graph-node, or of a query node, which indexes nothing). Unreachable, it is waited for.
 */
export async function checkIndexingStatusEndpoint(
  endpoint: SubgraphEndpoint,
  deployment: string | null,
  wait: UpstreamWait,
): Promise<IndexingStatus> {
  if (deployment === null)
    throw new Error(
      "SUBGRAPH_URL's _meta names no deployment, so its indexing status cannot be asked for: unset SUBGRAPH_STATUS_URL, or serve the subgraph from a graph-node that reports _meta.deployment",
    );
  return whenReachable(
    'SUBGRAPH_STATUS_URL',
    async () => {
      const data = await askEndpoint(endpoint, {
        query: STATUS_QUERY,
        variables: { deployment },
        upstream: 'index-node status API',
        asked: 'an indexingStatuses query',
        notJson: 'it is no index-node status API (graph-node serves one at :8030/graphql)',
        refused: 'it is no index-node status API (graph-node serves one at :8030/graphql)',
      });
      const status = indexingStatusIn((data ?? {}) as StatusAnswer, deployment);
      if (typeof status === 'string') throw new Error(status);
      return status;
    },
    wait,
  );
}

/**
 * The network the status API says the deployment indexes is the one `registry` describes: without
 * RPC_URL nothing else checks that REGISTRY is of the subgraph's chain, and health would report the
 * registry's chain id over another chain's data. Graph-node names networks as the manifest does,
 * and so does a registry (subgraph/networks.json's names); a status that names none is let be.
 */
export function checkIndexedNetwork(
  status: IndexingStatus,
  deployment: string,
  registry: Registry,
  registryFile: string,
): void {
  if (status.network === null || status.network === registry.network) return;
  throw new Error(
    `its deployment ${deployment} indexes network "${status.network}" (SUBGRAPH_STATUS_URL says), but REGISTRY ${registryFile} is for network "${registry.network}" (network): point SUBGRAPH_URL at the subgraph of ${registry.network}, or REGISTRY at the registry of ${status.network}`,
  );
}

/** The registry fields holding an address the service reads or describes, the gateway's own reads first. */
function registryAddresses(registry: Registry): { field: string; address: string }[] {
  return [
    ...registry.funds.map((fund, i) => ({ field: `funds[${i}].vault`, address: fund.vault })),
    ...registry.policies.map((policy, i) => ({ field: `policies[${i}].address`, address: policy.address })),
    ...registry.contracts.map((contract, i) => ({
      field: `contracts[${i}].address (${contract.kind})`,
      address: contract.address,
    })),
  ];
}

/**
 * Asks the node at `chain.rpcUrl` for its chain id and the code at every address `registry` names:
 * refuses another chain than the registry's chain.id, and addresses without code there (a registry
 * of another deployment), naming `registryFile`, each field and address. Unreachable, the node is
 * waited for (see the top of this file).
 */
export async function checkChainMatchesRegistry(
  chain: ChainConfig,
  registry: Registry,
  registryFile: string,
  wait: UpstreamWait,
): Promise<void> {
  const { client } = createChainSource(chain);
  const chainId = await whenReachable(
    'RPC_URL',
    async () => {
      try {
        return await client.getChainId();
      } catch (error) {
        // viem's own errors say what the node answered; anything else is an answer viem could not
        // even read as one (a GraphQL endpoint's JSON has no result: "Cannot convert undefined to a BigInt")
        if (!(error instanceof BaseError))
          throw new Error(
            `its answer to eth_chainId is no JSON-RPC result (${causeOf(error)})${RPC_ENDPOINT_REMEDY}`,
          );
        throw unreachableOr(error, chain.rpcUrl, 'it does not answer eth_chainId', RPC_ENDPOINT_REMEDY);
      }
    },
    wait,
  );
  if (chainId !== registry.chain.id)
    throw new Error(
      `it serves chain ${chainId}, but REGISTRY ${registryFile} is for chain ${registry.chain.id} (chain.id): point RPC_URL at a node of chain ${registry.chain.id}, or REGISTRY at the registry of chain ${chainId}`,
    );

  const firstFieldOf = new Map<`0x${string}`, string>();
  for (const { field, address } of registryAddresses(registry)) {
    const key = getAddress(address);
    if (!firstFieldOf.has(key)) firstFieldOf.set(key, field);
  }
  const codeless: string[] = [];
  await Promise.all(
    [...firstFieldOf].map(async ([address, field]) => {
      let code;
      try {
        code = await client.getCode({ address });
      } catch (error) {
        throw new Error(`it does not answer eth_getCode for ${address}: ${causeOf(error)}`);
      }
      if (code === undefined || code === '0x') codeless.push(`${field} ${address}`);
    }),
  );
  if (codeless.length > 0)
    throw new Error(
      `REGISTRY ${registryFile} names addresses without contract code on chain ${chainId}: ${codeless.sort().join(', ')}; it describes another deployment than the one RPC_URL serves`,
    );
  const disagreements = (
    await Promise.all(registry.funds.map((fund, i) => fundDisagreements(client, registry, fund, i)))
  ).flat();
  if (disagreements.length > 0)
    throw new Error(
      `REGISTRY ${registryFile} disagrees with the contracts on chain ${chainId}: ${disagreements.join('; ')}. The service formats amounts with the registry's decimals and reads reserve bounds from its policy, so every answer of these funds would be wrong: correct those fields`,
    );
}

const fundContractsAbi = parseAbi([
  'function asset() view returns (address)',
  'function shareToken() view returns (address)',
  'function policy() view returns (address)',
  'function decimals() view returns (uint8)',
]);

/**
 * Where the registry's fund `fund` (funds[i]) says otherwise than its contracts: the vault's asset,
 * share token and policy, and the decimals of its base asset and share token (share amounts are
 * formatted with the base asset's decimals, so the two must be equal). A code check passes a
 * registry that names the right contracts under the wrong fund, or the wrong decimals, and every
 * amount was then off by powers of ten, or the reserve bounds another policy's.
 */
async function fundDisagreements(
  client: ReturnType<typeof createChainSource>['client'],
  registry: Registry,
  fund: Registry['funds'][number],
  i: number,
): Promise<string[]> {
  const read = async (address: string, functionName: 'asset' | 'shareToken' | 'policy' | 'decimals') => {
    try {
      return await client.readContract({ address: getAddress(address), abi: fundContractsAbi, functionName });
    } catch (error) {
      throw new Error(`it does not answer ${functionName}() of ${address}: ${causeOf(error)}`);
    }
  };
  const policy = registry.policies.find((p) => p.slug === fund.policy)!;
  const [asset, shareToken, policyAddress, baseDecimals, shareDecimals] = await Promise.all([
    read(fund.vault, 'asset'),
    read(fund.vault, 'shareToken'),
    read(fund.vault, 'policy'),
    read(fund.baseAsset.address, 'decimals'),
    read(fund.shareToken, 'decimals'),
  ]);
  const at = `funds[${i}]`;
  const same = (a: unknown, b: string) => getAddress(String(a)) === getAddress(b);
  const found: string[] = [];
  if (!same(asset, fund.baseAsset.address))
    found.push(`${at}.baseAsset.address is ${fund.baseAsset.address}, but the vault's asset() is ${asset}`);
  if (!same(shareToken, fund.shareToken))
    found.push(`${at}.shareToken is ${fund.shareToken}, but the vault's shareToken() is ${shareToken}`);
  if (!same(policyAddress, policy.address)) {
    const named = registry.policies.find((p) => same(policyAddress, p.address));
    found.push(
      `${at}.policy is "${fund.policy}" (${policy.address}), but the vault's policy() is ${policyAddress}${named ? ` (policy "${named.slug}")` : ''}`,
    );
  }
  if (Number(baseDecimals) !== fund.baseAsset.decimals)
    found.push(
      `${at}.baseAsset.decimals is ${fund.baseAsset.decimals}, but the token's decimals() is ${baseDecimals}`,
    );
  if (Number(shareDecimals) !== Number(baseDecimals))
    found.push(
      `${at}.shareToken has ${shareDecimals} decimals and the base asset ${baseDecimals}: the service formats share amounts with the base asset's decimals`,
    );
  return found;
}

/**
 * A DISTRIBUTIONS_BASE that is a directory exists and this process can read it. A mistyped one
 * started, and then every proof answered 503 blaming the round's file.
 */
export async function checkDistributionsDirectory(dir: string): Promise<void> {
  const fix =
    'set it to the directory holding distributions/<fund>/<epoch>.json (the parent of distributions/), or to an http(s) base URL';
  try {
    if (!(await stat(dir)).isDirectory()) throw new Error(`it is not a directory: ${fix}`);
    await access(dir, constants.R_OK | constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    throw new Error(`it cannot be read (${code === 'ENOENT' ? 'no such directory' : code}): ${fix}`);
  }
}

/** what an RPC_URL that answers, but not as a chain's node, should be instead */
const RPC_ENDPOINT_REMEDY = ": point RPC_URL at the chain's JSON-RPC endpoint";

/**
 * A viem failure as Unreachable when waiting may end it, otherwise as an error saying `refusal`,
 * the cause, then `remedy`.
 */
function unreachableOr(error: unknown, url: string, refusal: string, remedy: string): Error {
  const cause = scrubUrls(causeOf(error), [url]);
  const http = error instanceof BaseError ? error.walk((e) => e instanceof HttpRequestError) : null;
  // an HttpRequestError without a status is a request that got no answer at all
  const status = http instanceof HttpRequestError ? http.status : undefined;
  const timedOut = error instanceof BaseError && error.walk((e) => e instanceof TimeoutError) !== null;
  if (timedOut || (http !== null && (status === undefined || TRANSIENT_STATUSES.has(status))))
    return new Unreachable(cause);
  return new Error(`${refusal}: ${cause}${remedy}`);
}

/**
 * What failed, in a line: an RPC's HTTP status, or the innermost message of an error chain (a fetch
 * failure's cause says what failed: ECONNREFUSED …).
 */
function causeOf(error: unknown): string {
  const http = error instanceof BaseError ? error.walk((e) => e instanceof HttpRequestError) : null;
  if (http instanceof HttpRequestError && http.status !== undefined) return `HTTP ${http.status}`;
  const cause = innermostCause(error);
  return cause instanceof BaseError ? cause.shortMessage : innermostMessage(cause);
}
