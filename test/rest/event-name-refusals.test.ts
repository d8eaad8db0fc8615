// An event name the stream does not carry is refused in the same words by GET /v1/events and by
// GraphQL's events (one message builder, gateway/inputs.ts notListedMessage), each naming the
// input as its surface does. The refusal comes before any upstream is asked: the registry alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../../gateway/event-names.ts';
import { listen, registryOnlyRestApp } from '../harness/stack.ts';

let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await listen(registryOnlyRestApp());
});
afterAll(() => server.close());

const RULE = `one of these event names, exactly as written (case-sensitive): ${EVENT_NAMES.join(', ')}`;

async function restDetail(eventName: string): Promise<unknown> {
  const response = await fetch(`${server.url}/v1/events?eventName=${encodeURIComponent(eventName)}`);
  expect(response.status).toBe(400);
  return ((await response.json()) as { detail: unknown }).detail;
}

async function graphqlMessage(eventName: string): Promise<unknown> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'query($eventName: String) { events(eventName: $eventName) { nextCursor } }',
      variables: { eventName },
    }),
  });
  const { errors } = (await response.json()) as {
    errors: { message: string; extensions: { code: string; argument: string } }[];
  };
  expect(errors).toHaveLength(1);
  expect(errors[0]!.extensions).toMatchObject({ code: 'BAD_INPUT', argument: 'eventName' });
  return errors[0]!.message;
}

describe('an event name written in another case or with separators', () => {
  const refusal = `must be ${RULE}; got 'nav_published'. Did you mean 'NavPublished'? Names are case-sensitive and written as listed.`;

  it('is refused by GET /v1/events naming the event meant', async () => {
    expect(await restDetail('nav_published')).toBe(`Parameter 'eventName' ${refusal}`);
  });

  it('is refused by GraphQL events in the same words', async () => {
    expect(await graphqlMessage('nav_published')).toBe(`eventName ${refusal}`);
  });
});

describe('an event name the stream does not carry', () => {
  const refusal = `must be ${RULE}; got 'Transfer'.`;

  it('is refused by GET /v1/events listing the names it carries', async () => {
    expect(await restDetail('Transfer')).toBe(`Parameter 'eventName' ${refusal}`);
  });

  it('is refused by GraphQL events in the same words', async () => {
    expect(await graphqlMessage('Transfer')).toBe(`eventName ${refusal}`);
  });
});
