// A static data source's `context` in the manifest, as graph-node reads it: the host-probe
// subgraph's ProbeEmitter is given a context of every value type, keys out of order, and its
// handler (probe kind 21) lists what dataSource.context() returned to the wasm: sorted by key, as
// graph-node hands it over, each value of its type and exact (an Int8 at 2^63-1, a BigInt past 64
// bits, a Timestamp to the microsecond).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryIndexer } from './graphql-client.ts';
import { startEditedProbeIndexer, startProbeChain, type ProbeChain } from './probe-chain.ts';
import type { Indexer } from '../../indexer/indexer.ts';

const context = `
    context:
      zeta: { type: String, data: last }
      big: { type: Int8, data: 9223372036854775807 }
      amount: { type: BigDecimal, data: "1.50" }
      owner: { type: Bytes, data: "0x01AB" }
      at: { type: Timestamp, data: "2024-01-02T03:04:05.123456Z" }
      flags: { type: List, data: [{ type: Bool, data: true }, { type: "Null" }] }
      huge: { type: BigInt, data: "-123456789012345678901234567890" }
      small: { type: Int, data: -7 }`;

let chain: ProbeChain;
let running: { indexer: Indexer; stop(): Promise<void> };

beforeAll(async () => {
  chain = await startProbeChain();
  running = await startEditedProbeIndexer(chain, (manifest) =>
    manifest.replace(/^( {2}- kind: ethereum\n {4}name: ProbeEmitter)$/m, `$1${context}`),
  );
}, 180_000);

afterAll(async () => {
  await running?.stop();
  await chain?.stop();
});

describe('indexer: a static data source with a context in the manifest', () => {
  it('hands its handlers that context, sorted by key, every value exact', async () => {
    const block = await chain.probe(21, '');
    await running.indexer.waitForBlock(block);
    const { probeResults } = await queryIndexer<{ probeResults: { output: string }[] }>(
      running.indexer.queryUrl,
      '{ probeResults(where: { kind: 21 }) { output } }',
    );
    expect(probeResults.map((r) => r.output.split(','))).toEqual([
      [
        'devnet',
        chain.emitter,
        '8',
        'amount=BigDecimal:1.5',
        'at=Timestamp:1704164645123456',
        'big=Int8:9223372036854775807',
        'flags=Array:[true',
        ' null]',
        'huge=BigInt:-123456789012345678901234567890',
        'owner=Bytes:0x01ab',
        'small=Int:-7',
        'zeta=String:last',
      ],
    ]);
  });
});
