// The service behind The Graph's gateway (gateway.thegraph.com), which speaks graph-node's query
// dialect but answers its failures in its own words (edgeandnode/gateway src/errors.rs), here a
// fault proxy in front of the harness's indexer saying what the gateway says: a query no indexer
// has the block of is "bad indexers: {0x…: Unavailable(missing block: N, latest: M)}", which is
// the query nodes being behind, as graph-node's "has only indexed up to" is; and the refusals that
// last until the operator acts (an API key refused, a subgraph not found, graph-node's deployment
// that does not exist, answers with indexing errors that no indexer can attest, the embedded
// indexer's damaged store) answer 503 saying retrying will not help, with no Retry-After, and tell
// the operator's log what to fix.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayError } from '../../gateway/errors.ts';
import { dividendsCursor } from '../../gateway/inputs.ts';
import { createSubgraphClient, NodesBehindError } from '../../gateway/sources/subgraph.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { indexedStack, type IndexedStack, listenRest, testGateway } from '../harness/stack.ts';

/** an indexer as the gateway names one in its errors (its address) */
const INDEXER = '0x6125ea331851367716bee301ecde7f38a7e429e7';
const FUND = 'harbor-stable-yield';

let stack: IndexedStack;
/** the harness's indexer as The Graph's gateway would front it */
let theGraph: FaultProxy;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  stack = await indexedStack();
  theGraph = await startFaultProxy(stack.subgraphUrl);
});
afterEach(() => theGraph.set({ kind: 'pass' }));
afterAll(async () => {
  for (const close of closers) await close();
  await theGraph?.close();
});

/**
 * An indexer's answer as the gateway passes it on: graph-node's refusal of a block it has not
 * indexed becomes the gateway's own (src/indexer_client.rs check_block_error reads the blocks out
 * of graph-node's words; src/errors.rs writes them), every other answer is passed on unchanged.
 */
function throughTheGraph(answer: unknown): unknown {
  const errors = (answer as { errors?: { message: string }[] }).errors ?? [];
  for (const { message } of errors) {
    const behind = /has only indexed up to block number (\d+) and data for block number (\d+)/.exec(message);
    if (behind)
      return {
        errors: [
          {
            message: `bad indexers: {${INDEXER}: Unavailable(missing block: ${behind[2]}, latest: ${behind[1]})}`,
          },
        ],
      };
  }
  return answer;
}

/** The gateway's answer to every query: `message` as its one error, with HTTP 200 (src/graphql.rs). */
function theGraphAnswers(message: string): void {
  theGraph.set({ kind: 'answer', status: 200, body: JSON.stringify({ errors: [{ message }] }) });
}

/** The REST service over The Graph's gateway and the devnet's chain; what it logs goes to `logged`. */
async function service(logged: string[] = []): Promise<string> {
  const gateway = testGateway(stack, { subgraph: { url: theGraph.url, timeoutMs: 10_000, maxBatch: 1000 } });
  const { url, close } = await listenRest(gateway, { logError: (line) => logged.push(String(line)) });
  closers.push(close);
  return url;
}

/** A subgraph source of its own over The Graph's gateway, and what it failed `read` with. */
async function failure(read: (source: ReturnType<typeof createSubgraphClient>) => Promise<unknown>) {
  const source = createSubgraphClient({ url: theGraph.url, timeoutMs: 10_000, maxBatch: 1000 });
  return read(source).then(
    () => null,
    (error: unknown) => error,
  );
}

describe("The Graph's gateway saying no indexer has the block", () => {
  it('refuses a cursor from a block the chain has not reached as bad input, as graph-node’s words are', async () => {
    theGraph.set({ kind: 'rewrite', rewrite: throughTheGraph });
    const logged: string[] = [];
    const base = await service(logged);
    const vault = stack.registry.funds.find((f) => f.slug === FUND)!.vault;
    const cursor = dividendsCursor(vault, { epoch: 180, block: 999_999 });
    const response = await fetch(`${base}/v1/funds/${FUND}/dividends?cursor=${cursor}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      parameter: 'cursor',
      detail: `cursor continues from block 999999, which the chain has not reached (its head is block ${stack.devnet.ledger.endBlock}), so it is no cursor this service returned. Start again from the first page: omit cursor.`,
    });
    expect(logged).toEqual([]);
  });

  it('asks once more, then answers that the query nodes are behind the newest block read', async () => {
    const source = createSubgraphClient({ url: theGraph.url, timeoutMs: 10_000, maxBatch: 1000 });
    const { number } = await source.indexedBlock();
    theGraphAnswers(
      `bad indexers: {${INDEXER}: Unavailable(missing block: ${number}, latest: ${number - 5})}`,
    );
    const before = theGraph.requests;
    const error = await source.indexedBlock().then(
      () => null,
      (failed: unknown) => failed,
    );
    expect(error).toBeInstanceOf(NodesBehindError);
    expect((error as NodesBehindError).message).toBe(
      `The subgraph's query nodes are behind: the node that answered has not indexed block ${number}, the newest this service has read, and older data is not served in its place. Retry in a few seconds.`,
    );
    expect(theGraph.requests - before).toBe(2);
  });

  it('answers as an outage, not as nodes behind, when one of the indexers failed otherwise', async () => {
    theGraphAnswers(
      `bad indexers: {${INDEXER}: Unavailable(missing block: 400, latest: 382), 0x0b2ce9b1d5e0a9f6b7b3e4a3c7f5a1d2e3f4a5b6: Timeout}`,
    );
    const error = await failure((source) => source.indexedBlock());
    expect(error).not.toBeInstanceOf(NodesBehindError);
    expect((error as GatewayError).message).toBe('The subgraph is unavailable; retry later.');
  });
});

describe('a refusal of the subgraph that lasts until the operator acts', () => {
  const refusals = [
    {
      upstream: "The Graph's gateway refusing the API key",
      says: 'auth error: payment required for subsequent requests for this API key',
      detail: "The Graph's gateway, which serves it, does not accept the service's API key",
      fix: "The Graph's gateway refuses the API key in SUBGRAPH_URL: check the key in Subgraph Studio",
    },
    {
      upstream: "The Graph's gateway serving no such subgraph",
      says: 'subgraph not found: no allocations',
      detail: "The Graph's gateway, which serves it, serves no such subgraph",
      fix: "The Graph's gateway serves no subgraph or deployment by the id in SUBGRAPH_URL",
    },
    {
      upstream: 'graph-node with nothing deployed there',
      says: 'deployment `fund-protocol` does not exist',
      detail: 'the graph-node serving it has no such subgraph deployed',
      fix: 'graph-node has nothing deployed under the name or id in SUBGRAPH_URL: deploy the subgraph there',
    },
    {
      upstream: "The Graph's gateway refusing answers with indexing errors",
      says: `bad indexers: {${INDEXER}: BadResponse(no attestation: indexing_error)}`,
      detail:
        "it has indexing errors, and The Graph's gateway, which serves it, passes on no answer holding them",
      fix: "every indexer answered with graph-node's indexing_error, which an indexer cannot attest",
    },
    {
      upstream: 'the embedded indexer with a damaged store',
      says: 'the store /data/indexer/devnet-L1.sqlite is damaged (database disk image is malformed, SQLITE_CORRUPT): delete it and its -wal and -shm files while the indexer is stopped, to index again from the start block',
      detail: 'the indexer serving it has a damaged store, which it cannot read',
      fix: 'the embedded indexer found its SQLite store damaged: stop it, delete the store file it names',
    },
  ];

  it.each(refusals)(
    'is answered 503 saying retrying will not help, without Retry-After: $upstream',
    async ({ says, detail }) => {
      theGraphAnswers(says);
      const response = await fetch(`${await service()}/v1/funds/${FUND}/nav`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBeNull();
      expect(await response.json()).toMatchObject({
        type: expect.stringMatching(/\/problems\/upstream-unavailable$/),
        detail: `The subgraph is refused: ${detail}. This lasts until the service's operator fixes it; retrying will not help.`,
      });
    },
  );

  it.each(refusals)('tells the operator’s log what to fix: $upstream', async ({ says, fix }) => {
    theGraphAnswers(says);
    const logged: string[] = [];
    await fetch(`${await service(logged)}/v1/funds/${FUND}/nav`);
    expect(logged).toEqual([expect.stringContaining(fix)]);
    expect(logged[0]).toContain(JSON.stringify(says).slice(1, -1));
  });
});
