// The service's HTTP server: the REST app behind Node's http server, with the limits Node leaves
// open (common/http-server-limits.ts: a client sending its headers or body slowly would hold a
// connection for minutes) and a problem+json answer to the requests Node answers itself before the
// app sees them, with an empty body or none at all: a malformed request line or header, a method
// Node does not know, headers over 16 KiB, a request too slow to arrive, an Expect other than
// 100-continue, and CONNECT. A request without a Host, which Node would refuse as well, goes on to
// the app's request guard (rest/request-guards.ts), which refuses it with a problem, as it refuses
// two Hosts.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { createLimitedServer, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../common/http-server-limits.ts';
import { problemBody, type ProblemKindName } from './problems.ts';
import { connectionBase, isHost, READ_METHODS } from './request-guards.ts';
import { problemBaseFor } from './replies.ts';

const REFUSALS: Record<string, { kind: ProblemKindName; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    kind: 'header-fields-too-large',
    detail: 'The request headers exceed 16 KiB; send fewer or shorter headers.',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    kind: 'request-timeout',
    detail: `The request did not arrive within ${REQUEST_TIMEOUT_MS / 1000} seconds (its headers within ${HEADERS_TIMEOUT_MS / 1000}).`,
  },
};

/**
 * The problem base of refusals made before any request names a host: the configured one, else the
 * address the client connected to, as the app's own problems use the Host the client sent.
 */
function refusalBase(problemBase: string | undefined, socket: Duplex): string {
  return problemBaseFor(problemBase, connectionBase(socket as Socket));
}

interface Refusal {
  status: number;
  title: string;
  headers: Record<string, string>;
  body: string;
}

/** A refusal's status line, headers (`extraHeaders` added) and problem+json body. */
function refusal(
  kind: ProblemKindName,
  detail: string,
  problemBase: string,
  extraHeaders: Record<string, string> = {},
): Refusal {
  // no request path is known to put in `instance`
  const { instance: _unknown, ...problem } = problemBody(problemBase, kind, detail, '');
  const body = JSON.stringify(problem);
  return {
    status: problem.status,
    title: problem.title,
    headers: {
      'Content-Type': 'application/problem+json',
      'Content-Length': String(Buffer.byteLength(body)),
      'Cache-Control': 'no-store',
      'Access-Control-Allow-Origin': '*',
      Connection: 'close',
      ...extraHeaders,
    },
    body,
  };
}

/** A refusal as the raw HTTP written to a socket that no ServerResponse answers on. */
function rawAnswer({ status, title, headers, body }: Refusal): string {
  return [
    `HTTP/1.1 ${status} ${title}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    body,
  ].join('\r\n');
}

/** A method as RFC 9110 (5.6.2) spells one: a token */
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~\dA-Za-z]+/;
const SHOWN_METHOD_LENGTH = 40;

/** What Node's parser tells of the bytes it refused besides the error's code. */
interface ParserError extends NodeJS.ErrnoException {
  /** the packet it was parsing */
  rawPacket?: Buffer;
  /** the offset in rawPacket of the byte refused */
  bytesParsed?: number;
}

/**
 * The method of the request line whose method Node's parser knows none of (HPE_INVALID_METHOD);
 * undefined when the line starts with no token, as bytes that are no HTTP (a TLS handshake) do.
 */
function unknownMethod({ rawPacket, bytesParsed = 0 }: ParserError): string | undefined {
  if (rawPacket === undefined) return undefined;
  const packet = rawPacket.toString('latin1');
  // the line refused starts after the last line end before the byte refused: requests sent ahead
  // of it in the same packet come first
  const line = packet.slice(packet.lastIndexOf('\n', bytesParsed - 1) + 1);
  return METHOD_TOKEN.exec(line)?.[0];
}

/** The kind and detail of the refusal of a request Node's parser refused with `error`. */
function clientErrorRefusal(error: ParserError): { kind: ProblemKindName; detail: string } {
  const known = REFUSALS[error.code ?? ''];
  if (known !== undefined) return known;
  const method = error.code === 'HPE_INVALID_METHOD' ? unknownMethod(error) : undefined;
  // a method Node does not know is none the service could serve on any path. RFC 9110 (9.1) would
  // have 501, but the service answers a client's mistake with a 4xx, never a 5xx (README): a 5xx
  // tells monitoring the service failed, and clients to retry the same request, which fails again
  if (method !== undefined) {
    const shown = method.length > SHOWN_METHOD_LENGTH ? `${method.slice(0, SHOWN_METHOD_LENGTH)}…` : method;
    return {
      kind: 'malformed-request',
      detail: `The method '${shown}' is none this service knows; methods are case-sensitive: use GET (or POST on /graphql).`,
    };
  }
  return {
    kind: 'malformed-request',
    detail: `The HTTP request is malformed (${error.code ?? 'unreadable'}): check its request line, headers and framing.`,
  };
}

/** An absolute-form request target (RFC 9112 3.2.2: `GET http://host/path`), which Express cannot route. */
const ABSOLUTE_FORM = /^[a-z][a-z\d+.-]*:\/\//i;

/** The absolute-form request target `url` as a URL, or why it cannot be served. */
function absoluteTarget(url: string): URL | string {
  const target = URL.parse(url);
  if (target === null) return 'The request target is not a URL: send a path such as /v1/funds.';
  if (target.host !== '' && !isHost(target.host))
    return `The request target's host '${target.host.slice(0, 80)}' is not a host name or address with an optional port: send a path such as /v1/funds, with the host in the Host header.`;
  return target;
}

/**
 * `app` served by a Node http server with the limits above, keeping an idle connection open for
 * `keepAliveTimeoutMs`; `problemBase` (else the address the client connected to) types its refusals.
 * An absolute-form target is routed by its path, as RFC 9112 asks a server to accept it, and its
 * host stands for the Host header (RFC 9112 3.2.2), naming links and problem types; one that is no
 * URL, or names no host, is refused. An expectation other than 100-continue is refused as a
 * malformed header (RFC 9110 10.1.1 lets a server answer 417, which no problem kind has; 400 names
 * the header to drop), and CONNECT with a 405: the service is read-only and no proxy.
 */
export function createServiceServer(
  app: Express,
  problemBase: string | undefined,
  keepAliveTimeoutMs: number,
): Server {
  // the answer each connection is writing, which a refusal written to its socket must not overtake
  const answering = new WeakMap<Duplex, ServerResponse>();
  const server = createLimitedServer(
    (req, res) => {
      answering.set(req.socket, res);
      if (req.url !== undefined && ABSOLUTE_FORM.test(req.url)) {
        const target = absoluteTarget(req.url);
        if (typeof target === 'string') {
          const answer = refusal('malformed-request', target, refusalBase(problemBase, req.socket));
          res.writeHead(answer.status, answer.headers).end(answer.body);
          return;
        }
        req.url = `${target.pathname}${target.search}`;
        // the Host lines stay in rawHeaders, where the request guard counts them
        if (target.host !== '') req.headers.host = target.host;
      }
      void app(req, res);
    },
    keepAliveTimeoutMs,
    { requireHostHeader: false },
  );
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const { status, headers, body } = refusal(
      'malformed-request',
      `The Expect header '${String(req.headers.expect).slice(0, 80)}' asks for what this server does not do (it meets only 100-continue): send the request without it.`,
      refusalBase(problemBase, req.socket),
    );
    res.writeHead(status, headers).end(body);
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const answer = refusal(
      'method-not-allowed',
      'CONNECT is not allowed: this service is no proxy, and it is read-only; use GET.',
      refusalBase(problemBase, socket),
      { Allow: READ_METHODS },
    );
    socket.end(rawAnswer(answer));
  });
  server.on('clientError', (error: ParserError, socket: Duplex) => {
    // a connection reset or already answered has no one to tell
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { kind, detail } = clientErrorRefusal(error);
    const answer = rawAnswer(refusal(kind, detail, refusalBase(problemBase, socket)));
    // a request pipelined behind one still being answered is refused after that answer, as HTTP/1.1
    // answers in order (RFC 9112 9.3.2); written at once, the refusal came first and the answer was lost
    const pending = answering.get(socket);
    if (pending === undefined || pending.writableFinished) socket.end(answer);
    else
      pending.once('finish', () => {
        if (socket.writable) socket.end(answer);
      });
  });
  return server;
}
