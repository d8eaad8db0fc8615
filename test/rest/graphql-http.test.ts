// The HTTP rules of /graphql that rest/graphql-http.ts adds to Yoga's, over real HTTP and the
// registry alone: its answers say they vary by Accept and are not to be stored, an Accept range
// asking for UTF-8 by name is met, a Content-Type's media type is matched in any case (RFC 9110
// 8.3.1), and a body over the limit is told what to send instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GRAPHQL_NOT_ACCEPTABLE,
  MAX_GRAPHQL_BODY_BYTES,
  UTF8_CHARSET_PARAMETER,
} from '../../rest/graphql-http.ts';
import { listen, registryOnlyRestApp } from '../harness/stack.ts';

let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await listen(registryOnlyRestApp());
});
afterAll(() => server.close());

const QUERY = '{ protocol { version } }';
const post = (contentType: string, body: string) =>
  fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': contentType }, body });

describe('an answer of /graphql', () => {
  it.each([
    ['GET', () => fetch(`${server.url}/graphql?query=${encodeURIComponent(QUERY)}`)],
    ['POST', () => post('application/json', JSON.stringify({ query: QUERY }))],
  ])('to a %s says it varies by Accept and is not to be stored', async (_method, send) => {
    const response = await send();
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { protocol: { version: '1.0.0' } } });
    expect(response.headers.get('vary')).toBe('Accept');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('that refuses every media type the Accept header allows says it varies by Accept', async () => {
    const response = await fetch(`${server.url}/graphql?query=${encodeURIComponent(QUERY)}`, {
      headers: { accept: 'text/html' },
    });
    expect(response.status).toBe(406);
    expect(response.headers.get('vary')).toBe('Accept');
  });
});

describe('an Accept header', () => {
  const ask = (accept: string) =>
    fetch(`${server.url}/graphql?query=${encodeURIComponent(QUERY)}`, { headers: { accept } });

  it.each([
    [
      'application/graphql-response+json; charset=utf-8, application/json; charset=utf-8',
      'application/graphql-response+json; charset=utf-8',
    ],
    ['application/json;charset=UTF-8', 'application/json; charset=utf-8'],
    ['application/json; charset="utf-8"; q=0.9', 'application/json; charset=utf-8'],
  ])('asking for UTF-8 by name is met (%s)', async (accept, contentType) => {
    const response = await ask(accept);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(contentType);
    expect(await response.json()).toEqual({ data: { protocol: { version: '1.0.0' } } });
  });

  it.each([
    ['application/json ; charset=utf-8 ; q=1', 'application/json; charset=utf-8'],
    ['text/html, application/json;charset=utf-8;charset="UTF-8"', 'application/json; charset=utf-8'],
  ])('asking for UTF-8 by name with spaces or twice is met (%s)', async (accept, contentType) => {
    const response = await ask(accept);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(contentType);
  });

  it('is searched for a charset parameter only from where a run of spaces starts, so that a run is read once', () => {
    const accept = `application/json${' '.repeat(4)}; charset=utf-8`;
    const runStart = 'application/json'.length;
    const sticky = new RegExp(UTF8_CHARSET_PARAMETER.source, 'iy');
    const matchFrom = (index: number) => {
      sticky.lastIndex = index;
      return sticky.exec(accept)?.[0];
    };
    expect(matchFrom(runStart)).toBe('    ; charset=utf-8');
    expect([1, 2, 3].map((offset) => matchFrom(runStart + offset))).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  // each took the event loop for some 0.5 s while a match of the charset parameter was tried from
  // every space of the run; the answers show the parameter is still found beside such a run
  describe('holding a run of 15,000 spaces (nearly all Node lets a header have)', () => {
    const spaces = ' '.repeat(15_000);

    it.each([`application/json${spaces}, text/html`, `application/json;${spaces}charset=utf-8`])(
      'around a range it meets is answered (%#)',
      async (accept) => {
        const response = await ask(accept);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ data: { protocol: { version: '1.0.0' } } });
      },
    );

    it('inside a range it cannot meet is refused with 406', async () => {
      const response = await ask(`a${spaces}a`);
      expect(response.status).toBe(406);
      expect(((await response.json()) as { detail: string }).detail).toBe(GRAPHQL_NOT_ACCEPTABLE);
    });
  });

  it('asking for another charset is refused with a problem saying answers are UTF-8', async () => {
    const response = await ask('application/json; charset=iso-8859-1');
    expect(response.status).toBe(406);
    expect(((await response.json()) as { detail: string }).detail).toBe(
      '/graphql answers application/graphql-response+json, application/json, text/event-stream, multipart/mixed, in UTF-8; the Accept header allows none of them.',
    );
  });
});

describe('a POST body', () => {
  it.each([
    ['Application/JSON', JSON.stringify({ query: QUERY })],
    ['APPLICATION/JSON ; charset=utf-8', JSON.stringify({ query: QUERY })],
    ['Application/GraphQL', QUERY],
    ['application/X-WWW-Form-Urlencoded', `query=${encodeURIComponent(QUERY)}`],
  ])('is read whatever the case of its media type (%s)', async (contentType, body) => {
    const response = await post(contentType, body);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { protocol: { version: '1.0.0' } } });
  });

  it('of a form in another case is refused when it gives a parameter twice', async () => {
    const query = encodeURIComponent(QUERY);
    const response = await post('Application/x-www-form-urlencoded', `query=${query}&query=${query}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      parameter: 'query',
      detail: "Parameter 'query' must be given once.",
    });
  });

  it('over the limit is refused with 413 saying to send less or split the query, not to use variables', async () => {
    const query = `{ protocol { version ${' '.repeat(MAX_GRAPHQL_BODY_BYTES)} } }`;
    const response = await post('application/json', JSON.stringify({ query }));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      type: expect.stringMatching(/\/problems\/payload-too-large$/),
      detail: `A GraphQL request body may have at most ${MAX_GRAPHQL_BODY_BYTES} bytes; send a smaller document or smaller variables, or split the query into several requests.`,
    });
  });
});
