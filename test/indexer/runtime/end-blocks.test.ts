// Data sources with an end block (`source.endBlock`, specVersion 0.0.9), through the probe wasm
// with synthetic blocks: their logs and block handlers are handled up to the end block, included,
// and not after, as graph-node's has_expired has it; a subgraph whose data sources all end (and
// that has no templates) ends at the latest of their end blocks; older manifests are refused.
import { afterEach, describe, expect, it } from 'vitest';
import {
  loadEditedProbe,
  makeLog,
  probeAbi,
  probeAddress,
  RuntimeHarness,
  txHash,
} from './runtime-harness.ts';

/** The probe manifest with `endBlock: <end>` in the source of each named data source. */
const ending = (ends: Record<string, number>) => (manifest: string) =>
  Object.entries(ends).reduce(
    (text, [name, end]) =>
      text.replace(
        new RegExp(`(name: ${name}\\n(?:.*\\n)*?\\s+startBlock: \\d+)`),
        (source) => `${source}\n      endBlock: ${end}`,
      ),
    manifest,
  );

let harness: RuntimeHarness | null = null;
afterEach(() => {
  harness?.close();
  harness = null;
});

const probeLog = (block: number) =>
  makeLog(probeAbi, 'Probe', { kind: 5, input: '1' }, { address: probeAddress, block, logIndex: 0 });

describe('a data source with an end block', () => {
  it('handles its logs up to the end block, included, and none after', async () => {
    harness = RuntimeHarness.forSubgraph(await loadEditedProbe(ending({ ProbeEmitter: 3 })));
    for (let block = 1; block <= 5; block++) harness.runBlock(block, [probeLog(block)]);
    const handled = [1, 2, 3, 4, 5].filter((block) =>
      harness!.store.getCurrent('ProbeResult', `${txHash(block)}-0`),
    );
    expect(handled).toEqual([1, 2, 3]);
  });

  it('runs its block handlers up to the end block, included, and not after', async () => {
    harness = RuntimeHarness.forSubgraph(await loadEditedProbe(ending({ EveryBlock: 2 })));
    for (let block = 1; block <= 4; block++) harness.runBlock(block, []);
    const seen = [1, 2, 3, 4].filter((block) => harness!.store.getCurrent('BlockSeen', `every-${block}`));
    expect(seen).toEqual([1, 2]);
  });

  it('leaves the subgraph open-ended while a data source has none or templates may create more', async () => {
    expect((await loadEditedProbe(ending({ ProbeEmitter: 3 }))).endBlock).toBeNull();
    const allEnding = ending({
      ProbeEmitter: 3,
      EveryBlock: 9,
      PollingBlock: 4,
      ProbeCalls: 3,
      DeclaredCalls: 3,
    });
    expect((await loadEditedProbe(allEnding)).endBlock).toBeNull();
    const withoutTemplates = (manifest: string) =>
      allEnding(manifest).replace(/\ntemplates:\n[\s\S]*$/, '\n');
    expect((await loadEditedProbe(withoutTemplates)).endBlock).toBe(9n);
  });

  it('is refused before specVersion 0.0.9, as graph-node refuses it', async () => {
    const older = (manifest: string) =>
      ending({ ProbeEmitter: 3 })(manifest).replace('specVersion: 1.3.0', 'specVersion: 0.0.8');
    await expect(loadEditedProbe(older)).rejects.toThrow(
      'data source ProbeEmitter: defining `endBlock` in the manifest is not supported prior to 0.0.9 (this manifest has 0.0.8)',
    );
  });
});
