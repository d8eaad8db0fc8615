// Client mistakes on /graphql over real HTTP: a body or query string that is not JSON, a syntax or
// validation error, an unknown operation name, a variable of the wrong type. Each is answered with
// BAD_INPUT, graphql-js's (or our) message naming what to fix, HTTP 400 whatever the client
// accepts, and nothing from inside (no originalError, no stack). None of them reaches an upstream,
// so the gateway has the registry only.
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../rest/openapi-responses.ts';
import { createGateway } from '../../gateway/server.ts';
import { loadRegistry } from '../../gateway/sources/registry.ts';
import { graphql, listenRest, REGISTRY_FILE, registryOnlyGateway } from '../harness/stack.ts';

let base: string;
let close: () => Promise<void>;
/** what the gateway logged as errors */
const logged: unknown[] = [];

beforeAll(async () => {
  const gateway = registryOnlyGateway({ logError: (error) => logged.push(error) });
  ({ url: base, close } = await listenRest(gateway, { responseCacheEntries: 10 }));
});
afterAll(async () => {
  await close?.();
});

async function answer(response: Response): Promise<{ status: number; body: unknown }> {
  return { status: response.status, body: await response.json() };
}

const post = async (body: string) =>
  answer(
    await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
  );

const postQuery = (query: string, extra: Record<string, unknown> = {}) =>
  post(JSON.stringify({ query, ...extra }));

/** The one answer to a client mistake: 400 and a single BAD_INPUT error. */
const badInput = (message: string, locations?: { line: number; column: number }[]) => ({
  status: 400,
  body: { errors: [{ message, ...(locations ? { locations } : {}), extensions: { code: 'BAD_INPUT' } }] },
});

describe('client mistakes on /graphql', () => {
  it("answers a String variable given a number with BAD_INPUT, graphql-js's message and 400, not INTERNAL", async () => {
    expect(
      await postQuery('query($s: String!) { fund(slug: $s) { slug } }', { variables: { s: 5 } }),
    ).toEqual(
      badInput('Variable "$s" got invalid value 5; String cannot represent a non string value: 5', [
        { line: 1, column: 7 },
      ]),
    );
  });

  it("answers an Int variable given a string with BAD_INPUT, graphql-js's message and 400, not INTERNAL", async () => {
    expect(
      await postQuery('query($l: Int) { events(limit: $l) { nextCursor } }', { variables: { l: 'abc' } }),
    ).toEqual(
      badInput('Variable "$l" got invalid value "abc"; Int cannot represent non-integer value: "abc"', [
        { line: 1, column: 7 },
      ]),
    );
  });

  it('answers a field the schema lacks with BAD_INPUT, 400 and the fields it may have meant', async () => {
    expect(await postQuery('{ fundz { slug } }')).toEqual(
      badInput('Cannot query field "fundz" on type "Query". Did you mean "fund" or "funds"?', [
        { line: 1, column: 3 },
      ]),
    );
  });

  it('answers an argument literal of the wrong type with BAD_INPUT and 400, not GRAPHQL_VALIDATION_FAILED', async () => {
    expect(await postQuery('{ fund(slug: 5) { slug } }')).toEqual(
      badInput('String cannot represent a non string value: 5', [{ line: 1, column: 14 }]),
    );
  });

  it('answers a syntax error with 400, as a variable error is answered', async () => {
    expect(await postQuery('{ fund(')).toEqual(
      badInput('Syntax Error: Expected Name, found <EOF>.', [{ line: 1, column: 8 }]),
    );
  });

  it('answers a document over the depth limit with 400, the limit and what to do, not as a syntax error', async () => {
    const chain = 'ofType { '.repeat(22) + 'name' + ' }'.repeat(22);
    expect(await postQuery(`{ __schema { types { fields { type { ${chain} } } } } }`)).toEqual(
      badInput('Query depth limit of 21 exceeded, found 27. Send it as several smaller queries.'),
    );
  });

  it('answers a document over the alias limit with 400, the limit and what to do', async () => {
    const aliases = Array.from({ length: 16 }, (_, i) => `p${i}: protocol { name }`).join(' ');
    expect(await postQuery(`{ ${aliases} }`)).toEqual(
      badInput('Aliases limit of 15 exceeded, found 16. Send it as several smaller queries.'),
    );
  });

  it('answers a document over the cost limit with 400, the limit and the cost found as a whole number', async () => {
    // the standard introspection query fills most of the budget: asking for its types twice is over it
    const doubled = getIntrospectionQuery().replace(
      '__schema {',
      'again: __schema { types { ...FullType } } __schema {',
    );
    const { status, body } = await postQuery(doubled);
    expect(status).toBe(400);
    const [error] = (body as { errors: { message: string }[] }).errors;
    expect(error?.message).toMatch(
      /^Query Cost limit of 5000 exceeded, found \d+\. Send it as several smaller queries\.$/,
    );
  });

  it('answers a document over the token limit with 400, the limit and what to do', async () => {
    const fields = Array.from({ length: 1000 }, () => 'name').join(' ');
    expect(await postQuery(`{ protocol { ${fields} } }`)).toEqual(
      badInput('Token limit of 1000 exceeded. Send it as several smaller queries.'),
    );
  });

  it('answers a document over the list-item budget with 400, its estimate, the budget and what to do, whatever the client accepts', async () => {
    const histories =
      '{ a: funds { navHistory(limit: 500) { epoch } } b: funds { navHistory(limit: 500) { epoch } } }';
    const overBudget = badInput(
      'This query asks for up to 3,006 list items (Fund.navHistory 3,000, Query.funds 6), over the limit of 2,000 per query. Each list counts its limit argument (or its default; a variable counts as the largest limit allowed) times the lists it is nested in, and every alias counts apart. Ask for less: lower the limits, select fewer aliases or lists, or split the query into several smaller ones.',
      [{ line: 1, column: 1 }],
    );
    expect(await postQuery(histories)).toEqual(overBudget);
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: histories }),
    });
    expect(await answer(response)).toEqual(overBudget);
  });

  it('answers a mutation, sent by GET or POST, with 400 saying the API has queries only', async () => {
    const readOnly = badInput('This API is read-only: its schema has no mutation type, only queries.', [
      { line: 1, column: 1 },
    ]);
    expect(await postQuery('mutation { claim }')).toEqual(readOnly);
    const response = await fetch(`${base}/graphql?query=${encodeURIComponent('mutation { claim }')}`, {
      headers: { accept: 'application/json' },
    });
    expect(await answer(response)).toEqual(readOnly);
  });

  it("names an unknown operation in graphql-js's words with BAD_INPUT and 400", async () => {
    expect(await postQuery('query A { protocol { name } }', { operationName: 'B' })).toEqual(
      badInput('Unknown operation named "B".'),
    );
  });

  it("asks in graphql-js's words for the operation name a document of several needs, with BAD_INPUT and 400", async () => {
    expect(await postQuery('query A { protocol { name } } query B { protocol { name } }')).toEqual(
      badInput('Must provide operation name if query contains multiple operations.'),
    );
  });

  it('answers a request without a query with BAD_INPUT and 400', async () => {
    expect(await post(JSON.stringify({ variables: {} }))).toEqual(badInput('Must provide query string.'));
  });

  it('answers a persisted query sent without its text, by POST or GET, with 400 and the code Apollo clients resend the text on', async () => {
    const message =
      'Persisted queries (extensions.persistedQuery) are not supported: send the query text itself, as "query" in the JSON body of a POST or as the query parameter of a GET.';
    const refused = {
      status: 400,
      body: { errors: [{ message, extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED' } }] },
    };
    const extensions = {
      persistedQuery: {
        version: 1,
        sha256Hash: 'ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38',
      },
    };
    expect(await post(JSON.stringify({ extensions }))).toEqual(refused);
    const response = await fetch(
      `${base}/graphql?extensions=${encodeURIComponent(JSON.stringify(extensions))}`,
      { headers: { accept: 'application/json' } },
    );
    expect(await answer(response)).toEqual(refused);
  });

  it('runs a query sent with its text beside a persisted-query extension', async () => {
    const extensions = {
      persistedQuery: {
        version: 1,
        sha256Hash: 'ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38',
      },
    };
    expect(await postQuery('{ protocol { name } }', { extensions })).toEqual({
      status: 200,
      body: { data: { protocol: { name: 'Meridian Fund Protocol' } } },
    });
  });

  it('answers a body that is not JSON with BAD_INPUT saying it must be JSON, and nothing from inside', async () => {
    expect(await post('not json')).toEqual(
      badInput('The request body must be a JSON object such as {"query": "{ protocol { name } }"}.'),
    );
  });

  it('answers GET variables that are not JSON with BAD_INPUT and 400, not INTERNAL and 500', async () => {
    const query = encodeURIComponent('{ protocol { name } }');
    const response = await fetch(`${base}/graphql?query=${query}&variables=notjson`, {
      headers: { accept: 'application/json' },
    });
    expect(await answer(response)).toEqual(
      badInput(
        'The variables and extensions parameters must be JSON objects such as variables={"slug":"x"}.',
      ),
    );
  });
});

describe('requests /graphql refuses over HTTP', () => {
  const problemOf = async (response: Response) => ({
    status: response.status,
    type: response.headers.get('content-type'),
    body: (await response.json()) as { type: string; detail: string },
  });

  it('answers PUT with 405, the methods it takes in Allow, and a problem saying to use GET or POST', async () => {
    const response = await fetch(`${base}/graphql`, { method: 'PUT' });
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    expect(await problemOf(response)).toMatchObject({
      status: 405,
      type: 'application/problem+json',
      body: {
        type: expect.stringMatching(/\/method-not-allowed$/),
        detail: expect.stringMatching(/GET .*POST/),
      },
    });
  });

  it('answers HEAD as it answers GET, without the body', async () => {
    const query = `${base}/graphql?query=${encodeURIComponent('{ protocol { name } }')}`;
    const get = await fetch(query, { headers: { accept: 'application/json' } });
    const head = await fetch(query, { method: 'HEAD', headers: { accept: 'application/json' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
  });

  it('answers an Accept it cannot meet with 406 and a problem listing what it answers', async () => {
    const response = await fetch(`${base}/graphql?query=${encodeURIComponent('{ protocol { name } }')}`, {
      headers: { accept: 'text/plain' },
    });
    expect(await problemOf(response)).toMatchObject({
      status: 406,
      body: {
        type: expect.stringMatching(/\/not-acceptable$/),
        detail: expect.stringContaining('application/json'),
      },
    });
  });

  it('answers a POST body of another media type, or none, with 415 and a problem saying to send JSON', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, {}] as Record<string, string>[]) {
      const response = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers,
        body: '{ protocol { name } }',
      });
      expect(await problemOf(response)).toMatchObject({
        status: 415,
        body: {
          type: expect.stringMatching(/\/unsupported-media-type$/),
          detail: expect.stringContaining('application/json'),
        },
      });
    }
  });

  it('answers an empty JSON POST with BAD_INPUT saying what the body must be, not 413', async () => {
    expect(await post('')).toEqual(
      badInput('The request body must be a JSON object such as {"query": "{ protocol { name } }"}.'),
    );
  });

  it('answers a path below /graphql with the 404 problem of any unknown path', async () => {
    const response = await fetch(`${base}/graphql/schema`);
    expect(await problemOf(response)).toMatchObject({
      status: 404,
      body: {
        type: expect.stringMatching(/\/not-found$/),
        detail: expect.stringContaining('/graphql/schema'),
      },
    });
  });
});

describe('errors raised by a field', () => {
  it('name the field that failed (path) and where it is in the document (locations)', async () => {
    const { body } = await postQuery('{ protocol { name } missing: fund(slug: "nope") { name } }');
    expect(body).toMatchObject({
      data: { protocol: { name: expect.any(String) }, missing: null },
      errors: [
        {
          path: ['missing'],
          locations: [{ line: 1, column: 21 }],
          extensions: { code: 'NOT_FOUND' },
        },
      ],
    });
  });

  it('name the field also when an upstream failed', async () => {
    const { body } = await postQuery('{ events(limit: 1) { nextCursor } }');
    expect(body).toMatchObject({
      errors: [
        {
          path: ['events'],
          locations: [{ line: 1, column: 3 }],
          extensions: { code: 'UPSTREAM_UNAVAILABLE' },
        },
      ],
    });
  });
});

describe('a failing chain RPC', () => {
  it("nulls the fund's live fields alone, with their errors, and answers its other fields", async () => {
    const deadChain = createGateway({
      registry: loadRegistry(REGISTRY_FILE),
      subgraph: { url: 'http://127.0.0.1:9/unused', timeoutMs: 1_000, maxBatch: 10 },
      chain: { rpcUrl: 'http://127.0.0.1:9/', timeoutMs: 1_000, maxBatch: 10 },
      distributions: { base: undefined, timeoutMs: 1_000, cacheSize: 1 },
      logError: () => {},
    });
    const answer = await graphql(
      deadChain,
      '{ fund(slug: "harbor-stable-yield") { name allocations { available } reserve { balance } } }',
    );
    expect(answer.data).toEqual({
      fund: { name: 'Harbor Stable Yield Fund', allocations: null, reserve: null },
    });
    expect(answer.errors?.map((e) => [e.extensions?.code, (e as { path?: unknown }).path])).toEqual([
      ['UPSTREAM_UNAVAILABLE', ['fund', 'allocations']],
      ['UPSTREAM_UNAVAILABLE', ['fund', 'reserve']],
    ]);
  });
});

describe('the answer', () => {
  it('lists its fields in the order the query asks for them, however fast each resolves', async () => {
    // latestNav waits for the (unreachable) subgraph; name and slug are read from the registry at once
    const { body } = (await postQuery(
      '{ fund(slug: "harbor-stable-yield") { latestNav { epoch } name slug } }',
    )) as { body: { data: { fund: Record<string, unknown> } } };
    expect(Object.keys(body.data.fund)).toEqual(['latestNav', 'name', 'slug']);
  });
});

describe('the error log', () => {
  it('is not written for client mistakes, however many', async () => {
    logged.length = 0;
    await postQuery('{ fundz { slug } }');
    await postQuery('{ fund(slug: "nope") { name } }');
    await postQuery('mutation { claim }');
    await postQuery('{');
    await postQuery('query($s: String!) { fund(slug: $s) { slug } }', { variables: { s: 5 } });
    await post('not json');
    expect(logged).toEqual([]);
  });

  it('tells an upstream failure once, when the upstream starts failing', async () => {
    const lines: unknown[] = [];
    const gateway = registryOnlyGateway({ logError: (line) => lines.push(line) });
    for (let i = 0; i < 2; i++) {
      const body = await graphql(gateway, '{ events(limit: 1) { nextCursor } }');
      expect(body).toMatchObject({ errors: [{ extensions: { code: 'UPSTREAM_UNAVAILABLE' } }] });
    }
    expect(lines).toEqual([
      'subgraph (SUBGRAPH_URL http://127.0.0.1:9/…) is failing: bad port (first at /graphql field events); requests needing it fail until it answers again',
    ]);
  });
});

describe('the documented /graphql answers', () => {
  it('include the 400 of a client mistake, as openapi.json describes it', async () => {
    const answered = await call(base, `/graphql?query=${encodeURIComponent('{ fundz { slug } }')}`);
    expect(answered.status).toBe(400);
    expect(answered.body.errors[0].extensions.code).toBe('BAD_INPUT');
  });
});
