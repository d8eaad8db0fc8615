// ethereum.call, ethereum.getBalance and ethereum.hasCode on a real chain: the host-probe subgraph
// calls the ProbeEmitter contract from its handlers while the indexer catches up, so every read
// must be made at the handler's block, not at the head. A node that fails eth_call requests (a real
// misbehaving proxy in front of anvil, in a process of its own since a chain read blocks the
// indexer's thread) must not fail the subgraph: the range runs again.
import { numberToHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import {
  startFaultProxyProcess,
  type FaultProxyProcess,
} from '../reliability/servers/fault-proxy-process.ts';
import { queryIndexer } from './graphql-client.ts';
import { probeSender, startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

let chain: ProbeChain;
let proxy: FaultProxyProcess;
const indexers: { stop(): Promise<void> }[] = [];
/** block of each probe, in the order sent */
const blocks: Record<string, number> = {};

beforeAll(async () => {
  chain = await startProbeChain();
  proxy = await startFaultProxyProcess(chain.anvil.rpcUrl);
  // all probes are mined before any indexer starts: the calls are made while catching up
  blocks.first = await chain.probe(29, '-3|first');
  blocks.second = await chain.probe(29, '7|second');
  blocks.byteOrderMark = await chain.probe(29, '5|\uFEFFmarked');
  // each paying the emitter, so both balances change from block to block
  blocks.senderBalance = await chain.probe(30, probeSender, 5n);
  blocks.emitterBalance = await chain.probe(30, chain.emitter, 7n);
  await chain.probe(0, '1|1', 11n); // a later block, so the head's state differs from every probe's
}, 180_000);

afterAll(async () => {
  for (const running of indexers) await running.stop();
  await proxy?.close();
  await chain?.stop();
});

/** Indexes the probe chain from `rpcUrl` up to the head; returns the outputs by input. */
async function indexFrom(rpcUrl: string): Promise<{ indexer: Indexer; outputs: Map<string, string> }> {
  const running = await startProbeIndexer(chain, rpcUrl);
  indexers.push(running);
  const { indexer } = running;
  await indexer.waitForHead();
  const { probeResults } = await queryIndexer<{ probeResults: { input: string; output: string }[] }>(
    indexer.queryUrl,
    '{ probeResults(where: { kind_in: [29, 30] }) { input output } }',
  );
  return { indexer, outputs: new Map(probeResults.map((r) => [r.input, r.output])) };
}

async function balanceAt(address: string, block: number): Promise<bigint> {
  return BigInt(await chain.rpc.request<string>('eth_getBalance', [address, numberToHex(block)]));
}

describe('ethereum host functions on a real chain', () => {
  let outputs: Map<string, string>;

  beforeAll(async () => {
    ({ outputs } = await indexFrom(chain.anvil.rpcUrl));
  }, 120_000);

  it('reads contract state as of the handler’s block, not the head', () => {
    expect(outputs.get('-3|first')).toMatch(/^probes:1;.*;pair:10,pair$/);
    expect(outputs.get('7|second')).toMatch(/^probes:2;.*;pair:20,pair$/);
  });

  it('encodes the arguments and decodes every result type the function returns', () => {
    expect(outputs.get('-3|first')).toContain(`echo:-3,0xdeadbeef,2,${chain.emitter},first`);
    expect(outputs.get('7|second')).toContain(`echo:7,0xdeadbeef,2,${chain.emitter},second`);
  });

  it('decodes a string the function returns with its byte-order mark, as graph-node’s alloy decoding keeps it', () => {
    expect(outputs.get('5|\uFEFFmarked')).toContain(`echo:5,0xdeadbeef,2,${chain.emitter},\uFEFFmarked;`);
  });

  it('reports a reverted call through try_ as reverted', () => {
    expect(outputs.get('-3|first')).toContain(';fail:reverted;');
  });

  it('gives the balance at the handler’s block and whether an address holds code', async () => {
    const senderBalance = await balanceAt(probeSender, blocks.senderBalance!);
    expect(senderBalance).toBe((await balanceAt(probeSender, blocks.senderBalance! - 1)) - 5n);
    expect(outputs.get(probeSender)).toBe(`balance:${senderBalance};code:no`);
    expect(outputs.get(chain.emitter)).toBe('balance:12;code:yes');
  });
});

describe('ethereum.call against a node that fails', () => {
  it('runs the range again instead of failing the subgraph, with the same results', async () => {
    await proxy.set({ kind: 'fail-method', method: 'eth_call', times: 3 });
    const { indexer, outputs } = await indexFrom(proxy.url);
    expect(await proxy.failed()).toBe(3);
    expect(indexer.status().fatalError).toBeNull();
    expect(outputs.get('-3|first')).toMatch(/^probes:1;echo:-3,.*;fail:reverted;pair:10,pair$/);
    expect(outputs.get('7|second')).toMatch(/^probes:2;echo:7,.*;fail:reverted;pair:20,pair$/);
  }, 120_000);
});
