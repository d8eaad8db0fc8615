// What a page of another origin may read of the service's answers: a browser hides every response
// header but the CORS-safelisted ones unless Access-Control-Expose-Headers names it. Each header a
// route or /graphql sets for its clients (the freshness headers, X-Chain-Block of the live reads,
// ETag and Age) must be named there, over the shared indexed stack.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRestService, type IndexedStack } from '../harness/stack.ts';

let stack: IndexedStack;
let base: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ stack, base, stop } = await startRestService({ responseCacheEntries: 0 }));
});
afterAll(async () => {
  await stop?.();
});

/** Fetch's CORS-safelisted response headers, which a page reads whether exposed or not */
const SAFELISTED = [
  'cache-control',
  'content-language',
  'content-length',
  'content-type',
  'expires',
  'last-modified',
  'pragma',
];
const ORIGIN = { origin: 'https://agent.example', accept: 'application/json' };

const exposedBy = (headers: Headers) =>
  (headers.get('access-control-expose-headers') ?? '').split(', ').map((name) => name.toLowerCase());

/**
 * The headers of `path`'s answer that a 404's lacks (those every answer carries: the security
 * and CORS headers, Link, Date) and that a page could not read unexposed.
 */
async function routeHeaders(path: string): Promise<{ names: string[]; exposed: string[] }> {
  const everyAnswer = await fetch(`${base}/no-such-path`, { headers: ORIGIN });
  const answer = await fetch(`${base}${path}`, { headers: ORIGIN });
  expect(answer.status, path).toBe(200);
  const names = [...answer.headers.keys()].filter(
    (name) => !everyAnswer.headers.has(name) && !SAFELISTED.includes(name),
  );
  return { names, exposed: exposedBy(answer.headers) };
}

describe('Access-Control-Expose-Headers', () => {
  const slug = () => stack.devnet.ledger.funds[0]!.slug;
  const indexedQuery = () =>
    `/graphql?query=${encodeURIComponent(`{ fund(slug: "${slug()}") { latestNav { epoch } } }`)}`;
  const liveReserveQuery = () =>
    `/graphql?query=${encodeURIComponent(`{ fund(slug: "${slug()}") { reserve { balance } } }`)}`;

  it.each([
    ['a fund’s allocations', () => `/v1/funds/${slug()}/allocations`, 'x-chain-block'],
    ['a fund’s reserve', () => `/v1/funds/${slug()}/reserve`, 'x-chain-block'],
    ['the policies', () => '/v1/policies', 'x-chain-block'],
    ['a /graphql query of a live value', liveReserveQuery, 'x-chain-block'],
    ['the events', () => '/v1/events?limit=1', 'x-data-lag-seconds'],
    ['a /graphql query of indexed data', indexedQuery, 'x-indexed-block-lag'],
  ])('names every header the answer to %s sets for its clients', async (_name, path, carried) => {
    const { names, exposed } = await routeHeaders(path());
    // the answer does carry the header a page most needs to see of it
    expect(names).toContain(carried);
    expect(names.filter((name) => !exposed.includes(name))).toEqual([]);
  });

  it.each(['/v1/funds', '/graphql'])(
    'is the same on a CORS preflight of %s, X-Chain-Block included',
    async (path) => {
      const preflight = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://agent.example', 'access-control-request-method': 'GET' },
      });
      expect(preflight.status).toBe(204);
      const answer = await fetch(`${base}/v1/funds`, { headers: ORIGIN });
      expect(preflight.headers.get('access-control-expose-headers')).toBe(
        answer.headers.get('access-control-expose-headers'),
      );
      expect(exposedBy(preflight.headers)).toContain('x-chain-block');
    },
  );
});
