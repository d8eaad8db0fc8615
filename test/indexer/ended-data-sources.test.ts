// Data sources that end while others go on: on the test's own anvil, the host-probe subgraph with
// the data sources at the emitter (ProbeEmitter, ProbeCalls) ending two blocks after its
// deployment, while the block handler ones go on. As graph-node rebuilds its filter without data
// sources past their end block, the ranges after it no longer ask for the emitter's logs (seen
// through a proxy recording the node's requests), and its later probes are not indexed.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { queryIndexer } from './graphql-client.ts';
import { editedProbeBuild } from './probe-build.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

const ENDING = new Set(['ProbeEmitter', 'ProbeCalls']);

let chain: ProbeChain;
let proxy: FaultProxy;
let buildDir: string;
let end: number;
let stopIndexer: (() => Promise<void>) | undefined;

beforeAll(async () => {
  chain = await startProbeChain();
  proxy = await startFaultProxy(chain.anvil.rpcUrl);
  end = chain.deployBlock + 2;
  buildDir = editedProbeBuild((text) => {
    const manifest = parse(text) as { dataSources: { name: string; source: Record<string, unknown> }[] };
    for (const ds of manifest.dataSources) if (ENDING.has(ds.name)) ds.source.endBlock = end;
    return stringify(manifest);
  });
}, 180_000);

afterAll(async () => {
  await stopIndexer?.();
  await proxy?.close();
  await chain?.stop();
  rmSync(buildDir, { recursive: true, force: true });
});

/** The eth_getLogs filters the indexer sent, as the node received them. */
function getLogsFilters(): { fromBlock: string; address?: string[] }[] {
  return proxy
    .rpcRequests()
    .flat()
    .filter((r) => r.method === 'eth_getLogs')
    .map((r) => r.params[0] as { fromBlock: string; address?: string[] });
}

describe('data sources that end while others go on', () => {
  it('are left out of the eth_getLogs filters of the ranges after their end block, and handle nothing after it', async () => {
    const probed: number[] = [];
    for (let i = 0; i < 3; i++) probed.push(await chain.probe(5, String(i)));
    const running = await startProbeIndexer(chain, proxy.url, { buildDir });
    stopIndexer = running.stop;
    await running.indexer.waitForBlock(probed[2]!);
    // ranges starting past the end block
    for (let i = 3; i < 5; i++) probed.push(await chain.probe(5, String(i)));
    await running.indexer.waitForBlock(probed[4]!);
    expect(probed[2]).toBeGreaterThan(end);
    const { probeResults } = await queryIndexer<{ probeResults: { input: string }[] }>(
      running.indexer.queryUrl,
      '{ probeResults(orderBy: input) { input } }',
    );
    expect(probeResults.map((r) => r.input)).toEqual(
      probed.flatMap((block, i) => (block <= end ? [String(i)] : [])),
    );
    const filters = getLogsFilters();
    const naming = (f: { address?: string[] }) => f.address?.some((a) => a.toLowerCase() === chain.emitter);
    const before = filters.filter((f) => Number(f.fromBlock) <= end);
    const after = filters.filter((f) => Number(f.fromBlock) > end);
    expect(before.some(naming)).toBe(true);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter(naming)).toEqual([]);
  });
});
