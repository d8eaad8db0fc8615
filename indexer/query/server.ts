// The HTTP face of the embedded indexer: graph-node's query endpoints `/subgraphs/name/<name>` and
// `/subgraphs/id/<deployment>`, and its index-node status API at `/graphql`, accepting GraphQL over
// POST (JSON body) or GET (query string). Requests are executed on the query workers
// (query-workers.ts); this thread only reads them and sends their answers, so it stays free for
// indexing. The indexer shares the process: no failure while handling a request escapes the
// handler, and a client gets bounded time (common/http-server-limits.ts) and body size to send one.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLimitedServer, DEFAULT_KEEP_ALIVE_TIMEOUT_MS } from '../../common/http-server-limits.ts';
import type { QueryApiName } from './query-worker.ts';
import type { QueryOutcome } from './query-workers.ts';

interface QueryServerOptions {
  /** served at /subgraphs/name/<subgraphName> */
  subgraphName: string;
  /** served at /subgraphs/id/<deployment> */
  deployment: string;
  /** executes a request, the JSON text of a GraphQLRequest (QueryWorkers.run) */
  run(api: QueryApiName, requestJson: string): Promise<QueryOutcome>;
  /** how long an idle keep-alive connection stays open (default DEFAULT_KEEP_ALIVE_TIMEOUT_MS) */
  keepAliveTimeoutMs?: number;
}

const MAX_BODY_BYTES = 1 << 20;

/** What reading a request's body came to: its text, or it was too large, or the client went away. */
type Body = { text: string } | { tooLarge: true } | { aborted: true };

/**
 * The request body; once it grows past MAX_BODY_BYTES, `tooLarge` and what is left is not read
 * (the caller answers 413 and closes the connection).
 */
function readBody(req: IncomingMessage): Promise<Body> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.off('data', onData);
        req.pause();
        resolve({ tooLarge: true });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve({ text: Buffer.concat(chunks).toString('utf8') }));
    req.on('error', () => resolve({ aborted: true }));
  });
}

/**
 * graph-node lets browsers on any origin query it (server/http/src/service.rs): its answers allow
 * every origin, and its preflight (OPTIONS) answer these headers and methods.
 */
const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'Content-Type, User-Agent',
  'access-control-allow-methods': 'GET, OPTIONS, POST',
};

/** Sends `text`, JSON, with graph-node's headers. */
function sendJson(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...CORS_HEADERS,
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, JSON.stringify(body), headers);
}

/** JSON's name for the type of `value`, as an error message names what was sent. */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/**
 * Why `variables` (parsed JSON) cannot be a request's variables, if it cannot: graph-node takes an
 * object or null (server/http/src/request.rs), and a query whose variables were dropped would
 * answer without the filters they held.
 */
function variablesError(variables: unknown): string | undefined {
  if (variables === undefined || variables === null) return undefined;
  if (typeof variables === 'object' && !Array.isArray(variables)) return undefined;
  return `Invalid query variables provided: "variables" must be a JSON object of values by variable name, not ${jsonType(variables)}`;
}

/** Why a POST body (parsed JSON) is not a GraphQL request, in graph-node's words, if it is not. */
function requestDataError(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return `Request data is not an object: send {"query": "<GraphQL document>", "variables": {...}}, not ${jsonType(data)}`;
  const request = data as Record<string, unknown>;
  if (!('query' in request)) return 'The "query" field is missing in request data';
  if (typeof request.query !== 'string')
    return `The "query" field is not a string: send the GraphQL document as text, not ${jsonType(request.query)}`;
  return variablesError(request.variables);
}

/** A request target as an error message quotes it: at most 200 characters. */
function quoted(target: string): string {
  return JSON.stringify(target.length > 200 ? `${target.slice(0, 200)}…` : target);
}

/**
 * A request the handler failed on (a bug): logged once, and answered 500 if nothing was sent yet;
 * else the connection is closed, the client seeing the answer cut short.
 */
function failRequest(res: ServerResponse, error: unknown): void {
  console.error('indexer query server: request failed:', error);
  try {
    if (res.headersSent) res.destroy();
    else send(res, 500, { errors: [{ message: 'Internal error while handling the request' }] });
  } catch {
    res.destroy();
  }
}

export function createQueryServer(options: QueryServerOptions): Server {
  const apis = new Map<string, QueryApiName>([
    [`/subgraphs/name/${options.subgraphName}`, 'subgraph'],
    [`/subgraphs/id/${options.deployment}`, 'subgraph'],
    ['/graphql', 'indexNode'],
  ]);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      const paths = `/subgraphs/name/${options.subgraphName}, /subgraphs/id/<deployment> or /graphql`;
      send(res, 400, {
        errors: [
          { message: `the request target ${quoted(req.url ?? '')} is not a valid URL: request ${paths}` },
        ],
      });
      return;
    }
    const api = apis.get(url.pathname.replace(/\/$/, ''));
    if (!api) {
      send(res, 404, { errors: [{ message: `no subgraph is served at ${url.pathname}` }] });
      return;
    }
    const respond = async (requestJson: string) => {
      const outcome = await options.run(api, requestJson);
      if ('failure' in outcome) failRequest(res, outcome.failure);
      else sendJson(res, outcome.status ?? 200, outcome.body);
    };
    const refuse = (message: string) => send(res, 400, { errors: [{ message }] });
    if (req.method === 'GET') {
      if (!url.searchParams.has('query')) {
        refuse('The "query" parameter is missing: send ?query=<GraphQL document>');
        return;
      }
      const variables = url.searchParams.get('variables') || 'null';
      let parsed: unknown;
      try {
        parsed = JSON.parse(variables);
      } catch {
        refuse('variables is not valid JSON');
        return;
      }
      const invalid = variablesError(parsed);
      if (invalid) {
        refuse(invalid);
        return;
      }
      const text = (name: string) => JSON.stringify(url.searchParams.get(name));
      // the variables as sent: writing them again would overflow the stack when nested deep
      await respond(
        `{"query":${text('query')},"variables":${variables},"operationName":${text('operationName')}}`,
      );
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(200, { ...CORS_HEADERS, 'content-type': 'text/html; charset=utf-8' }).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { ...CORS_HEADERS, allow: 'GET, OPTIONS, POST' }).end();
      return;
    }
    const body = await readBody(req);
    if ('aborted' in body) return;
    if ('tooLarge' in body) {
      // the rest of the body is not read: the connection closes once the answer is sent
      send(
        res,
        413,
        { errors: [{ message: `request body too large: at most ${MAX_BODY_BYTES} bytes` }] },
        { connection: 'close' },
      );
      return;
    }
    let data: unknown;
    try {
      data = JSON.parse(body.text);
    } catch {
      refuse('request body is not valid JSON');
      return;
    }
    const invalid = requestDataError(data);
    if (invalid) {
      refuse(invalid);
      return;
    }
    await respond(body.text);
  };

  return createLimitedServer((req, res) => {
    // nothing a request does may throw out of here: the indexer runs in the same process
    handle(req, res).catch((error: unknown) => failRequest(res, error));
  }, options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS);
}

/** Listens on `port` (0: OS-assigned) of 127.0.0.1 and resolves with the bound URL base. */
export function listen(server: Server, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address() as AddressInfo;
      resolve(`http://127.0.0.1:${address.port}`);
    });
  });
}
