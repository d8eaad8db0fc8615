// A subgraph whose data sources all have an end block and that has no templates: on the test's own
// anvil, the host-probe subgraph with every data source ending two blocks after the emitter's
// deployment, while probes go on being mined. The indexer stops at that block, as graph-node stops
// such a subgraph, and handles nothing after it.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryIndexer } from './graphql-client.ts';
import { editedProbeBuild } from './probe-build.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

let chain: ProbeChain;
let buildDir: string;
let stopIndexer: (() => Promise<void>) | undefined;

beforeAll(async () => {
  chain = await startProbeChain();
  // the probe build, its data sources ending at `end` and its templates gone
  const end = chain.deployBlock + 2;
  buildDir = editedProbeBuild((manifest) =>
    manifest
      .replace(/\ntemplates:\n[\s\S]*$/, '\n')
      .replace(/^(\s+)startBlock: .*$/gm, (line, indent: string) => `${line}\n${indent}endBlock: ${end}`),
  );
}, 180_000);

afterAll(async () => {
  await stopIndexer?.();
  await chain?.stop();
  rmSync(buildDir, { recursive: true, force: true });
});

describe('a subgraph whose data sources all end', () => {
  it('is indexed up to the last end block and no further, while the chain goes on', async () => {
    const probed: number[] = [];
    for (let i = 0; i < 5; i++) probed.push(await chain.probe(5, String(i)));
    const end = chain.deployBlock + 2;
    expect(probed[4]).toBeGreaterThan(end);
    const running = await startProbeIndexer(chain, undefined, { buildDir });
    stopIndexer = running.stop;
    await running.indexer.waitForHead();
    expect(running.indexer.status().checkpoint).toBe(end);
    const { probeResults, _meta } = await queryIndexer<{
      probeResults: { input: string }[];
      _meta: { block: { number: number } };
    }>(running.indexer.queryUrl, '{ probeResults(orderBy: input) { input } _meta { block { number } } }');
    expect(_meta.block.number).toBe(end);
    expect(probeResults.map((r) => r.input)).toEqual(
      probed.flatMap((block, i) => (block <= end ? [String(i)] : [])),
    );
    expect(probeResults.length).toBeGreaterThan(0);
  });
});
