// `@entity(immutable: true, skipDuplicates: true)` on a real chain: a later block writing the same
// immutable entity again is dropped, as graph-node's `ON CONFLICT DO NOTHING` drops it, instead of
// failing the subgraph. While following, store.set does not look new immutable entities up, so the
// duplicate reaches the store's unique id index, which drops it (store.test.ts pins that alone).
// The host-probe subgraph (kind 28 writes the immutable ProbeResult `fixed`) runs with its schema
// edited to mark ProbeResult skipDuplicates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryAnswer } from './graphql-client.ts';
import { startEditedProbeIndexer, startProbeChain, type ProbeChain } from './probe-chain.ts';
import type { Indexer } from '../../indexer/indexer.ts';

let chain: ProbeChain;
let running: { indexer: Indexer; stop(): Promise<void> };

beforeAll(async () => {
  chain = await startProbeChain();
  running = await startEditedProbeIndexer(
    chain,
    (manifest) => manifest,
    (schema) =>
      schema.replace(
        'type ProbeResult @entity(immutable: true)',
        'type ProbeResult @entity(immutable: true, skipDuplicates: true)',
      ),
  );
}, 180_000);

afterAll(async () => {
  await running?.stop();
  await chain?.stop();
});

describe('indexer: an immutable entity with skipDuplicates written again by later blocks', () => {
  it('keeps the first version and goes on indexing', async () => {
    const first = await chain.probe(28, 'first');
    await running.indexer.waitForBlock(first);
    await chain.probe(28, 'second');
    const last = await chain.probe(28, 'third');
    await running.indexer.waitForBlock(last);
    expect(running.indexer.status().fatalError).toBeNull();
    const answer = await queryAnswer(
      running.indexer.queryUrl,
      `{ probeResult(id: "fixed") { input } atFirst: probeResult(id: "fixed", block: { number: ${first} }) { input } }`,
    );
    expect(answer).toEqual({ data: { probeResult: { input: 'first' }, atFirst: { input: 'first' } } });
  });
});
