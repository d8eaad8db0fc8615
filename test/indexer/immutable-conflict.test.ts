// An immutable entity written again by a later block, met by the chain follower on a real chain.
// While following, store.set does not look a new immutable entity up; the store's unique id index
// refuses the repeated insert and the follower runs the block again with the lookups. Written
// unchanged, the entity is then no change, as graph-node's entity cache finds it, and indexing goes
// on; changed, the subgraph fails exactly as graph-node words it, naming the handler; as in
// graph-node, the failed block is committed without its changes, and queries at it get the
// `indexing_error`.
// The host-probe subgraph (kind 28 writes the immutable ProbeResult `fixed`) runs over a contract
// that emits its events on the test's own anvil.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import { queryAnswer, queryIndexer } from './graphql-client.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

let chain: ProbeChain;
let running: { indexer: Indexer; stop(): Promise<void> };
let indexer: Indexer;

const logged: string[] = [];

beforeAll(async () => {
  chain = await startProbeChain();
  running = await startProbeIndexer(chain, undefined, { log: (line) => logged.push(line) });
  indexer = running.indexer;
}, 180_000);

afterAll(async () => {
  await running?.stop();
  await chain?.stop();
});

describe('indexer: an immutable entity written again by a later block', () => {
  it('indexes past a later block writing it unchanged, keeping the first version', async () => {
    await chain.probe(28, 'first');
    const again = await chain.probe(28, 'first');
    await indexer.waitForBlock(again);
    expect(indexer.status().fatalError).toBeNull();
    const answer = await queryAnswer(
      indexer.queryUrl,
      `{ probeResult(id: "fixed", block: { number: ${again} }) { input } }`,
    );
    expect(answer).toEqual({ data: { probeResult: { input: 'first' } } });
  });

  it('fails the subgraph naming the handler, at the failed block committed without its changes', async () => {
    const first = await chain.probe(28, 'first');
    await indexer.waitForBlock(first);
    const second = await chain.probe(28, 'second');
    await expect(indexer.waitForBlock(second + 1)).rejects.toThrow(
      `Handler handleProbe of data source ProbeEmitter failed at block ${second}`,
    );
    const status = indexer.status();
    expect(status.fatalError).toContain(
      'Entity ProbeResult[fixed] is immutable and was inserted at an earlier block; it cannot be updated',
    );
    expect(status.checkpoint).toBe(second);
    const allowed = await queryAnswer(
      indexer.queryUrl,
      '{ probeResult(id: "fixed", subgraphError: allow) { input } }',
    );
    expect(allowed).toEqual({
      data: { probeResult: { input: 'first' } },
      errors: [{ message: 'indexing_error' }],
    });
    const meta = await queryAnswer(indexer.queryUrl, '{ _meta { block { number } hasIndexingErrors } }');
    expect(meta).toEqual({ data: { _meta: { block: { number: second }, hasIndexingErrors: true } } });
  });

  it.each([
    [
      'the entity field does not allow them',
      '{ probeResult(id: "fixed") { input } _meta { hasIndexingErrors } }',
    ],
    [
      'a field beside it at the same block does not allow them, as graph-node groups fields',
      '{ probeResult(id: "fixed", subgraphError: allow) { input } _meta { hasIndexingErrors } }',
    ],
  ])('withholds entity data at the failed block when %s', async (_case, query) => {
    expect(await queryAnswer(indexer.queryUrl, query)).toEqual({
      data: { _meta: { hasIndexingErrors: true } },
      errors: [{ message: 'indexing_error' }],
    });
  });

  it('counts __typename and introspection fields as the latest block without subgraphError, as graph-node does', async () => {
    const typename = await queryAnswer(
      indexer.queryUrl,
      '{ __typename probeResult(id: "fixed", subgraphError: allow) { input } }',
    );
    expect(typename).toEqual({ errors: [{ message: 'indexing_error' }] });
    const introspection = await queryAnswer(indexer.queryUrl, '{ __schema { queryType { name } } }');
    expect(introspection).toEqual({
      data: { __schema: { queryType: { name: 'Query' } } },
      errors: [{ message: 'indexing_error' }],
    });
  });

  it('answers queries at blocks before the failure without an error', async () => {
    const before = indexer.status().checkpoint - 1;
    const answer = await queryAnswer(
      indexer.queryUrl,
      `{ probeResult(id: "fixed", block: { number: ${before} }) { input } _meta(block: { number: ${before} }) { hasIndexingErrors } }`,
    );
    expect(answer).toEqual({
      data: { probeResult: { input: 'first' }, _meta: { hasIndexingErrors: false } },
    });
  });

  it('then reports the failure through the index-node status API, naming its block and handler', async () => {
    const failedAt = indexer.status().checkpoint;
    const data = await queryIndexer<{
      indexingStatuses: { health: string; fatalError: unknown; chains: { lastHealthyBlock: unknown }[] }[];
    }>(
      `${new URL(indexer.queryUrl).origin}/graphql`,
      '{ indexingStatuses { health fatalError { handler block { number } } chains { lastHealthyBlock { number } } } }',
    );
    expect(data.indexingStatuses).toEqual([
      {
        health: 'failed',
        fatalError: { handler: 'handleProbe', block: { number: String(failedAt) } },
        chains: [{ lastHealthyBlock: { number: String(failedAt - 1) } }],
      },
    ]);
  });

  it('runs the failed block again when restarted, as graph-node unfails a failed subgraph, and fails it the same way', async () => {
    const failedAt = indexer.status().checkpoint;
    const fatalError = indexer.status().fatalError;
    await indexer.stop();
    logged.length = 0;
    await indexer.start();
    await expect(indexer.waitForBlock(failedAt + 1)).rejects.toThrow(
      `Handler handleProbe of data source ProbeEmitter failed at block ${failedAt}`,
    );
    expect(logged[0]).toMatch(
      new RegExp(
        `^indexing stopped at block ${failedAt} when a handler failed; it runs again from block \\d+$`,
      ),
    );
    expect(indexer.status()).toMatchObject({ checkpoint: failedAt, fatalError });
  });
});
