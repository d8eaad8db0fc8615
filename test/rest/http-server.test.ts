// The service's HTTP server over raw sockets: the requests Node answers itself before the app sees
// them (refused by its parser, a method it does not know among them, an Expect other than
// 100-continue, CONNECT) and an HTTP/1.1 request without a Host, or with two, get a problem+json
// answer (Node's own is an empty body, or none) typed by the configured base or else the address
// connected to, and an absolute-form request target is routed by its path, its host standing for
// the Host header. The app is the real REST app over the registry alone, configured as main.ts
// configures it.
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  HEADERS_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
} from '../../common/http-server-limits.ts';
import { createServiceServer } from '../../rest/http-server.ts';
import { problemBaseFor } from '../../rest/replies.ts';
import { registryOnlyRestApp } from '../harness/stack.ts';

/** the service's server and app configured with PUBLIC_BASE_URL and PROBLEM_BASE `bases`, as main.ts builds them */
const serviceServer = (
  bases: { publicBaseUrl?: string; problemBase?: string },
  keepAliveTimeoutMs = DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
) =>
  createServiceServer(
    registryOnlyRestApp(bases),
    problemBaseFor(bases.problemBase, bases.publicBaseUrl),
    keepAliveTimeoutMs,
  );
const server = serviceServer({ problemBase: 'https://api.example/problems' });
/** the same without PUBLIC_BASE_URL or PROBLEM_BASE */
const unconfigured = serviceServer({});
/** the same with a PUBLIC_BASE_URL below a path, and no PROBLEM_BASE */
const prefixed = serviceServer({ publicBaseUrl: 'https://api.example.com/fund-data' });
let port: number;
let unconfiguredPort: number;
let prefixedPort: number;

async function listenOnLoopback(s: typeof server): Promise<number> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  return (s.address() as AddressInfo).port;
}

beforeAll(async () => {
  port = await listenOnLoopback(server);
  unconfiguredPort = await listenOnLoopback(unconfigured);
  prefixedPort = await listenOnLoopback(prefixed);
});
afterAll(async () => {
  for (const s of [server, unconfigured, prefixed]) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** Sends `request` as written to `to` and reads the answer until the server closes or answers whole. */
function exchange(request: string, to = port): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(to, '127.0.0.1', () => socket.write(request));
    let text = '';
    const done = () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body });
    };
    socket.on('data', (chunk) => {
      text += chunk.toString();
      const [head = '', body] = text.split('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(head)?.[1];
      if (body !== undefined && length !== undefined && Buffer.byteLength(body) >= Number(length)) {
        socket.destroy();
        done();
      }
    });
    socket.on('end', done);
    socket.on('error', reject);
  });
}

/** Sends `requests` in one packet and reads every answer until the server closes the connection. */
function pipelined(requests: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(requests));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('the service HTTP server', () => {
  it('gives a client 10 s to send the headers and 30 s for the whole request, as the indexer does', () => {
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([
      HEADERS_TIMEOUT_MS,
      REQUEST_TIMEOUT_MS,
      5_000,
    ]);
    expect([HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS]).toEqual([10_000, 30_000]);
  });

  it.each([
    ['get', 'get /v1/funds HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['FOO', 'FOO /v1/contracts HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['GETX', 'GETX /v1/contracts HTTP/1.1\r\nHost: a\r\n\r\n'],
  ])(
    'answers a method it does not know (%s) with a 400 problem naming it and the methods to use',
    async (method, request) => {
      const answer = await exchange(request);
      expect(answer.status).toBe(400);
      expect(answer.headers).toContain('content-type: application/problem+json');
      expect(JSON.parse(answer.body)).toEqual({
        type: 'https://api.example/problems/malformed-request',
        title: 'Bad Request',
        status: 400,
        detail: `The method '${method}' is none this service knows; methods are case-sensitive: use GET (or POST on /graphql).`,
      });
    },
  );

  it('names the unknown method of a request sent in one packet after another', async () => {
    const answers = await pipelined(
      'GET /v1/contracts HTTP/1.1\r\nHost: a\r\n\r\npost /graphql HTTP/1.1\r\nHost: a\r\n\r\n',
    );
    expect(answers).toContain(`"detail":"The method 'post' is none this service knows;`);
  });

  it('answers a request refused behind another in the same packet after the answer to the other', async () => {
    const answers = await pipelined(
      'GET /v1/contracts HTTP/1.1\r\nHost: a\r\n\r\nGET /v1/contracts HTTP/1.1\r\nHost: a\r\nX-Bad: \x01\r\n\r\n',
    );
    const [first, second, ...more] = answers.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(first).toContain('"count":');
    expect(second).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(more).toEqual([]);
  });

  it('shows at most 40 characters of an unknown method', async () => {
    const answer = await exchange(`${'X'.repeat(100)} /v1/contracts HTTP/1.1\r\nHost: a\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      detail: `The method '${'X'.repeat(40)}…' is none this service knows; methods are case-sensitive: use GET (or POST on /graphql).`,
    });
  });

  it('answers bytes that start with no method, as a TLS handshake, with a malformed-request problem', async () => {
    const answer = await exchange('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      type: 'https://api.example/problems/malformed-request',
      detail:
        'The HTTP request is malformed (HPE_INVALID_METHOD): check its request line, headers and framing.',
    });
  });

  it('answers headers over 16 KiB with a 431 problem', async () => {
    const answer = await exchange(
      `GET /v1/contracts HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toEqual({
      type: 'https://api.example/problems/header-fields-too-large',
      title: 'Request Header Fields Too Large',
      status: 431,
      detail: 'The request headers exceed 16 KiB; send fewer or shorter headers.',
    });
  });

  it('types a refusal with the address the client connected to when no base is configured', async () => {
    const answer = await exchange(
      `GET /v1/contracts HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      unconfiguredPort,
    );
    expect(JSON.parse(answer.body)).toMatchObject({
      type: `http://127.0.0.1:${unconfiguredPort}/problems/header-fields-too-large`,
      status: 431,
    });
  });

  it('answers a header holding a control character with a malformed-request problem', async () => {
    const answer = await exchange('GET /v1/contracts HTTP/1.1\r\nHost: a\r\nX-Bad: a\x01b\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ type: 'https://api.example/problems/malformed-request' });
  });

  it('answers an HTTP/1.1 request without a Host with a malformed-request problem', async () => {
    const answer = await exchange('GET /v1/contracts HTTP/1.1\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('content-type: application/problem+json');
    expect(JSON.parse(answer.body)).toEqual({
      type: 'https://api.example/problems/malformed-request',
      title: 'Bad Request',
      status: 400,
      detail:
        'The request has no Host header: an HTTP/1.1 request must name the host it is sent to (RFC 9112, section 3.2), as in Host: api.example.com.',
      instance: '/v1/contracts',
    });
  });

  it('types the refusal of a missing Host under PUBLIC_BASE_URL when no PROBLEM_BASE is set', async () => {
    const answer = await exchange('GET /v1/contracts HTTP/1.1\r\n\r\n', prefixedPort);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      type: 'https://api.example.com/fund-data/problems/malformed-request',
    });
  });

  it('types the refusal of a missing Host with the address the client connected to when no base is configured', async () => {
    const answer = await exchange('GET /v1/contracts HTTP/1.1\r\n\r\n', unconfiguredPort);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      type: `http://127.0.0.1:${unconfiguredPort}/problems/malformed-request`,
    });
  });

  it('refuses a request with two Host headers with a malformed-request problem saying to send one', async () => {
    const answer = await exchange(
      'GET /v1/contracts HTTP/1.1\r\nHost: evil.example\r\nHost: api.example\r\n\r\n',
      unconfiguredPort,
    );
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('content-type: application/problem+json');
    expect(JSON.parse(answer.body)).toEqual({
      type: `http://127.0.0.1:${unconfiguredPort}/problems/malformed-request`,
      title: 'Bad Request',
      status: 400,
      detail:
        'The request has 2 Host headers: a request must name the one host it is sent to in a single Host header (RFC 9112, section 3.2), as in Host: api.example.com.',
      instance: '/v1/contracts',
    });
  });

  it('serves an HTTP/1.0 request without a Host, which HTTP/1.0 does not require', async () => {
    const answer = await exchange('GET /v1/contracts HTTP/1.0\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ count: expect.any(Number) });
  });

  it('answers an Expect other than 100-continue with a malformed-request problem naming it', async () => {
    const answer = await exchange('GET /v1/contracts HTTP/1.1\r\nHost: a\r\nExpect: foo\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('content-type: application/problem+json');
    expect(JSON.parse(answer.body)).toEqual({
      type: 'https://api.example/problems/malformed-request',
      title: 'Bad Request',
      status: 400,
      detail:
        "The Expect header 'foo' asks for what this server does not do (it meets only 100-continue): send the request without it.",
    });
  });

  it('answers CONNECT with a method-not-allowed problem and the methods it allows', async () => {
    const answer = await exchange('CONNECT /v1/funds HTTP/1.1\r\nHost: a\r\n\r\n');
    expect(answer.status).toBe(405);
    expect(answer.headers).toContain('content-type: application/problem+json');
    expect(answer.headers).toContain('allow: get, head, options');
    expect(JSON.parse(answer.body)).toEqual({
      type: 'https://api.example/problems/method-not-allowed',
      title: 'Method Not Allowed',
      status: 405,
      detail: 'CONNECT is not allowed: this service is no proxy, and it is read-only; use GET.',
    });
  });

  it('routes an absolute-form request target by its path', async () => {
    const answer = await exchange(
      'GET http://api.example/v1/contracts HTTP/1.1\r\nHost: api.example\r\n\r\n',
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ count: expect.any(Number) });
  });

  it("names links and problem types with an absolute-form target's host, not the Host header", async () => {
    const answer = await exchange(
      'GET http://api.example.org:8443/v1/funds/nope HTTP/1.1\r\nHost: other.example\r\n\r\n',
      unconfiguredPort,
    );
    expect(answer.status).toBe(404);
    expect(answer.headers).toContain('link: <http://api.example.org:8443/openapi.json>; rel="service-desc"');
    expect(JSON.parse(answer.body)).toMatchObject({
      type: 'http://api.example.org:8443/problems/not-found',
    });
  });

  it('refuses an absolute-form target whose host is no host name or address', async () => {
    const answer = await exchange('GET http://a!b/v1/contracts HTTP/1.1\r\nHost: a\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      type: 'https://api.example/problems/malformed-request',
      detail:
        "The request target's host 'a!b' is not a host name or address with an optional port: send a path such as /v1/funds, with the host in the Host header.",
    });
  });

  it('refuses an absolute-form target that is no URL with a malformed-request problem', async () => {
    const answer = await exchange('GET http://[/v1/contracts HTTP/1.1\r\nHost: a\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      type: 'https://api.example/problems/malformed-request',
      detail: 'The request target is not a URL: send a path such as /v1/funds.',
    });
  });
});

describe('the service HTTP server: idle keep-alive connections', () => {
  /** a server keeping idle connections `keepAliveTimeoutMs`, listening on loopback, closed after `use` */
  async function withServer(keepAliveTimeoutMs: number, use: (port: number) => Promise<void>): Promise<void> {
    const s = serviceServer({}, keepAliveTimeoutMs);
    try {
      await use(await listenOnLoopback(s));
    } finally {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  }

  it('tells the client how long it keeps an idle connection: HTTP_KEEP_ALIVE_TIMEOUT_MS, in seconds', async () => {
    await withServer(65_000, async (to) => {
      const answer = await exchange('GET /v1/contracts HTTP/1.1\r\nHost: a\r\n\r\n', to);
      expect(answer.status).toBe(200);
      expect(answer.headers).toContain('connection: keep-alive\r\nkeep-alive: timeout=65');
    });
  });

  it('closes a connection itself once it has been idle for its keep-alive timeout', async () => {
    await withServer(1_000, async (to) => {
      const socket = connect(to, '127.0.0.1', () =>
        socket.write('GET /v1/contracts HTTP/1.1\r\nHost: a\r\n\r\n'),
      );
      let answered = '';
      socket.on('data', (chunk) => (answered += chunk.toString()));
      // the client never closes it: only the server's keep-alive timeout ends the connection
      await new Promise<void>((ended, failed) => {
        socket.on('end', ended);
        socket.on('error', failed);
      });
      socket.destroy();
      expect(answered).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(answered.toLowerCase()).toContain('keep-alive: timeout=1');
    });
  });
});
