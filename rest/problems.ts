// RFC 9457 problem details: the one error body of the REST surface. Each kind has a page at
// {problem_base}/<kind> explaining it, so `type` is a link an agent can follow. The REST
// layer maps the gateway's error codes (never messages) to these kinds.
import type { Response } from 'express';
import type { ErrorCode } from '../gateway/errors.ts';

interface ProblemKind {
  status: number;
  title: string;
  /** shown on the kind's page and in llms-full.txt */
  explanation: string;
  /** what a client should do */
  remedy: string;
}

export const PROBLEM_KINDS = {
  'malformed-request': {
    status: 400,
    title: 'Bad Request',
    explanation:
      'The HTTP request itself is malformed (its request line, a header, or its framing), so no endpoint could read it.',
    remedy: 'Send a well-formed HTTP/1.1 request: a GET with a path, and headers of printable characters.',
  },
  'invalid-parameter': {
    status: 400,
    title: 'Bad Request',
    explanation:
      'A path or query parameter is malformed, out of bounds, or not accepted by the endpoint. The `parameter` member names it and `detail` states the rule.',
    remedy: 'Fix the named parameter as `detail` says and repeat the request.',
  },
  'not-found': {
    status: 404,
    title: 'Not Found',
    explanation:
      'The path names no resource: an unknown fund or strategy slug, an epoch without a record, an address without a dividend leaf, or an unknown path.',
    remedy:
      'List fund slugs with GET /v1/funds and strategy slugs with GET /v1/strategies; list dividend epochs with GET /v1/funds/{slug}/dividends. The endpoints are listed in /openapi.json and /llms.txt.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method Not Allowed',
    explanation:
      'The service is read-only: every endpoint answers GET, HEAD and OPTIONS only; /graphql also takes POST, for queries.',
    remedy: 'Use GET (or POST on /graphql); the `Allow` header lists the accepted methods.',
  },
  'not-acceptable': {
    status: 406,
    title: 'Not Acceptable',
    explanation:
      'The Accept header allows none of the media types /graphql answers: application/graphql-response+json, application/json, text/event-stream, multipart/mixed.',
    remedy: 'Accept application/json (or send no Accept header).',
  },
  gone: {
    status: 410,
    title: 'Gone',
    explanation: 'The endpoint was deprecated and removed. `detail` names its replacement.',
    remedy: 'Call the replacement endpoint named in `detail`.',
  },
  'length-required': {
    status: 411,
    title: 'Length Required',
    explanation:
      'A GraphQL request body was sent without a Content-Length (chunked), so its size is unknown.',
    remedy: 'Send the body with a Content-Length header.',
  },
  'request-timeout': {
    status: 408,
    title: 'Request Timeout',
    explanation: 'The request headers or body took longer to arrive than the service waits.',
    remedy: 'Send the whole request at once; every valid request of this API is small.',
  },
  'uri-too-long': {
    status: 414,
    title: 'URI Too Long',
    explanation:
      'The request URL (path and query string) is longer than the service accepts; `detail` gives the limit.',
    remedy:
      'Shorten the URL: every valid /v1 request fits well within the limit. A GraphQL query too long for a GET URL goes to /graphql with POST, in a JSON body {"query", "variables"}.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Content Too Large',
    explanation: 'A GraphQL request body is larger than the service accepts; `detail` gives the limit.',
    remedy:
      'Send a smaller document or smaller variables (they travel in the same body), or split the query into several requests.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported Media Type',
    explanation:
      'A POST to /graphql has no Content-Type, or one it does not parse: application/json (or application/graphql+json), application/graphql, application/x-www-form-urlencoded.',
    remedy: 'Send {"query": "...", "variables": {...}} as application/json.',
  },
  'header-fields-too-large': {
    status: 431,
    title: 'Request Header Fields Too Large',
    explanation: 'The request headers are larger than the service accepts (16 KiB in all).',
    remedy: 'Send fewer or shorter headers: no endpoint needs large ones.',
  },
  'rate-limited': {
    status: 429,
    title: 'Too Many Requests',
    explanation:
      'More requests came from your IP address than one of the rate limits allows: a burst limit and a sustained per-minute limit, stated in the RateLimit-Policy header and in /llms-full.txt.',
    remedy:
      'Wait the number of seconds in the `Retry-After` header (every 429 carries it), then retry. To stay under the limits, pace your requests by the RateLimit header of each answer, which says how many each limit has left.',
  },
  'internal-error': {
    status: 500,
    title: 'Internal Server Error',
    explanation: 'The service failed. The cause is logged on the server and not disclosed.',
    remedy: 'Retry later; report the `instance` and time if it persists.',
  },
  'upstream-unavailable': {
    status: 503,
    title: 'Service Unavailable',
    explanation:
      'A data source the answer depends on (the indexer, the chain RPC, or a dividend distribution) is unreachable, slow, or inconsistent with the chain. No stale value is passed off as live.',
    remedy:
      'Wait the number of seconds in the `Retry-After` header, then retry. Without `Retry-After`, the detail says retrying will not help: the upstream (a dividend distribution file, or the subgraph endpoint refusing the service, e.g. its API key) is wrong until the operator fixes it.',
  },
} as const satisfies Record<string, ProblemKind>;

export type ProblemKindName = keyof typeof PROBLEM_KINDS;

export const KIND_OF_CODE: Record<ErrorCode, ProblemKindName> = {
  NOT_FOUND: 'not-found',
  BAD_INPUT: 'invalid-parameter',
  UPSTREAM_UNAVAILABLE: 'upstream-unavailable',
  INTERNAL: 'internal-error',
  // only /graphql raises it, whose answers are GraphQL's
  PERSISTED_QUERY_NOT_SUPPORTED: 'invalid-parameter',
};

/** longest request target (path and query) accepted; every valid /v1 request is far shorter */
export const MAX_URL_LENGTH = 2048;

/**
 * The `detail` of a 414; `graphql`: the URL is a GraphQL GET, whose document may well be valid and
 * long, and which POST carries whatever its length.
 */
export const uriTooLongDetail = (length: number, graphql = false) =>
  `The request URL has ${length} characters; at most ${MAX_URL_LENGTH} are accepted.${graphql ? ' Send a query this long with POST /graphql, as a JSON body {"query": "...", "variables": {...}} (up to the body limit), instead of in the URL.' : ' Every valid /v1 request fits well within the limit.'}`;

/**
 * The `detail` of the 404 for a path that is no endpoint: one below an endpoint's, or unknown. `base`
 * is the public base URL the documents it names are under.
 */
export const noEndpointDetail = (path: string, base: string) =>
  `No endpoint at ${path}. The endpoints are listed in ${base}/openapi.json and ${base}/llms.txt.`;

/** The `detail` of the refusal of a Host header that is no host (rest/request-guards.ts). */
export const badHostDetail = (host: string) =>
  `The Host header '${host.slice(0, 80)}' is not a host name or address with an optional port.`;

/** seconds a client waits after a 503 */
export const UPSTREAM_RETRY_AFTER_SECONDS = 5;

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  parameter?: string;
}

export function problemBody(
  problemBase: string,
  kind: ProblemKindName,
  detail: string,
  instance: string,
  parameter?: string,
): Problem {
  const { status, title } = PROBLEM_KINDS[kind];
  const body: Problem = { type: `${problemBase}/${kind}`, title, status, detail, instance };
  if (parameter !== undefined) body.parameter = parameter;
  return body;
}

/**
 * `retryAfter`, for a 503: the seconds to wait before a retry (true: UPSTREAM_RETRY_AFTER_SECONDS),
 * or false for one that retrying will not mend (an upstream refused for good), which names no wait
 */
export function sendProblem(res: Response, body: Problem, retryAfter: boolean | number = true): void {
  res.status(body.status);
  res.setHeader('Content-Type', 'application/problem+json');
  // errors are never stored by shared caches
  res.setHeader('Cache-Control', 'no-store');
  if (body.status === 503 && retryAfter !== false && !res.getHeader('Retry-After')) {
    res.setHeader('Retry-After', String(retryAfter === true ? UPSTREAM_RETRY_AFTER_SECONDS : retryAfter));
  }
  res.end(JSON.stringify(body));
}

/** The page behind a problem `type` URI, linking the documents under the public base URL `base`. */
export function problemPage(kind: ProblemKindName, base: string): string {
  const { status, title, explanation, remedy } = PROBLEM_KINDS[kind];
  const escape = (text: string) =>
    text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const link = (path: string) => `<a href="${escape(base + path)}">${escape(base + path)}</a>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${status} ${escape(title)} (${kind})</title></head>
<body>
<h1>${status} ${escape(title)}</h1>
<p>Problem kind <code>${kind}</code>, returned as <code>application/problem+json</code> (RFC 9457).</p>
<h2>What it means</h2><p>${escape(explanation)}</p>
<h2>What to do</h2><p>${escape(remedy)}</p>
<p>See ${link('/llms-full.txt')} and ${link('/openapi.json')}.</p>
</body></html>
`;
}
