// The query server's HTTP edge, which shares the indexer's process: a request it cannot make sense
// of (a target that is no URL, a body over 1 MiB, a body or query string that is no GraphQL
// request, variables that are no object) is answered with a GraphQL-style error and the
// server keeps serving; a failure while handling a request is answered 500 with a message and
// logged once, never thrown out of the handler; and clients get bounded time to send a request.
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  HEADERS_TIMEOUT_MS,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
} from '../../common/http-server-limits.ts';
import type { QueryOutcome } from '../../indexer/query/query-workers.ts';
import { createQueryServer, listen } from '../../indexer/query/server.ts';
import {
  deployment,
  nav,
  navId,
  schema,
  serveHistory,
  vault3,
  fixtureQueryService,
  serveFixture,
  type ServedFixture,
} from './store-fixture.ts';

let history: ServedFixture;

beforeAll(async () => {
  history = await serveFixture();
});

afterAll(() => history?.close());

afterEach(() => {
  vi.restoreAllMocks();
});

/** Sends `request` as written on a connection of its own; resolves with all the server sent back. */
function sendRaw(request: string): Promise<string> {
  const { hostname, port } = new URL(history.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** Whether the server still answers a plain query. */
async function stillServes(): Promise<boolean> {
  const res = await fetch(history.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ _meta { block { number } } }' }),
  });
  const body = (await res.json()) as { data?: { _meta: { block: { number: number } } } };
  return res.status === 200 && body.data?._meta.block.number === 13;
}

describe('query server: requests it cannot make sense of', () => {
  it('answers a request target that is no URL with 400 and an error naming the paths it serves', async () => {
    const answer = await sendRaw(
      'GET http://[/subgraphs/name/fund-protocol HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(body!)).toEqual({
      errors: [
        {
          message:
            'the request target "http://[/subgraphs/name/fund-protocol" is not a valid URL: request /subgraphs/name/fund-protocol, /subgraphs/id/<deployment> or /graphql',
        },
      ],
    });
    expect(await stillServes()).toBe(true);
  });

  it('answers a body over 1 MiB with 413 and an error, and closes that connection', async () => {
    const res = await fetch(history.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat((1 << 20) + 1),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('connection')).toBe('close');
    expect(await res.json()).toEqual({
      errors: [{ message: 'request body too large: at most 1048576 bytes' }],
    });
    expect(await stillServes()).toBe(true);
  });

  it.each([
    [
      '[]',
      'Request data is not an object: send {"query": "<GraphQL document>", "variables": {...}}, not an array',
    ],
    [
      'null',
      'Request data is not an object: send {"query": "<GraphQL document>", "variables": {...}}, not null',
    ],
    ['{}', 'The "query" field is missing in request data'],
    ['{"query":5}', 'The "query" field is not a string: send the GraphQL document as text, not a number'],
    [
      '{"query":"{ funds { id } }","variables":"{\\"first\\":1}"}',
      'Invalid query variables provided: "variables" must be a JSON object of values by variable name, not a string',
    ],
    [
      '{"query":"{ funds { id } }","variables":[1]}',
      'Invalid query variables provided: "variables" must be a JSON object of values by variable name, not an array',
    ],
  ])('answers a body that is no GraphQL request (%s) with 400 saying what to send', async (body, message) => {
    const res = await fetch(history.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ errors: [{ message }] });
  });

  it.each([
    ['', 'The "query" parameter is missing: send ?query=<GraphQL document>'],
    [
      `?query=${encodeURIComponent('{ funds { id } }')}&variables=${encodeURIComponent('"{}"')}`,
      'Invalid query variables provided: "variables" must be a JSON object of values by variable name, not a string',
    ],
  ])(
    'answers a GET that is no GraphQL request (%s) with 400 saying what to send',
    async (search, message) => {
      const res = await fetch(`${history.url}${search}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ errors: [{ message }] });
    },
  );

  it('reads an empty operationName as none, as clients that name no operation send it', async () => {
    const res = await fetch(history.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ _meta { block { number } } }', operationName: '' }),
    });
    expect(await res.json()).toEqual({ data: { _meta: { block: { number: 13 } } } });
  });

  it('answers a body of exactly 1 MiB as any other', async () => {
    const query = '{ _meta { block { number } } }';
    const text = JSON.stringify({ query });
    const body = text.slice(0, -1) + ' '.repeat((1 << 20) - text.length) + '}';
    expect(Buffer.byteLength(body)).toBe(1 << 20);
    const res = await fetch(history.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { _meta: { block: { number: 13 } } } });
  });
});

describe('query server: failures while handling a request', () => {
  /** A query server on its own port whose requests come to `outcome`, for `check`; closed after. */
  async function withServer(
    outcome: () => Promise<QueryOutcome>,
    check: (base: string) => Promise<void>,
  ): Promise<void> {
    const server = createQueryServer({ subgraphName: 'fund-protocol', deployment, run: outcome });
    try {
      await check(await listen(server, 0));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  const postStatusQuery = (base: string) =>
    fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ indexingStatuses { health } }' }),
    });

  it.each([
    [
      'a query worker fails on a request',
      () => Promise.resolve({ failure: new Error('the query worker stopped while running the request') }),
      'the query worker stopped while running the request',
    ],
    ['handling a request throws', () => Promise.reject(new TypeError('a bug')), 'a bug'],
  ])('answers 500 with a message and logs the failure once when %s', async (_, outcome, cause) => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    await withServer(outcome, async (base) => {
      const res = await postStatusQuery(base);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({
        errors: [{ message: 'Internal error while handling the request' }],
      });
      expect(logged).toHaveBeenCalledTimes(1);
      expect(String(logged.mock.calls[0]![0])).toContain('request failed');
      expect(String(logged.mock.calls[0]![1])).toContain(cause);
    });
  });
});

describe('query server: time a client has to send a request', () => {
  it('gives a client 10 s to send the headers and 30 s for the whole request', () => {
    const server = createQueryServer({
      subgraphName: 'fund-protocol',
      deployment,
      run: () => Promise.reject(new Error('no request is sent')),
    });
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([
      HEADERS_TIMEOUT_MS,
      REQUEST_TIMEOUT_MS,
      DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    ]);
    expect([HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS]).toEqual([10_000, 30_000]);
  });
});

describe('query server: idle keep-alive connections', () => {
  it('keeps an idle connection open as long as it is told (HTTP_KEEP_ALIVE_TIMEOUT_MS), and says so', async () => {
    const longer = fixtureQueryService(history.fixture, { keepAliveTimeoutMs: 65_000 });
    try {
      const answer = await fetch(
        `${await longer.listen(0)}?query=${encodeURIComponent('{ _meta { deployment } }')}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get('keep-alive')).toBe('timeout=65');
      await answer.arrayBuffer();
    } finally {
      await longer.close();
    }
  });
});

describe('query server: a reference to an entity that does not exist', () => {
  it("is answered as graph-node answers it, naming the field, at the field's path", async () => {
    // a NAV record whose fund was never stored: the store holds what the mappings wrote
    const served = await serveHistory({
      schema,
      history: {
        10: (w) =>
          w.set(
            'NavRecord',
            navId(vault3, 1),
            nav({ vault: vault3, epoch: 1, status: 'Draft', navPerShare: 1n, block: 10 }),
          ),
      },
      startBlock: 10,
      headSeen: 10,
      deployment: 'QmDanglingFund',
      subgraphName: 'dangling',
    });
    try {
      const answer = await fetch(served.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ navRecords { epoch fund { slug } } }' }),
      });
      expect(await answer.json()).toMatchObject({
        errors: [
          { message: 'Null value resolved for non-null field `fund`', path: ['navRecords', 0, 'fund'] },
        ],
      });
    } finally {
      await served.close();
    }
  });
});
