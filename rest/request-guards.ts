// What the REST app does to every request before any route sees it: the security, CORS and Link
// headers every answer carries, the refusal of a missing Host or one that is no host, the answer to
// a CORS preflight, the 405 that keeps the service read-only, and the 414 for an oversized URL. They
// run first (rest/app.ts mounts them ahead of the rate limiters), so a refused request costs no work.
import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { LOGO_PATH } from './document-table.ts';
import { DOCUMENT_PATHS } from './documents.ts';
import { GRAPHQL_METHODS, isGraphqlPath } from './graphql-http.ts';
import { badHostDetail, MAX_URL_LENGTH, problemBody, sendProblem, uriTooLongDetail } from './problems.ts';
import type { Replies } from './replies.ts';

export const READ_METHODS = 'GET, HEAD, OPTIONS';
/** A Host header: a name or IPv4 address, or an IPv6 address in brackets, with an optional port */
const HOST_HEADER = /^(?:[\w-]+(?:\.[\w-]+)*\.?|\[[\da-f:.]+\])(?::\d{1,5})?$/i;
/**
 * The headers the service sets for its clients that a page of another origin could not read
 * otherwise (Cache-Control, Content-Type and Content-Length it always can): every header a route,
 * /graphql or the rate limiter sets beyond the security and CORS headers themselves.
 */
const EXPOSED_HEADERS = [
  'ETag',
  'Age',
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
 * Sets the headers of every answer, then refuses a missing or malformed Host, answers a CORS
 * preflight and refuses a write; anything else goes on.
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
    ['Link', '</openapi.json>; rel="service-desc"'],
  ];
  return (req, res, next) => {
    for (const [name, value] of everyResponse) res.setHeader(name, value);
    const host = req.get('host');
    // an HTTP/1.1 request must carry one (RFC 9112 3.2): the service's server lets a request without
    // through, to be refused here with a problem where Node's refusal has an empty body
    if (host === undefined && req.httpVersion === '1.1') {
      refuseHost(req, res, MISSING_HOST, config.problemBase);
      return;
    }
    // the Host names the links and problem types of the answer (without PUBLIC_BASE_URL): one that is
    // no host would put a non-URI in them, and in documents caches keep
    if (config.publicBaseUrl === undefined && host !== undefined && !HOST_HEADER.test(host)) {
      refuseHost(req, res, badHostDetail(host), config.problemBase);
      return;
    }
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

/** its problem type cannot be based on the Host it refuses: it is relative unless configured */
function refuseHost(req: Request, res: Response, detail: string, problemBase: string | undefined): void {
  sendProblem(res, problemBody(problemBase ?? '/problems', 'malformed-request', detail, req.path));
}

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
