// Indexed argument filters of event handlers (graph-node's `topic1`-`topic3`) and a `topic0` given
// in the manifest, through the probe wasm: ProbeCalls' handleFilteredProbe gets the Probe events
// whose kind, their topic1, is 7 or 8 (written `0x7` and `08` in the manifest, padded to 32 bytes).
import { pad, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  matchesTopicFilters,
  type EventHandlerSpec,
  type Subgraph,
} from '../../../indexer/runtime/manifest.ts';
import {
  loadEditedProbe,
  makeLog,
  probeAbi,
  probeCallsAddress,
  txHash,
  useProbeHarness,
} from './runtime-harness.ts';

describe('topic filters', () => {
  const harness = useProbeHarness();

  it('runs a handler with a topic1 filter only for the logs whose topic1 is in it', () => {
    const probe = (kind: number, logIndex: number) =>
      makeLog(probeAbi, 'Probe', { kind, input: '' }, { address: probeCallsAddress, block: 1, logIndex });
    harness().runBlock(1, [probe(7, 0), probe(9, 1), probe(8, 2)]);
    const kinds = [0, 1, 2].map((i) =>
      harness()
        .store.getCurrent('FilteredProbe', `${txHash(1)}-${i}`)
        ?.get('kind'),
    );
    expect(kinds).toEqual([{ kind: 'Int', value: 7 }, undefined, { kind: 'Int', value: 8 }]);
  });
});

describe('topic filters of the manifest', () => {
  const filtered = '          handler: handleFilteredProbe\n';
  /** the filter as graph build writes it */
  const topic1 = '          topic1:\n            - "0x7"\n            - "08"\n';

  const filteredSpec = (subgraph: Subgraph): EventHandlerSpec =>
    [...subgraph.dataSources.find((d) => d.name === 'ProbeCalls')!.mapping.handlers.values()]
      .flat()
      .find((h) => h.handler === 'handleFilteredProbe')!;

  it('pads each value to 32 bytes, with or without 0x, as graph-node does', async () => {
    const spec = filteredSpec(await loadEditedProbe((text) => text));
    expect(spec.topicFilters.map((f) => (f ? [...f] : null))).toEqual([
      [pad('0x07'), pad('0x08')],
      null,
      null,
    ]);
  });

  it('keys the handler by a topic0 the manifest gives instead of the hash of its event', async () => {
    const topic0 = `0x${'ab'.repeat(32)}` as Hex;
    const subgraph = await loadEditedProbe((text) =>
      text.replace(filtered, `${filtered}          topic0: '${topic0}'\n`),
    );
    expect(filteredSpec(subgraph).topic0).toBe(topic0);
    const mapping = subgraph.dataSources.find((d) => d.name === 'ProbeCalls')!.mapping;
    expect(mapping.handlers.get(topic0)?.map((h) => h.handler)).toEqual(['handleFilteredProbe']);
  });

  it('matches no log with an empty list, and any topic where no list is given', async () => {
    const spec = filteredSpec(
      await loadEditedProbe((text) => text.replace(topic1, '          topic2: []\n')),
    );
    const topics: Hex[] = [pad('0x01', { size: 32 }), pad('0x07'), pad('0x08')];
    expect(spec.topicFilters[0]).toBeNull();
    expect(matchesTopicFilters(spec, topics)).toBe(false);
    const unfiltered = filteredSpec(
      await loadEditedProbe((text) => text.replace(topic1, '          topic3: null\n')),
    );
    expect(matchesTopicFilters(unfiltered, topics)).toBe(true);
  });

  it('refuses a value that is not hex of at most 32 bytes, a filter that is not a list, and a malformed topic0', async () => {
    await expect(loadEditedProbe((text) => text.replace('"08"', '"0xzz"'))).rejects.toThrow(
      'data source ProbeCalls: handler handleFilteredProbe: topic1 value 0xzz is not a hex string of at most 32 bytes',
    );
    await expect(
      loadEditedProbe((text) => text.replace(topic1, '          topic1: "0x7"\n')),
    ).rejects.toThrow(
      'data source ProbeCalls: handler handleFilteredProbe: topic1 must be a list of hex strings',
    );
    await expect(
      loadEditedProbe((text) => text.replace(filtered, `${filtered}          topic0: '0x1234'\n`)),
    ).rejects.toThrow('handler handleFilteredProbe: topic0 must be a 32-byte hex string (0x and 64 digits)');
  });
});
