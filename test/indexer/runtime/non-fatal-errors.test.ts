// Handler failures under the manifest's nonFatalErrors feature, through the probe wasm: the failed
// handler's changes (entity writes, data sources created) are discarded, the block's other handlers
// run, and the failure comes back with the block's result, as graph-node discards a failed handler's
// changes. The store script (kind 27) writes and creates before its `fail` command aborts it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlockResult } from '../../../indexer/runtime/block-processor.ts';
import {
  loadEditedProbe,
  makeLog,
  probeAbi,
  probeAddress,
  RuntimeHarness,
  txHash,
  useProbeHarness,
} from './runtime-harness.ts';

const TEMPLATE_ADDRESS = `0x${'bb'.repeat(20)}` as const;

let harness: RuntimeHarness;
beforeAll(async () => {
  harness = RuntimeHarness.forSubgraph(
    await loadEditedProbe((text) => text.replace(/^features:$/m, 'features:\n  - nonFatalErrors')),
  );
}, 180_000);
afterAll(() => harness?.close());

/** Runs one block of probe events, one per `[kind, input]`, in log index order. */
function runProbes(...probes: [number, string][]): BlockResult {
  const block = harness.lastBlock + 1;
  return harness.runBlock(
    block,
    probes.map(([kind, input], logIndex) =>
      makeLog(probeAbi, 'Probe', { kind, input }, { address: probeAddress, block, logIndex }),
    ),
  );
}

/** A field of an entity's current version, or null. */
function fieldOf(type: string, id: string, field: string): unknown {
  const value = harness.store.getCurrent(type, id)?.get(field);
  return value && 'value' in value ? value.value : null;
}
const label = (id: string) => fieldOf('Child', id, 'label');
const sequenceOf = (block: number, logIndex: number) =>
  fieldOf('ProbeResult', `${txHash(block)}-${logIndex}`, 'sequence');

describe('runtime: a handler failure under nonFatalErrors', () => {
  it('discards what the failed handler wrote and runs the handlers after it in the block', () => {
    const result = runProbes([27, 'set kept - one'], [27, 'set lost - two;fail'], [5, '7']);
    const block = harness.lastBlock;
    expect(label('kept')).toBe('one');
    expect(label('lost')).toBeNull();
    // the failed handler's ProbeResult and its step of the Sequence counter all handlers share are gone
    const first = sequenceOf(block, 0) as number;
    expect([sequenceOf(block, 1), sequenceOf(block, 2)]).toEqual([null, first + 1]);
    expect(result.errors.map((e) => [e.handler, e.logIndex, e.blockNumber])).toEqual([
      ['handleProbe', 1, BigInt(block)],
    ]);
    expect(result.errors[0]?.message).toContain('the store script said to fail');
  });

  it('puts back the versions of entities the failed handler changed or removed earlier in the block', () => {
    runProbes(
      [27, 'set changed - before;set removed - here'],
      [27, 'set changed - after;rm Child removed;fail'],
    );
    expect(label('changed')).toBe('before');
    expect(label('removed')).toBe('here');
  });

  it('discards the data sources the failed handler created', () => {
    const result = runProbes([27, `create ProbeTemplate ${TEMPLATE_ADDRESS};fail`]);
    expect(result.createdDataSources).toEqual([]);
    expect(harness.sources.forAddress(TEMPLATE_ADDRESS)).toEqual([]);
  });

  it('logs the failure as an error, saying the changes are discarded', () => {
    runProbes([27, 'fail']);
    const line = harness.logged.at(-1);
    expect(line?.level).toBe('error');
    expect(line?.message).toMatch(
      /^Handler handleProbe of data source ProbeEmitter failed at block \d+, transaction 0x[0-9a-f]{64}, log index 0: .*the store script said to fail.*; its changes are discarded \(nonFatalErrors\)$/,
    );
  });
});

describe('runtime: the same failure without nonFatalErrors', () => {
  const plain = useProbeHarness();

  it('fails the block', () => {
    expect(plain().storeScriptError('set lost - two', 'fail')).toContain('the store script said to fail');
  });
});
