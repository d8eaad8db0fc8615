// Requests the REST layer refuses before any query, over the registry alone (no upstream is
// reached): an empty query value, a non-GET method whatever the path's case, and a Host header that
// is no host, which would otherwise be copied into problem types and document links.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRestApp } from '../../rest/app.ts';
import { listen, registryOnlyGateway } from '../gateway/stack.ts';
import { call } from './openapi-responses.ts';

let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await listen(
    createRestApp({
      gateway: registryOnlyGateway(),
      trustProxy: false,
      rateLimit: false,
      responseCacheEntries: 0,
    }),
  );
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

describe('a method other than GET', () => {
  it.each(['/v1/funds', '/V1/funds', '/v1/FUNDS', '/OPENAPI.JSON'])(
    'is 405 whatever the case of the path (%s)',
    async (path) => {
      const { status, headers } = await call(server.url, path, { method: 'POST' });
      expect(status).toBe(405);
      expect(headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    },
  );
});

describe('a Host header', () => {
  it.each(['a b', 'x"><y', 'host/path'])('that is no host is refused with 400 (%s)', async (host) => {
    const response = await rawGet('/v1/contracts', host);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({
      type: '/problems/malformed-request',
      detail: expect.stringContaining('is not a host name or address'),
    });
  });

  it.each(['api.example.com', 'api.example.com:8443', '127.0.0.1:80', '[::1]:8080', 'my_service'])(
    'that is a host with an optional port is served (%s)',
    async (host) => {
      const response = await rawGet('/v1/contracts', host);
      expect(response.status).toBe(200);
    },
  );
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
