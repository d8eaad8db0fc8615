// GET /v1/events (and Query.events) asked for blocks the index has not reached: a poller asking for
// the blocks after the ones it has read must keep getting answers, so the request is answered, with
// an empty page, and X-Indexed-Block says how far the index goes; the documents of both surfaces say
// that such an empty page says nothing about those blocks yet, where before they said nothing and an
// agent read "no events there".
import { describe, expect, it } from 'vitest';
import { schema } from '../../gateway/schema.ts';
import { ROUTES } from '../../rest/routes.ts';
import { restServiceForSuite } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const service = restServiceForSuite();

describe('GET /v1/events for blocks past the indexed head', () => {
  it('answers an empty last page beside the block the index has reached', async () => {
    const head = service.stack.devnet.ledger.endBlock;
    const { status, headers, body } = await call(
      service.base,
      `/v1/events?fromBlock=${head + 118}&toBlock=${head + 218}`,
    );
    expect(status).toBe(200);
    expect(body).toEqual({ items: [], count: 0, nextCursor: null });
    expect(headers.get('x-indexed-block')).toBe(String(head));
  });
});

describe('the block filters as documented', () => {
  const route = ROUTES.find((r) => r.path === '/v1/events')!;
  const param = (name: string) => route.params.find((p) => p.name === name)!.description;
  const argument = (name: string) =>
    schema
      .getQueryType()!
      .getFields()
      .events!.args.find((a) => a.name === name)!.description;

  it('say on REST that blocks past X-Indexed-Block hold no events yet', () => {
    expect(param('fromBlock')).toBe(
      "lowest block, inclusive. Blocks past the answer's X-Indexed-Block are not indexed yet and hold no events here: an empty page for them says nothing about them",
    );
    expect(param('toBlock')).toBe(
      "highest block, inclusive; must be >= fromBlock. Blocks past the answer's X-Indexed-Block hold no events here yet, whatever the chain holds",
    );
  });

  it('say on GraphQL that blocks past the indexed head hold no events yet', () => {
    expect(argument('fromBlock')).toBe(
      'lowest block number, inclusive: 0 to 2147483647. Only blocks indexed so far have events here: a block past the indexed head (health.indexer.maxIndexedBlock; X-Indexed-Block on the HTTP answer) holds none yet, so an empty page for a range past it says nothing about those blocks until they are indexed',
    );
    expect(argument('toBlock')).toBe(
      'highest block number, inclusive: 0 to 2147483647, at least fromBlock. Blocks past the indexed head (see fromBlock) hold no events yet, whatever the chain holds',
    );
  });
});
