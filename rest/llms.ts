// Generates /llms.txt (llmstxt.org: a title, a summary and link lists) and /llms-full.txt
// (every endpoint with its parameters, fields, an example, errors, limits and caching, and the
// GraphQL gateway) from the route table, so the prose an agent reads can never disagree with the API.
import { DEFAULT_HEALTH_MAX_LAG_BLOCKS } from '../gateway/context.ts';
import { ERROR_CODES } from '../gateway/errors.ts';
import { MAX_INT, NAV_HISTORY_LIMIT, PAGE_LIMIT } from '../gateway/inputs.ts';
import { API_VERSION } from '../gateway/server.ts';
import {
  CLAIM_REVERTS,
  CLAIM_SENDER,
  CLAIM_SIGNATURE,
  CLAIMED_FRESHNESS,
} from '../gateway/claim-function.ts';
import { FUND_STATUS_MEANINGS } from '../gateway/types/fund-status.ts';
import { NAV_STATUSES_DESCRIBED } from '../gateway/types/nav-status.ts';
import { GRAPHQL_REQUEST_TYPES, MAX_GRAPHQL_BODY_BYTES } from './graphql-http.ts';
import {
  API_TITLE,
  exampleRequest,
  FRESHNESS_HEADERS,
  graphqlExampleQuery,
  GRAPHQL_EXTENSIONS,
  GRAPHQL_LIMITS,
  GRAPHQL_SUMMARY,
  NETWORK_EXAMPLES_NOTE,
  notFoundWhen,
  routeProblemKinds,
} from './openapi.ts';
import { DISCOVERY_DOCUMENTS } from './document-table.ts';
import { DEVNET_EXAMPLES, type DocumentExamples } from './examples.ts';
import { PROBLEM_KINDS } from './problems.ts';
import { DEFAULT_RATE_LIMIT, rateLimitStatement, type RateLimitConfig } from './rate-limit.ts';
import {
  CACHE_TIERS,
  DEPRECATED_ROUTES,
  isRequired,
  routeTable,
  type ParamSpec,
  type RouteSpec,
} from './routes.ts';
import { componentSchemas, type JsonSchema } from './schemas.ts';

/** where the registry's chain is, for the documents' opening line */
function chainPlace({ syntheticChainClock, registry }: DocumentExamples): string {
  if (syntheticChainClock) return 'a local development chain (the devnet)';
  return registry.chain.isTestnet ? `a public test network (${registry.chain.name})` : registry.chain.name;
}

/** the documents' opening line */
const summary = (examples: DocumentExamples) =>
  `Anonymous, read-only JSON API over a fund-vault protocol on ${chainPlace(examples)}: funds and their NAV (latest and history), live strategy allocations and reserves, dividend rounds with Merkle proofs for claiming, a strategy catalogue with ratings, settlement policies, registered contracts, and the indexed on-chain event stream.`;

/** a query value inside a Markdown link: parentheses encoded too, or `)` would end the link */
const linkEncode = (value: string) =>
  encodeURIComponent(value).replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** the example GET /graphql request, a URL that answers as it stands */
const graphqlExampleUrl = (baseUrl: string, examples: DocumentExamples) =>
  `${baseUrl}/graphql?query=${linkEncode(graphqlExampleQuery(examples))}`;

/** a route's line in llms.txt: a link to its example request, or plain text where it has none */
function endpointLine(baseUrl: string, route: RouteSpec, examples: DocumentExamples): string {
  const request = exampleRequest(route, examples);
  return request
    ? `- [GET ${route.path}](${baseUrl}${request}): ${route.summary}`
    : `- GET ${route.path}: ${route.summary}`;
}

/**
 * The one GraphQL request that tells which of a fund's rounds `address` can claim, with each claim
 * call: over REST it takes a dividends page per 100 rounds and a proof request per round.
 */
export const claimableDividendsQuery = (slug: string, address: string) =>
  `{ fund(slug: "${slug}") { dividends(limit: ${PAGE_LIMIT.maximum}) { items { epoch proof(address: "${address}") { amount amountRaw claimed claim { to data } } } nextCursor } } }`;

/**
 * what the claimable-dividends query answers, beside the query: which amount to show (amountRaw is
 * 10^decimals times larger), and which null proof means no dividend and which means not known yet
 */
export const CLAIMABLE_DIVIDENDS_ANSWER = `Show a person \`amount\`, the dividend as a decimal string in the fund's base asset (its decimals applied); \`amountRaw\` is the same dividend as an integer in base units (amount times 10^decimals: 10^6 for USDC), the value the claim call takes: never show or add up amountRaw as an amount. A round the address has no leaf in answers proof: null beside a NOT_FOUND error naming it: skip those. A proof (or dividends) that is null beside any other error (UPSTREAM_UNAVAILABLE, INTERNAL) means not known for now, never that there is no dividend: ask again later. A non-null nextCursor means older rounds: ask again with dividends(limit: ${PAGE_LIMIT.maximum}, cursor: "<nextCursor>")`;

/** the claimable-dividends query for the documents: the example recipient where the devnet scenario gives one */
const claimableDividendsExample = (examples: DocumentExamples) =>
  claimableDividendsQuery(examples.fund.slug, examples.scenario?.proof.account ?? '0x<holder address>');

/** a route's GraphQL document on one line */
const oneLine = (document: string) => document.replace(/\s+/g, ' ').trim();

/** /llms.txt of a service whose registry gives `examples` (default: the devnet's) */
export function llmsTxt(
  baseUrl: string,
  examples: DocumentExamples = DEVNET_EXAMPLES,
  rateLimit: RateLimitConfig | false = DEFAULT_RATE_LIMIT,
): string {
  const lines = [
    `# ${API_TITLE}`,
    '',
    `> ${summary(examples)}`,
    '',
    'Every /v1 endpoint is GET, needs no key, and returns JSON; errors are application/problem+json. Start with GET /v1/funds to learn fund slugs and GET /v1/strategies for strategy slugs.',
    '',
    GRAPHQL_SUMMARY,
    '',
    `Rate limits: ${rateLimitStatement(rateLimit)}`,
    '',
    `Claiming dividends: a proof (GET /v1/funds/{slug}/dividends/{epoch}/proof?address=0x…) carries \`claim\`, the DividendDistributor transaction that pays it: \`to\` and \`data\` ready to send, with its signature ${CLAIM_SIGNATURE}, selector and ordered args. ${CLAIM_SENDER}. Simulate it (eth_call) before sending: \`claimed\` may come from an HTTP cache up to ${CACHE_TIERS.history.maxAge} s old, and claim reverts while the fund's claims are paused (GET /v1/health pausedModules) or once claimed.`,
    '',
    `Which rounds an address can claim, in one request instead of a list call per page and a proof call per round: POST /graphql with the query \`${claimableDividendsExample(examples)}\`. ${CLAIMABLE_DIVIDENDS_ANSWER}.`,
    '',
    '## Docs',
    '',
    `- [Full reference](${baseUrl}${DISCOVERY_DOCUMENTS.llmsFull.path}): every endpoint, field, example, error, limit and cache lifetime`,
    `- [OpenAPI 3.1](${baseUrl}${DISCOVERY_DOCUMENTS.openapi.path}): machine-readable contract`,
    `- [agents.json](${baseUrl}${DISCOVERY_DOCUMENTS.agents.path}): flows "fund NAV lookup" and "dividend claim proof"`,
    '',
    '## Endpoints',
    '',
    ...routeTable(examples).map((route) => endpointLine(baseUrl, route, examples)),
    '',
    '## Optional',
    '',
    `- [GraphQL](${graphqlExampleUrl(baseUrl, examples)}): an example query; POST takes JSON or the document alone (application/graphql); llms-full.txt has a GraphQL section`,
    `- [GraphQL schema](${baseUrl}${DISCOVERY_DOCUMENTS.graphqlSchema.path}): the SDL of /graphql, every element described`,
    `- [AI plugin manifest](${baseUrl}${DISCOVERY_DOCUMENTS.aiPlugin.path})`,
    '',
  ];
  return lines.join('\n');
}

function resolve(schema: JsonSchema): JsonSchema {
  const ref = schema.$ref as string | undefined;
  return ref ? (componentSchemas[ref.split('/').pop() as string] as JsonSchema) : schema;
}

function typeOf(schema: JsonSchema): string {
  const s = resolve(schema);
  if (s.enum) return `one of ${(s.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  if (s.oneOf) return (s.oneOf as JsonSchema[]).map(typeOf).join(' or ');
  if (s.type === 'array') return `array of ${typeOf(s.items as JsonSchema)}`;
  const type = Array.isArray(s.type) ? s.type.join(' or ') : String(s.type ?? 'any');
  return s.format ? `${type} (${String(s.format)})` : type;
}

function fieldLines(schema: JsonSchema, indent: string, depth: number): string[] {
  const s = resolve(schema);
  const target = s.type === 'array' ? resolve(s.items as JsonSchema) : s;
  const objectSchema =
    target.oneOf !== undefined
      ? (target.oneOf as JsonSchema[]).map(resolve).find((o) => o.properties)
      : target.properties
        ? target
        : undefined;
  if (!objectSchema || depth > 4) return [];
  const properties = objectSchema.properties as Record<string, JsonSchema>;
  return Object.entries(properties).flatMap(([name, prop]) => {
    const description = (prop.description ?? resolve(prop).description) as string | undefined;
    return [
      `${indent}- ${name} (${typeOf(prop)})${description ? `: ${description}` : ''}`,
      ...fieldLines(prop, `${indent}  `, depth + 1),
    ];
  });
}

/** A `## title` section of llms-full.txt: its heading, a blank line, its lines and a blank line. */
const section = (title: string, ...lines: string[]): string[] => [`## ${title}`, '', ...lines, ''];

function conventionsSection(examples: DocumentExamples): string[] {
  return section(
    'Conventions',
    '- Every /v1 endpoint is GET (HEAD and OPTIONS also answer); no request body, no authentication, CORS allows every origin. /graphql also takes POST (see GraphQL below).',
    '- Amounts and NAV values are exact decimal strings (never floats); navPerShare has 6 decimal places; amounts carry the base asset decimals (USDC: 6).',
    '- Bps fields are integer basis points (10000 = 100%). Timestamps are ISO 8601 UTC with milliseconds. Dates are YYYY-MM-DD. Addresses are 0x hex.',
    '- Path `{slug}`: a fund slug from GET /v1/funds or a strategy slug from GET /v1/strategies (lowercase letters, digits and single hyphens). An unknown slug, in any case or format, answers 404 whose detail names the endpoint listing the valid ones.',
    `- Path \`{epoch}\`: an integer from 0 to ${MAX_INT}, a fund's daily settlement epoch number, counted per fund from 1 (never a date: two funds' epoch 1 may be different days): the rounds of GET /v1/funds/{slug}/dividends carry their epochs, and GET /v1/funds/{slug}/nav/history dates each epoch by settledAt, the time the vault settled it, which its NAV values the fund at (the NAV as of a given time is that of the latest epoch settled at or before it; publishedAt, days later, is when the record became final). Query \`address\` and \`contract\`: 0x followed by 40 hex digits (any case). \`eventName\`: one of the event names listed under GET /v1/events, exactly as written (case-sensitive); any other is refused with 400, which names the event meant when only the case or separators differ (nav_published). \`fromBlock\`/\`toBlock\`: integer block numbers, inclusive, toBlock >= fromBlock. Blocks past the answer's X-Indexed-Block are not indexed yet: an empty page for them says nothing about them.`,
    `- Paging (dividends, events): \`limit\` ${PAGE_LIMIT.minimum}..${PAGE_LIMIT.maximum}, default ${PAGE_LIMIT.default}; newest first; the body carries \`nextCursor\` (null on the last page); pass it back as \`cursor\` exactly as returned, with the same other parameters as the request that returned it (events: the same \`fund\`, \`contract\`, \`eventName\`, \`fromBlock\`, \`toBlock\`, each given with the same value or left out; \`limit\` may change; dividends: the same fund): a cursor cut short or altered, or sent with other filters, is refused with 400. Cursors encode the position (epoch, or block and log index) and, for events, the filters, so new data never shifts or repeats pages.`,
    `- NAV history: \`limit\` ${NAV_HISTORY_LIMIT.minimum}..${NAV_HISTORY_LIMIT.maximum}, default ${NAV_HISTORY_LIMIT.default}; without parameters the last ${NAV_HISTORY_LIMIT.default} epochs; ascending by epoch. A range holding more than \`limit\` epochs is answered in parts, which the body does not say: an answer that leaves epochs of the range out carries a Link header with rel="next" naming the request for the rest; follow it until an answer has none before presenting the range as complete. GraphQL navHistory carries no link: when it returns \`limit\` records, ask for the rest as its description says.`,
    '- Unknown query parameters are refused with 400, so a misspelt parameter never goes unnoticed.',
    ...(examples.scenario ? [] : [`- ${NETWORK_EXAMPLES_NOTE}`]),
  );
}

function statesSection(): string[] {
  return section(
    'States',
    `- NAV record status: ${NAV_STATUSES_DESCRIBED}`,
    `- Fund status: open (${FUND_STATUS_MEANINGS.open}), paused (${FUND_STATUS_MEANINGS.paused}; GET /v1/health pausedModules names which), closed (${FUND_STATUS_MEANINGS.closed}).`,
    `- Health status: ok, or degraded when the indexer reports indexing errors, lags the chain head by more than HEALTH_MAX_LAG_BLOCKS blocks (default ${DEFAULT_HEALTH_MAX_LAG_BLOCKS}), says it is not healthy (indexer.indexingHealth unhealthy or failed), or live chain reads fail.`,
  );
}

/** the problem format, the statuses every endpoint can answer, and every problem type */
function errorsSection(problemBase: string, rateLimit: RateLimitConfig | false): string[] {
  return section(
    'Errors',
    'Errors are application/problem+json (RFC 9457) with `type`, `title`, `status`, `detail` (what to fix) and `instance` (the request path); invalid-parameter problems add `parameter`. ' +
      `Every endpoint can answer ${rateLimit ? '400, 404, 414, 429 and 500' : '400, 404, 414 and 500'}; the /v1 endpoints that read the subgraph, a distribution file or the chain also 503 (/graphql says so in an error with extensions.code UPSTREAM_UNAVAILABLE). Problem types:`,
    '',
    ...Object.entries(PROBLEM_KINDS).map(
      ([kind, k]) => `- ${problemBase}/${kind}: ${k.status} ${k.title}. ${k.explanation} ${k.remedy}`,
    ),
  );
}

function limitsSection(rateLimit: RateLimitConfig | false): string[] {
  return section(
    'Limits',
    `- ${rateLimitStatement(rateLimit)}${rateLimit ? ' Every response within the limits carries IETF RateLimit and RateLimit-Policy headers for both policies ("burst", "sustained"); a 429 carries those of the policy it exceeded. A request refused before it is counted (a 414 URI too long, a 431 headers too large) carries none.' : ''}`,
  );
}

/** the cache tiers, and how old a reused answer may be */
function cachingSection(): string[] {
  return section(
    'Caching',
    'Every 200 of /v1 and of the discovery documents carries ETag and Cache-Control: public, max-age=<tier> (/graphql answers carry Cache-Control: no-store and Vary: Accept). Send If-None-Match with the ETag to get 304 Not Modified (same ETag and Cache-Control, no body). Errors carry Cache-Control: no-store. Tiers:',
    '',
    ...Object.entries(CACHE_TIERS).map(([name, t]) => `- ${name}: ${t.maxAge} seconds (${t.covers})`),
    '',
    `A tier's max-age is how long an HTTP cache between you and the service (browser, proxy, CDN) may reuse a response without asking: so long may a reused answer be old. The service itself answers current data: it rebuilds its own cached answer as soon as another block is indexed than the one it reflects (a newer one, or a reorg's) or a new deployment of the subgraph answers, or the chain head is no longer the block its live reads were made at. Two fields change sooner than their tier: the fund \`status\` of GET /v1/protocol (reference tier, up to ${CACHE_TIERS.reference.maxAge} s old; GET /v1/funds carries it in the ${CACHE_TIERS['latest-nav'].maxAge} s tier and GET /v1/health's pausedModules in the ${CACHE_TIERS.live.maxAge} s one) and a proof's \`claimed\` (history tier, up to ${CACHE_TIERS.history.maxAge} s old). To get the current value through a cache, revalidate: send If-None-Match with the ETag you hold (304 if it is still current, else the new body), or Cache-Control: no-cache.`,
  );
}

/** the freshness headers, and how to tell stale data: by blocks, and never by the devnet's clock */
function freshnessSection(examples: DocumentExamples): string[] {
  return section(
    'Freshness headers',
    'Responses say which block their data reflects (indexed data, and values read live from the chain), so stale data is visible without calling /v1/health:',
    '',
    ...Object.entries(FRESHNESS_HEADERS).map(([name, h]) => `- ${name}: ${h.description}`),
    '',
    `When is data stale: a chain without new transactions makes no new blocks, so an X-Indexed-Block that stays the same is no sign of trouble by itself. The index is stalled when the chain moves on and it does not: X-Indexed-Block-Lag grows from one response to the next, or across polls of GET /v1/health indexer.maxIndexedBlock stays the same while indexer.chainHeadBlock advances (indexer.lagBlocks, their difference, grows). Health's status turns degraded once lagBlocks passes HEALTH_MAX_LAG_BLOCKS (default ${DEFAULT_HEALTH_MAX_LAG_BLOCKS}) or indexer.hasIndexingErrors is true. An indexer that has halted is seen at once where the deployment exposes its status API: indexer.indexingHealth is failed and indexer.fatalError says why (null indexingHealth: the deployment cannot tell; go by the block numbers). X-Indexed-At and X-Data-Lag-Seconds count from the chain's block time: on a quiet chain the last block is old however current the index, so judge staleness by blocks.`,
    ...(examples.syntheticChainClock
      ? [
          '',
          "This deployment's chain is the local devnet, whose clock is synthetic: block timestamps start at its genesis, 2025-01-01T00:00:00Z, and the seeded scenario mines each simulated day's blocks at that day's time; after the scenario each transaction sent is mined at once, in a block of its own, and no block is mined without one. X-Indexed-At is therefore a 2025 date and X-Data-Lag-Seconds very large whatever the state of the index: here they say nothing about staleness; use the block rule above.",
        ]
      : []),
  );
}

function claimingSection(examples: DocumentExamples): string[] {
  return section(
    'Claiming dividends',
    `- GET /v1/funds/{slug}/dividends/{epoch}/proof?address=0x… (GraphQL: Fund.dividend(epoch).proof(address)) answers the proof and \`claim\`, the DividendDistributor transaction that pays it: \`to\` (the distributor) and \`data\` (the calldata), ready to send with no value, beside the function's signature ${CLAIM_SIGNATURE}, its 4-byte \`selector\` and its \`args\` in order (name, Solidity type, value). Encode the arguments yourself only with exactly these types: epoch is a uint64 and amount the uint256 amountRaw, and any other type makes another selector, a call to a function the contract does not have.`,
    `- ${CLAIM_SENDER}.`,
    `- ${CLAIM_REVERTS}.`,
    `- ${CLAIMED_FRESHNESS}.`,
    `- Which rounds an address can claim, in one request (over REST: a dividends page per ${PAGE_LIMIT.maximum} rounds, then a proof request per round): POST /graphql with the query \`${claimableDividendsExample(examples)}\`. ${CLAIMABLE_DIVIDENDS_ANSWER}.`,
  );
}

function graphqlSection(
  baseUrl: string,
  examples: DocumentExamples,
  rateLimit: RateLimitConfig | false,
): string[] {
  return section(
    'GraphQL',
    GRAPHQL_SUMMARY,
    '',
    `- Request: GET /graphql?query=<document>&variables=<JSON object>&operationName=<name>&extensions=<JSON object>, or POST /graphql with a body of at most ${MAX_GRAPHQL_BODY_BYTES} bytes in one of: ${GRAPHQL_REQUEST_TYPES.join(', ')}. JSON bodies are {"query", "variables", "operationName", "extensions"}; application/graphql is the document alone. Only query is required; extensions: ${GRAPHQL_EXTENSIONS}. Queries only: the API is read-only. In a GET or a form body give each of query, variables, operationName and extensions once: a repeated one is refused with 400 invalid-parameter naming it.`,
    `- Example: GET ${graphqlExampleUrl(baseUrl, examples)}`,
    "- The same data in the same units as the endpoints below, each of which names the query it runs. Argument names are the same, and most field names; the REST bodies reshape a few: a /v1/funds item's nav is Fund.latestNav and its baseAsset is Fund.baseAsset.symbol, /nav/history's points is Fund.navHistory, and the REST dividends page adds fund and count. GraphQL also has fields REST leaves out (Contract.kind, Protocol.network, ProtocolEvent.cursor, among others). One difference in units: ProtocolEvent.args carries raw on-chain integers (base units), as the schema describes.",
    `- Answers are {"data", "errors"}. Each error has a message saying what to fix, its path and locations, and extensions.code: ${ERROR_CODES.join(', ')}; a BAD_INPUT from an argument also names extensions.argument. Not-found messages name the query (and the REST request) listing the valid values.`,
    "- A field that fails on its own arguments (a slug or round that names nothing, a bad limit or cursor, an empty string for an optional argument) or on an upstream (UPSTREAM_UNAVAILABLE: Fund.status, latestNav, navHistory, dividends, allocations, reserve, MerkleProof.claimed, health's indexed fields) is null beside its error; its sibling fields are still answered, so health.status still says degraded while the subgraph fails. A request that cannot run at all (syntax, validation, limits, variables) is HTTP 400 with BAD_INPUT errors only.",
    `- ${GRAPHQL_LIMITS}${rateLimit ? ' The rate limits below apply to /graphql too.' : ''}`,
  );
}

function deprecatedSection(): string[] {
  return section(
    'Deprecated endpoints (410 Gone)',
    ...DEPRECATED_ROUTES.map((d) => `- GET ${d.path}: ${d.description} Use GET ${d.replacement}.`),
  );
}

/** a route's parameter line: where it goes, whether it is required, its default, and its rule */
function parameterLine(p: ParamSpec): string {
  const def =
    p.schema.type === 'integer' && p.schema.default !== undefined ? `, default ${p.schema.default}` : '';
  const required = isRequired(p) ? 'required' : 'optional';
  return `- ${p.name} (${p.in}, ${required}${def}): ${p.description}; ${p.rule}`;
}

/**
 * A route's `### GET path` block, ending with a blank line: what it answers, an example request, the
 * GraphQL query it runs, its parameters, its response fields and example, its errors and its cache.
 */
function endpointReference(
  route: RouteSpec,
  baseUrl: string,
  examples: DocumentExamples,
  rateLimit: RateLimitConfig | false,
): string[] {
  const request = exampleRequest(route, examples);
  const errors = routeProblemKinds(rateLimit).map(
    (kind) =>
      `${PROBLEM_KINDS[kind].status} ${kind}${kind === 'not-found' ? ` (${notFoundWhen(route)})` : ''}`,
  );
  return [
    `### GET ${route.path}`,
    '',
    `${route.summary}. ${route.description}`,
    '',
    ...(request ? [`Example: GET ${baseUrl}${request}`, ''] : []),
    `GraphQL query it runs (parameters as variables): \`${oneLine(route.document)}\``,
    '',
    ...(route.params.length ? ['Parameters:', '', ...route.params.map(parameterLine), ''] : []),
    'Response fields:',
    '',
    ...fieldLines({ $ref: `#/components/schemas/${route.responseSchema}` }, '', 0),
    '',
    ...(route.example !== undefined
      ? ['Example response:', '', '```json', JSON.stringify(route.example, null, 2), '```', '']
      : []),
    ...(route.nextPage ? [`Link header rel="next": ${route.nextPage.rule}.`, ''] : []),
    `Errors: ${errors.join(', ')}.`,
    `Cache: ${route.tier} tier, max-age ${CACHE_TIERS[route.tier].maxAge} seconds.`,
    '',
  ];
}

/**
 * /llms-full.txt of a service whose registry gives `examples` (default: the devnet's) and which
 * enforces `rateLimit` (default: the default limits): the conventions and rules every endpoint
 * shares, then each endpoint in full.
 */
export function llmsFullTxt(
  baseUrl: string,
  problemBase: string,
  examples: DocumentExamples = DEVNET_EXAMPLES,
  rateLimit: RateLimitConfig | false = DEFAULT_RATE_LIMIT,
): string {
  return [
    `# ${API_TITLE}: full reference`,
    '',
    `> ${summary(examples)}`,
    '',
    `Base URL: ${baseUrl}. API version ${API_VERSION}, carried in the /v1/ path prefix.`,
    '',
    ...conventionsSection(examples),
    ...statesSection(),
    ...errorsSection(problemBase, rateLimit),
    ...limitsSection(rateLimit),
    ...cachingSection(),
    ...freshnessSection(examples),
    ...claimingSection(examples),
    ...graphqlSection(baseUrl, examples, rateLimit),
    ...deprecatedSection(),
    // not a section(): each endpoint's block ends with its own blank line
    '## Endpoints',
    '',
    ...routeTable(examples).flatMap((route) => endpointReference(route, baseUrl, examples, rateLimit)),
  ].join('\n');
}
