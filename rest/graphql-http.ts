// The HTTP rules of /graphql, checked before Yoga runs: which methods it answers, how large and of
// which media type a request body may be (matched in any case, as RFC 9110 8.3.1 asks and Yoga does
// not), which media types an answer can take (a range asking for UTF-8 by name included), that a
// GET gives each of its parameters once, in a
// GET's query string or a form body. Yoga refuses what breaks them with an empty body (405, 406,
// 415), not at all (HEAD) or misleadingly (a GET's repeated parameter joined with commas, a form's
// first value taken and the others dropped); here each refusal is a problem+json naming what to
// send instead, as every other refusal of the service is. Every answer says it varies by Accept and
// is not to be stored, which Yoga does not say.
// The path is matched in any case, as Express matches /v1's, and handed to Yoga as its endpoint.
import type { Request, RequestHandler, Response } from 'express';
import type { ProblemKindName } from './problems.ts';

/** largest GraphQL request body; armor's token limit bounds the document inside it */
export const MAX_GRAPHQL_BODY_BYTES = 65_536;
export const GRAPHQL_METHODS = 'GET, HEAD, POST, OPTIONS';
/** the request bodies Yoga parses (multipart uploads are off: nothing here takes a file) */
export const GRAPHQL_REQUEST_TYPES = [
  'application/json',
  'application/graphql+json',
  'application/graphql',
  'application/x-www-form-urlencoded',
];
/** the answers Yoga can give, in its order of preference */
const GRAPHQL_ANSWER_TYPES = [
  'application/graphql-response+json',
  'application/json',
  'text/event-stream',
  'multipart/mixed',
];

// variables travel in the same body: moving values into them saves nothing
export const GRAPHQL_BODY_TOO_LARGE = `A GraphQL request body may have at most ${MAX_GRAPHQL_BODY_BYTES} bytes; send a smaller document or smaller variables, or split the query into several requests.`;
export const GRAPHQL_LENGTH_REQUIRED = `A GraphQL request body must declare its Content-Length (at most ${MAX_GRAPHQL_BODY_BYTES} bytes).`;
export const GRAPHQL_NOT_ACCEPTABLE = `/graphql answers ${GRAPHQL_ANSWER_TYPES.join(', ')}, in UTF-8; the Accept header allows none of them.`;

/**
 * A `; charset=utf-8` parameter with the spaces around its `;`. A match starts only where spaces
 * start ((?<!\s)): tried at every space of a run, the leading \s* read the rest of the run each
 * time, so that a run of n spaces anywhere in the header cost n²/2 steps of the event loop (0.5 to
 * 1 s of it for the 16 KB of headers Node allows). It removes the same text: a match inside a run
 * could only follow a failed one from the run's start, whose \s* reads the run whole.
 */
export const UTF8_CHARSET_PARAMETER = /(?<!\s)\s*;\s*charset\s*=\s*(?:"utf-8"|utf-8)(?=\s*(?:[;,]|$))/gi;

/**
 * `accept` without the `charset=utf-8` parameters of its ranges. Every answer is UTF-8, and the
 * GraphQL-over-HTTP spec long had clients ask for it by name ("application/graphql-response+json;
 * charset=utf-8, application/json; charset=utf-8", which Relay sends); Express's negotiator matches a
 * range's parameters against the offered types', which name none, and so refused each of them.
 * Another charset stays, and is refused: Yoga answers in UTF-8 only.
 */
function withoutUtf8Charset(accept: string): string {
  return accept.replace(UTF8_CHARSET_PARAMETER, '');
}

export function unsupportedGraphqlBody(contentType: string | undefined): string {
  const sent =
    contentType === undefined ? 'A POST to /graphql without a Content-Type' : `Content-Type ${contentType}`;
  return `${sent} is not accepted: send {"query": "..."} as application/json (or the document alone as application/graphql).`;
}

/** the parameters of a GraphQL GET or form POST (GraphQL over HTTP), each of which Yoga reads once */
const GRAPHQL_PARAMETERS = ['query', 'variables', 'operationName', 'extensions'];
const FORM_TYPE = 'application/x-www-form-urlencoded';

type Refuse = (
  req: Request,
  res: Response,
  kind: ProblemKindName,
  detail: string,
  parameter?: string,
) => void;

/** Whether `path` is `endpoint` as Express routes it: in any case, with or without a trailing slash. */
export function isGraphqlPath(path: string, endpoint: string): boolean {
  return path.toLowerCase().replace(/(?<=.)\/$/, '') === endpoint;
}

/**
 * Yoga's own test of a Content-Type (case and all: it is given lowerMediaType's): the first of a
 * list, the media type alone or followed by parameters. A type it would not match must be refused
 * here, not by Yoga.
 */
function parsedByYoga(contentType: string): boolean {
  return GRAPHQL_REQUEST_TYPES.some((type) => isYogaMatch(contentType, type));
}

function isYogaMatch(contentType: string, type: string): boolean {
  const first = contentType.split(',')[0]!;
  return first === type || first.startsWith(`${type};`);
}

/**
 * `contentType` with its media type in lower case and without the spaces around it, for Yoga to
 * match; its parameters stay as sent, as their values may be case-sensitive.
 */
function lowerMediaType(contentType: string): string {
  return contentType.replace(/^[^;,]*/, (mediaType) => mediaType.trim().toLowerCase());
}

/** The body of `req`, which the checks above have bounded to MAX_GRAPHQL_BODY_BYTES, as text. */
function bodyText(req: Request): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

export function checkGraphqlRequest(refuse: Refuse, endpoint: string): RequestHandler {
  return async (req, res, next) => {
    // HEAD is GET without the body: Node's response already knows to send none
    if (req.method === 'HEAD') req.method = 'GET';
    // an answer's media type follows Accept, which Vary tells caches; its data is the indexer's of
    // the moment, with no validator to revalidate it by (the documents say /graphql answers are not
    // cached): no-store, where private, no-cache would keep it only to fetch it again
    res.vary('Accept');
    res.setHeader('Cache-Control', 'no-store');
    if (req.method !== 'GET' && req.method !== 'POST') {
      res.setHeader('Allow', GRAPHQL_METHODS);
      refuse(
        req,
        res,
        'method-not-allowed',
        `${req.method} is not allowed on /graphql: send a query with GET (?query=...) or POST.`,
      );
      return;
    }
    // Yoga reads the header from the request too, and takes a range without a charset as UTF-8
    if (req.headers.accept !== undefined) req.headers.accept = withoutUtf8Charset(req.headers.accept);
    if (!req.accepts(GRAPHQL_ANSWER_TYPES)) {
      refuse(req, res, 'not-acceptable', GRAPHQL_NOT_ACCEPTABLE);
      return;
    }
    const refuseRepeated = (isRepeated: (name: string) => boolean): boolean => {
      const repeated = GRAPHQL_PARAMETERS.find(isRepeated);
      if (repeated !== undefined)
        refuse(req, res, 'invalid-parameter', `Parameter '${repeated}' must be given once.`, repeated);
      return repeated !== undefined;
    };
    if (req.method === 'GET' && refuseRepeated((name) => Array.isArray(req.query[name]))) return;
    if (req.method === 'POST') {
      const sent = req.get('Content-Type');
      const contentType = sent === undefined ? undefined : lowerMediaType(sent);
      if (contentType === undefined || !parsedByYoga(contentType)) {
        refuse(req, res, 'unsupported-media-type', unsupportedGraphqlBody(sent));
        return;
      }
      // Yoga reads the header from the request
      req.headers['content-type'] = contentType;
      const declared = req.get('Content-Length');
      if (declared === undefined && req.get('Transfer-Encoding') !== undefined) {
        refuse(req, res, 'length-required', GRAPHQL_LENGTH_REQUIRED);
        return;
      }
      if (Number(declared ?? 0) > MAX_GRAPHQL_BODY_BYTES) {
        refuse(req, res, 'payload-too-large', GRAPHQL_BODY_TOO_LARGE);
        return;
      }
      if (isYogaMatch(contentType, FORM_TYPE) && Number(declared ?? 0) > 0) {
        let body: string;
        try {
          body = await bodyText(req);
        } catch {
          // the body breaks off only when its connection does: there is no one to answer
          return;
        }
        const form = new URLSearchParams(body);
        if (refuseRepeated((name) => form.getAll(name).length > 1)) return;
        // Yoga reads a body Express has already read from req.body
        req.body = body;
      }
    }
    // Yoga serves its endpoint's path only as written, and reads the path from originalUrl
    const query = req.originalUrl.indexOf('?');
    req.url = req.originalUrl = endpoint + (query === -1 ? '' : req.originalUrl.slice(query));
    next();
  };
}
