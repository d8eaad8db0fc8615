// Requests the REST layer refuses before any query, over the registry alone (no upstream is
// reached): an empty query value, a bad value after a thousand other parameters, a non-GET method
// whatever the path's case, a Host header that is no host, which would otherwise be copied into
// problem types and document links, a path segment that is not percent-encoding, and a GraphQL
// parameter given twice in a GET or a form body, however many parameters come first; and /graphql
// served in any case of its path, as /v1 is.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, registryOnlyRestApp } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await listen(registryOnlyRestApp());
});
afterAll(() => server.close());

describe('an empty query value', () => {
  it.each([
    ['/v1/events?cursor=', 'cursor'],
    ['/v1/events?limit=', 'limit'],
    ['/v1/funds/harbor-stable-yield/nav/history?from=&to=', 'from'],
  ])('is refused with 400 naming it, not read as absent (%s)', async (path, parameter) => {
    const { status, body } = await call(server.url, path);
    expect(status).toBe(400);
    expect(body).toMatchObject({ parameter, detail: expect.stringContaining(`'${parameter}' is empty`) });
  });
});

describe('a query parameter after a thousand others', () => {
  // a thousand empty pairs, as short as a URL can carry that many
  const padding = '&'.repeat(1000);

  it('is read and checked as the first one is', async () => {
    const { status, body } = await call(server.url, `/v1/events?${padding}limit=abc`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ parameter: 'limit', detail: expect.stringContaining("got 'abc'") });
  });

  it('counts toward a GraphQL parameter given twice', async () => {
    const query = encodeURIComponent('{ protocol { version } }');
    const response = await fetch(`${server.url}/graphql?${padding}query=${query}&query=${query}`, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      parameter: 'query',
      detail: "Parameter 'query' must be given once.",
    });
  });
});

describe('a method other than GET', () => {
  it.each(['/v1/funds', '/V1/funds', '/v1/FUNDS', '/OPENAPI.JSON'])(
    'is 405 whatever the case of the path (%s)',
    async (path) => {
      const { status, headers } = await call(server.url, path, { method: 'POST' });
      expect(status).toBe(405);
      expect(headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    },
  );

  it.each(['/openapi.json/', '/v1/contracts/', '/logo.svg', '/problems/not-found/'])(
    'is 405 on what GET serves, the logo and a trailing slash included (%s)',
    async (path) => {
      expect((await fetch(`${server.url}${path}`)).status).toBe(200);
      const { status, headers } = await call(server.url, path, { method: 'POST' });
      expect(status).toBe(405);
      expect(headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    },
  );
});

describe('a Host header', () => {
  it.each(['a b', 'x"><y', 'host/path'])(
    'that is no host is refused with 400, typed by the address connected to (%s)',
    async (host) => {
      const response = await rawGet('/v1/contracts', host);
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body)).toMatchObject({
        type: `${server.url}/problems/malformed-request`,
        detail: expect.stringContaining('is not a host name or address'),
      });
    },
  );

  it.each(['api.example.com', 'api.example.com:8443', '127.0.0.1:80', '[::1]:8080', 'my_service'])(
    'that is a host with an optional port is served (%s)',
    async (host) => {
      const response = await rawGet('/v1/contracts', host);
      expect(response.status).toBe(200);
    },
  );
});

describe('a path segment that is not valid percent-encoding', () => {
  it.each([
    ['/v1/funds/%ZZ', 'slug', '%ZZ'],
    ['/V1/FUNDS/harbor-stable-yield/dividends/%E0%A4%A/', 'epoch', '%E0%A4%A'],
  ])('is refused with 400 naming the route parameter it is (%s)', async (path, parameter, segment) => {
    const { status, body } = await call(server.url, path);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      type: expect.stringMatching(/\/problems\/invalid-parameter$/),
      parameter,
      detail: `Parameter '${parameter}': '${segment}' is not valid percent-encoding (RFC 3986): follow each % with two hex digits, and send a % itself as %25.`,
    });
  });

  it('is refused as a malformed request where it is no route parameter', async () => {
    const { status, body } = await call(server.url, '/problems/%ZZ');
    expect(status).toBe(400);
    expect(body).toMatchObject({
      type: expect.stringMatching(/\/problems\/malformed-request$/),
      detail:
        "The path segment '%ZZ' is not valid percent-encoding (RFC 3986): follow each % with two hex digits, and send a % itself as %25.",
    });
    expect(body).not.toHaveProperty('parameter');
  });
});

describe('/graphql in another case', () => {
  const protocolVersion = encodeURIComponent('{ protocol { version } }');

  it.each(['/GraphQL', '/GRAPHQL', '/graphQL/'])(
    'answers a GET query as /graphql does (%s)',
    async (path) => {
      const response = await fetch(`${server.url}${path}?query=${protocolVersion}`, {
        headers: { accept: 'application/json' },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: { protocol: { version: '1.0.0' } } });
    },
  );

  it('answers a POST query as /graphql does', async () => {
    const response = await fetch(`${server.url}/GraphQL`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ protocol { version } }' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { protocol: { version: '1.0.0' } } });
  });

  it('advertises POST in a preflight as /graphql does', async () => {
    const preflight = await fetch(`${server.url}/GraphQL`, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, OPTIONS');
    expect(preflight.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
  });
});

describe('a GraphQL parameter given twice', () => {
  const twice = (name: string, value: string) =>
    `query=${encodeURIComponent('query A { protocol { version } }')}&${name}=${encodeURIComponent(value)}&${name}=${encodeURIComponent(value)}`;
  const repeats = [
    [
      'query',
      `query=${encodeURIComponent('{ protocol { version } }')}&query=${encodeURIComponent('{ protocol { version } }')}`,
    ],
    ['variables', twice('variables', '{}')],
    ['operationName', twice('operationName', 'A')],
    ['extensions', twice('extensions', '{}')],
  ];
  const postForm = (form: string) =>
    fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });

  /** Checks that `response` refuses `parameter` as given twice. */
  async function expectRefusedAsRepeated(response: Response, parameter: string): Promise<void> {
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({
      type: expect.stringMatching(/\/problems\/invalid-parameter$/),
      parameter,
      detail: `Parameter '${parameter}' must be given once.`,
    });
  }

  it.each(repeats)(
    'in a GET is refused with 400 naming it, not joined with a comma (%s)',
    async (parameter, search) => {
      const response = await fetch(`${server.url}/graphql?${search}`, {
        headers: { accept: 'application/json' },
      });
      await expectRefusedAsRepeated(response, parameter);
    },
  );

  it.each(repeats)(
    'in a form body is refused with 400 naming it, not read for its first value (%s)',
    async (parameter, form) => {
      await expectRefusedAsRepeated(await postForm(form), parameter);
    },
  );

  it('is not found in a form body that gives each once, which is answered', async () => {
    const response = await postForm(twice('operationName', 'A').replace(/&operationName=A$/, ''));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { protocol: { version: expect.any(String) } } });
  });
});

/** A GET with `host` as its Host header, which fetch does not let a client set. */
function rawGet(path: string, host: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
