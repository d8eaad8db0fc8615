// A template instance created at an address the block's logs already cover (here the ProbeEmitter,
// which a static data source tracks): the block runs again with the new instance, and each of its
// logs must reach each data source once. The follower once fetched the block's logs of the new
// instance's address again and ran the copies too.
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryIndexer } from './graphql-client.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

let chain: ProbeChain;
let running: Awaited<ReturnType<typeof startProbeIndexer>>;
let block: { number: number; txHashes: Hex[] };
let sequences: Map<string, number>;

beforeAll(async () => {
  chain = await startProbeChain();
  block = await chain.probesInOneBlock([
    { kind: 34, input: chain.emitter },
    { kind: 5, input: '1' },
  ]);
  running = await startProbeIndexer(chain);
  await running.indexer.waitForHead();
  const answer = await queryIndexer<{ probeResults: { id: string; sequence: number }[] }>(
    running.indexer.queryUrl,
    '{ probeResults(first: 100) { id sequence } }',
  );
  sequences = new Map(answer.probeResults.map((r) => [r.id, r.sequence]));
}, 180_000);

afterAll(async () => {
  await running?.stop();
  await chain?.stop();
});

describe('indexer: a template instance at an address the block already covers', () => {
  it("runs each of the block's logs once for the instance, after the static data source's run", () => {
    // the instance's handlers ran last, each log once: its writes are the last two handler calls
    const first = sequences.get(`${block.txHashes[0]}-0`)!;
    const second = sequences.get(`${block.txHashes[1]}-1`)!;
    expect(second - first).toBe(1);
  });
});
