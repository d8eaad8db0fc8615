// Property-based input testing of the REST surface (fast-check): arbitrary path segments, query
// parameters and headers on every /v1 endpoint of the route table, sent over real HTTP to the app
// over the indexed devnet. Whatever arrives, the answer is never a 5xx, never leaks a stack trace
// or an upstream's words, and every error is a problem+json body whose status is the HTTP status.
// Oversized URLs and GraphQL documents are refused with a problem naming the limit.
import { request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPRECATED_ROUTES, ROUTES } from '../../rest/routes.ts';
import { startRestService, type IndexedStack } from '../harness/stack.ts';
import { expectNoLeak, expectProblem } from './problems.ts';

const RUNS = 150;
let stack: IndexedStack;
let base: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ stack, base, stop } = await startRestService({
    publicBaseUrl: 'https://api.example',
    // forwarded addresses are fuzzed too: the limiter must cope with any of them
    trustProxy: 1,
    rateLimit: { perMinute: 1_000_000, burst: 1_000_000, burstWindowSeconds: 20 },
  }));
});
afterAll(async () => {
  await stop?.();
});

interface Raw {
  status: number;
  headers: Headers;
  text: string;
}

/** One request with the path sent byte for byte as given (fetch would normalise it). */
function send(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
  body?: string,
): Promise<Raw> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers: h, text: Buffer.concat(chunks).toString() });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function checkAnswer(response: Raw, method: string): void {
  expect(response.status, response.text.slice(0, 300)).toBeLessThan(500);
  expect(response.headers.get('x-powered-by')).toBeNull();
  if (method === 'HEAD' || response.status === 304) return;
  if (response.status === 200) {
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    JSON.parse(response.text);
    expectNoLeak(response.text);
    return;
  }
  expectProblem(response, response.status);
  expect([400, 404, 405, 410, 413, 414]).toContain(response.status);
}

// --- arbitraries -------------------------------------------------------------------------------

const fundSlugs = () => stack.devnet.ledger.funds.map((f) => f.slug);
const strategySlugs = () => stack.registry.strategies.map((s) => s.slug);

/** Text that survives as one path segment or query value once percent-encoded. */
const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.stringMatching(/^[a-z0-9-]{0,80}$/),
  fc.constantFrom('', ' ', '..', '.', '-', '--a', 'a--b', 'null', 'undefined', '__proto__', 'constructor'),
);
const numberText = fc.oneof(
  fc.integer({ min: -10, max: 3000 }).map(String),
  fc.constantFrom('0', '1', '89', '90', '91', '500', '501', '2147483647', '2147483648', '-0', '1e3', '1.5'),
  fc.constantFrom('0x10', ' 7', '7 ', '+7', '007', '9'.repeat(30), 'NaN', 'Infinity', '½'),
  fc.bigInt({ min: 0n, max: 10n ** 25n }).map(String),
);
/** Percent sequences that do not decode: the router must refuse them, not crash. */
const brokenEncoding = fc.constantFrom(
  '%',
  '%z',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%FF',
  '%00',
  '%25%',
  '%uD800',
);
const encoded = (text: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 4, arbitrary: text.map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.tuple(text.map(encodeURIComponent), brokenEncoding).map(([a, b]) => a + b) },
  );
const address = fc.oneof(
  fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
  fc.constantFrom(
    '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    '0x0000000000000000000000000000000000000000',
    '0x123',
    '70997970C51812dc3A010C7d01b50e0d17dc79C8',
  ),
);
const segmentFor = (name: string) => {
  if (name === 'epoch') return encoded(fc.oneof(numberText, anyText));
  const known = fc.constantFrom(...fundSlugs(), ...strategySlugs());
  return fc.oneof({ weight: 2, arbitrary: known }, { weight: 3, arbitrary: encoded(anyText) });
};
const queryValue = fc.oneof(
  numberText.map(encodeURIComponent),
  address,
  encoded(anyText),
  fc.constantFrom('NavPublished', 'ZTo1NDk3NTU4MTM4ODg', 'ZDoz', 'ZTo', 'e:1'),
);
const queryName = (accepted: string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: accepted.length ? fc.constantFrom(...accepted) : fc.constant('limit') },
    { weight: 1, arbitrary: encoded(anyText) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('limit[]', 'limit[a]', '__proto__', 'toString', 'hasOwnProperty'),
    },
  );
/** Header values Node's client can send (visible ASCII and spaces). */
const headerValue = fc.oneof(
  fc.string({ maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, '').trim()),
  fc.constantFrom('*', 'W/"x"', '"abc", W/"def"', '', 'application/json', 'text/html;q=0.1', 'bytes=0-10'),
);
const forwardedFor = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.constantFrom('unknown', '', ', ,', '999.1.1.1', '1.2.3.4, 5.6.7.8', '::ffff:1.2.3.4', 'not an ip'),
);
const headers = fc.record(
  {
    'If-None-Match': headerValue,
    Accept: headerValue,
    'Accept-Encoding': headerValue,
    'Accept-Language': headerValue,
    'X-Forwarded-For': forwardedFor,
    'X-Forwarded-Proto': headerValue,
    'X-Forwarded-Host': headerValue,
    Origin: headerValue,
    Range: headerValue,
    'Content-Type': headerValue,
    Cookie: headerValue,
    Authorization: headerValue,
  },
  { requiredKeys: [] },
);

const routeRequest = fc
  .constantFrom(...ROUTES.map((r) => r.path), ...DEPRECATED_ROUTES.map((r) => r.path))
  .chain((template) => {
    const route = ROUTES.find((r) => r.path === template);
    const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const accepted = route ? route.params.filter((p) => p.in === 'query').map((p) => p.name) : [];
    return fc.record({
      segments: fc.tuple(...names.map((n) => segmentFor(n))),
      query: fc.array(fc.tuple(queryName(accepted), queryValue), { maxLength: 4 }),
      trailingSlash: fc.boolean(),
      template: fc.constant(template),
      names: fc.constant(names),
    });
  })
  .map(({ template, names, segments, query, trailingSlash }) => {
    let path = template;
    names.forEach((name, i) => (path = path.replace(`{${name}}`, segments[i] as string)));
    if (trailingSlash) path += '/';
    if (query.length) path += `?${query.map(([k, v]) => `${k}=${v}`).join('&')}`;
    return path;
  });

// --- properties --------------------------------------------------------------------------------

describe('every /v1 endpoint under arbitrary input', () => {
  it('answers path and query parameters with 2xx/3xx or a problem, never a 5xx or a leak', async () => {
    await fc.assert(
      fc.asyncProperty(routeRequest, async (path) => checkAnswer(await send(path), 'GET')),
      { numRuns: RUNS },
    );
  });

  it('answers arbitrary headers and methods the same way', async () => {
    await fc.assert(
      fc.asyncProperty(
        routeRequest,
        headers,
        fc.constantFrom('GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'),
        async (path, headerSet, method) => {
          const body = method === 'GET' || method === 'HEAD' ? undefined : '{"query":"{ funds { slug } }"}';
          const response = await send(path, headerSet, method, body);
          checkAnswer(response, method);
          if (!['GET', 'HEAD'].includes(method)) expect(response.status).toBe(405);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('answers arbitrary paths under /v1 and elsewhere with a problem', async () => {
    const segment = fc.oneof(
      encoded(anyText),
      fc.constantFrom('v1', 'funds', 'nav', 'history', '..', '%2e%2e'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), async (segments) => {
        checkAnswer(await send(`/${segments.join('/')}`), 'GET');
      }),
      { numRuns: RUNS },
    );
  });
});

describe('oversized requests', () => {
  it('refuses a URL longer than the limit with 414 and a problem naming the limit', async () => {
    const slug = fundSlugs()[0] as string;
    const response = await send(`/v1/funds/${slug}/nav/history?from=1&to=${'9'.repeat(4000)}`);
    const body = expectProblem(response, 414, 'uri-too-long');
    expect(body.detail).toMatch(/\d+ (characters|bytes)/);
    const longPath = await send(`/v1/funds/${'a'.repeat(5000)}`);
    expectProblem(longPath, 414, 'uri-too-long');
  });

  it("answers a URL beyond Node's header limit with 431, not a dropped connection", async () => {
    const response = await send(`/v1/events?cursor=${'A'.repeat(20_000)}`);
    expect(response.status).toBe(431);
  });

  it('refuses a GraphQL document larger than the body limit with 413', async () => {
    const query = `{ funds { slug ${'name '.repeat(40_000)} } }`;
    const response = await send(
      '/graphql',
      { 'content-type': 'application/json' },
      'POST',
      JSON.stringify({ query }),
    );
    const body = expectProblem(response, 413, 'payload-too-large');
    expect(body.detail).toMatch(/\d+ bytes/);
  });

  it('refuses a GraphQL body of undeclared length (chunked) with 411, asking for a Content-Length', async () => {
    const url = new URL(base);
    const response = await new Promise<Raw>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: '/graphql', method: 'POST', agent: false },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: new Headers(res.headers as Record<string, string>),
              text,
            }),
          );
        },
      );
      req.setHeader('content-type', 'application/json');
      req.on('error', reject);
      req.write('{"query":');
      req.end('"{ funds { slug } }"}');
    });
    expect(expectProblem(response, 411, 'length-required').detail).toMatch(/Content-Length/);
  });

  it('refuses a GraphQL document in a GET query string over the URL limit with 414', async () => {
    const query = encodeURIComponent(`{ funds { slug ${'name '.repeat(1000)} } }`);
    expectProblem(await send(`/graphql?query=${query}`), 414, 'uri-too-long');
  });

  it('answers a document under the size limit but over the token limit with a GraphQL error', async () => {
    const query = `{ funds { slug ${'name '.repeat(2000)} } }`;
    const response = await send(
      '/graphql',
      { 'content-type': 'application/json' },
      'POST',
      JSON.stringify({ query }),
    );
    expect(response.status).toBeLessThan(500);
    const body = JSON.parse(response.text) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]?.message).toMatch(/token/i);
    expect(body.errors[0]?.extensions.code).toBe('BAD_INPUT');
  });
});
