// ProtocolEvent.cursor, the cursor positioned at one event of a page, is bound to the filters of the
// query that listed the event, as the page's nextCursor is: given back with them it continues that
// listing below the event.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/server.ts';
import { graphql, indexedStack, testGateway } from '../harness/stack.ts';

let gateway: Gateway;

beforeAll(async () => {
  gateway = testGateway(await indexedStack());
});

const PAGE =
  'query($cursor: String, $limit: Int) { events(fund: "harbor-stable-yield", eventName: "NavPublished", limit: $limit, cursor: $cursor) { items { id cursor } nextCursor } }';

describe("an event's cursor given back with the filters of its query", () => {
  it('continues the listing with the events below it', async () => {
    const first = await graphql(gateway, PAGE, { limit: 3 });
    const items = first.data?.events.items as { id: string; cursor: string }[];
    expect(items.at(-1)?.cursor).toBe(first.data?.events.nextCursor);
    const below = await graphql(gateway, PAGE, { limit: 2, cursor: items[0]!.cursor });
    expect(below.errors).toBeUndefined();
    expect(below.data?.events.items.map((e: { id: string }) => e.id)).toEqual(
      items.slice(1).map((e) => e.id),
    );
  });
});
