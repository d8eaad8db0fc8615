// What the REST app does to every request before any route sees it: the security, CORS and Link
// headers every answer carries, the refusal of a missing Host, of two, or of one that is no host, the
// answer to a CORS preflight, the 405 that keeps the service read-only, and the 414 for an oversized
// URL. They run first (rest/app.ts mounts them ahead of the rate limiters), so a refused request
// costs no work.
import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { LOGO_PATH } from './document-table.ts';
import { DOCUMENT_PATHS } from './documents.ts';
import { GRAPHQL_METHODS, isGraphqlPath } from './graphql-http.ts';
import { badHostDetail, MAX_URL_LENGTH, problemBody, sendProblem, uriTooLongDetail } from './problems.ts';
import { problemBaseFor, type Replies } from './replies.ts';

export const READ_METHODS = 'GET, HEAD, OPTIONS';
/** A Host header: a name or IPv4 address, or an IPv6 address in brackets, with an optional port */
const HOST_HEADER = /^(?:[\w-]+(?:\.[\w-]+)*\.?|\[[\da-f:.]+\])(?::\d{1,5})?$/i;

/** Whether `host` can name the service in a URL: a name or address with an optional port. */
export function isHost(host: string): boolean {
  return HOST_HEADER.test(host);
}

/**
 * The base URL of the address a client connected to: it names the service in an answer made before
 * a valid Host can, where no PUBLIC_BASE_URL is configured.
 */
export function connectionBase(socket: Socket): string {
  const { localAddress, localPort } = socket;
  const address = (localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, '');
  return `http://${address.includes(':') ? `[${address}]` : address}:${localPort}`;
}

/**
 * The headers the service sets for its clients that a page of another origin could not read
 * otherwise (Cache-Control, Content-Type and Content-Length it always can): every header a route,
 * /graphql or the rate limiter sets beyond the security and CORS headers themselves.
 */
const EXPOSED_HEADERS = [
  'ETag',
  'Age',
  'Vary',
  'Link',
  'Allow',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-Chain-Block',
  'X-Indexed-Block',
  'X-Indexed-At',
  'X-Indexed-Block-Lag',
  'X-Data-Lag-Seconds',
].join(', ');

/**
 * helmet's security headers are static for a given configuration: they are collected once
 * and set together with the CORS and Link headers in a single step per request.
 */
function securityHeaders(): [string, string][] {
  const headers: [string, string][] = [];
  const collector = {
    setHeader: (name: string, value: unknown) => headers.push([name, String(value)]),
    removeHeader() {},
  };
  helmet({ crossOriginResourcePolicy: { policy: 'cross-origin' } })(
    {} as Request,
    collector as unknown as Response,
    () => {},
  );
  return headers;
}

/**
 * Sets the headers of every answer, then refuses a missing, repeated or malformed Host, answers a
 * CORS preflight and refuses a write; anything else goes on.
 */
export function requestGuard(
  config: { publicBaseUrl?: string; problemBase?: string },
  graphqlEndpoint: string,
  replies: Replies,
): RequestHandler {
  const everyResponse: [string, string][] = [
    ...securityHeaders(),
    ['Access-Control-Allow-Origin', '*'],
    ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
  ];
  return (req, res, next) => {
    for (const [name, value] of everyResponse) res.setHeader(name, value);
    const hostProblem = hostProblemOf(req, config.publicBaseUrl);
    if (hostProblem !== undefined) {
      refuseHost(req, res, hostProblem, config);
      return;
    }
    res.setHeader('Link', serviceDescription(replies.baseOf(req)));
    const methods = isGraphqlPath(req.path, graphqlEndpoint) ? GRAPHQL_METHODS : READ_METHODS;
    if (req.method === 'OPTIONS') {
      answerPreflight(req, res, methods);
      return;
    }
    // read-only surface: anything but GET/HEAD on /v1, the documents, the logo and problem pages is
    // 405 (in any case and with a trailing slash, as Express routes them)
    const path = req.path.toLowerCase().replace(/(.)\/$/, '$1');
    const guarded =
      path.startsWith('/v1') ||
      DOCUMENT_PATHS.includes(path) ||
      path === LOGO_PATH ||
      path.startsWith('/problems');
    if (guarded && req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', READ_METHODS);
      replies.problem(
        req,
        res,
        'method-not-allowed',
        `${req.method} is not allowed: this API is read-only; use GET.`,
      );
      return;
    }
    next();
  };
}

const MISSING_HOST =
  'The request has no Host header: an HTTP/1.1 request must name the host it is sent to (RFC 9112, section 3.2), as in Host: api.example.com.';
const repeatedHostDetail = (count: number) =>
  `The request has ${count} Host headers: a request must name the one host it is sent to in a single Host header (RFC 9112, section 3.2), as in Host: api.example.com.`;

/** The detail of the refusal of the Host of `req`; undefined when it names the service well. */
function hostProblemOf(req: Request, publicBaseUrl: string | undefined): string | undefined {
  // req.headers keeps the first of several Host lines, which a server must refuse (RFC 9112 3.2)
  // rather than pick one: the raw lines count them
  const lines = req.rawHeaders.filter((field, i) => i % 2 === 0 && field.toLowerCase() === 'host').length;
  if (lines > 1) return repeatedHostDetail(lines);
  // an HTTP/1.1 request must carry one (RFC 9112 3.2), even with an absolute-form target: the
  // service's server lets a request without through, to be refused here with a problem where Node's
  // refusal has an empty body
  if (lines === 0 && req.httpVersion === '1.1') return MISSING_HOST;
  // the Host (an absolute-form target's, rest/http-server.ts) names the links and problem types of
  // the answer without PUBLIC_BASE_URL: one that is no host would put a non-URI in them, and in
  // documents caches keep
  const host = req.get('host');
  if (publicBaseUrl === undefined && host !== undefined && !isHost(host)) return badHostDetail(host);
  return undefined;
}

/**
 * The Host refused cannot name the problem's type or Link: PUBLIC_BASE_URL does (PROBLEM_BASE the
 * type before it), else the address the client connected to, as in the refusals of the server
 * (rest/http-server.ts).
 */
function refuseHost(
  req: Request,
  res: Response,
  detail: string,
  config: { publicBaseUrl?: string; problemBase?: string },
): void {
  const base = config.publicBaseUrl ?? connectionBase(req.socket);
  res.setHeader('Link', serviceDescription(base));
  sendProblem(
    res,
    problemBody(problemBaseFor(config.problemBase, base), 'malformed-request', detail, req.path),
  );
}

/**
 * The Link every answer carries to openapi.json, under the public base URL `base`: a root-relative
 * one would leave a service a proxy serves below a path.
 */
const serviceDescription = (base: string) => `<${base}/openapi.json>; rel="service-desc"`;

/** CORS preflight: any origin, the read methods, whatever headers the client asks for */
function answerPreflight(req: Request, res: Response, methods: string): void {
  res.setHeader('Access-Control-Allow-Methods', methods);
  res.setHeader(
    'Access-Control-Allow-Headers',
    req.get('Access-Control-Request-Headers') ?? 'Accept, Content-Type, If-None-Match',
  );
  res.setHeader('Access-Control-Max-Age', '86400');
  res.setHeader('Allow', methods);
  res.status(204).end();
}

/**
 * An oversized URL is refused with a problem before any work; one to `graphqlEndpoint` is told to
 * come back with POST. (The gateway's endpoint is /graphql: createGateway fixes it.)
 */
export function urlLengthGuard(replies: Replies, graphqlEndpoint = '/graphql'): RequestHandler {
  return (req, res, next) => {
    if (req.originalUrl.length > MAX_URL_LENGTH) {
      const detail = uriTooLongDetail(req.originalUrl.length, isGraphqlPath(req.path, graphqlEndpoint));
      replies.problem(req, res, 'uri-too-long', detail);
      return;
    }
    next();
  };
}
