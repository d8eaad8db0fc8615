// An optional argument given as an empty string is a mistake, not an absence: GraphQL refuses it with
// BAD_INPUT naming the argument, in the words GET /v1/events refuses an empty parameter in
// (gateway/inputs.ts emptyValueMessage), rather than answering as if it were left out (an empty
// cursor would restart at the first page, an empty filter list every event). The refusal comes
// before any upstream is asked: the registry alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_NAME_RULE, SLUG_RULE } from '../../gateway/inputs.ts';
import { listen, registryOnlyRestApp } from '../harness/stack.ts';

let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await listen(registryOnlyRestApp());
});
afterAll(() => server.close());

async function graphqlErrors(query: string): Promise<unknown> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return ((await response.json()) as { errors?: unknown }).errors;
}

const refusal = (argument: string, rule: string, path: string[]) => [
  {
    message: `${argument} is empty: give it a value (${rule}) or leave it out.`,
    locations: expect.any(Array),
    path,
    extensions: { code: 'BAD_INPUT', argument },
  },
];

describe('events given an empty argument', () => {
  it.each([
    ['contract', 'a 0x-prefixed address of 40 hex digits'],
    ['eventName', EVENT_NAME_RULE],
    ['fund', `a fund slug from GET /v1/funds or the GraphQL query { funds { slug } } (${SLUG_RULE})`],
    ['cursor', 'the nextCursor of a previous page, exactly as returned'],
  ])('refuses an empty %s, naming it and what it takes', async (argument, rule) => {
    const errors = await graphqlErrors(`{ events(limit: 2, ${argument}: "") { items { eventName } } }`);
    expect(errors).toEqual(refusal(argument, rule, ['events']));
  });

  it('is refused in the words GET /v1/events refuses the empty parameter in', async () => {
    const response = await fetch(`${server.url}/v1/events?eventName=`);
    expect(response.status).toBe(400);
    const { detail } = (await response.json()) as { detail: string };
    expect(detail).toBe(
      `Parameter 'eventName' is empty: give it a value (${EVENT_NAME_RULE}) or leave it out.`,
    );
  });
});

describe("a fund's dividends given an empty cursor", () => {
  it('are refused naming the cursor, the fund beside them answered', async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: '{ fund(slug: "harbor-stable-yield") { slug dividends(cursor: "") { nextCursor } } }',
      }),
    });
    const answer = (await response.json()) as { data: unknown; errors: unknown };
    expect(answer.data).toEqual({ fund: { slug: 'harbor-stable-yield', dividends: null } });
    expect(answer.errors).toEqual(
      refusal('cursor', 'the nextCursor of a previous page, exactly as returned', ['fund', 'dividends']),
    );
  });
});
