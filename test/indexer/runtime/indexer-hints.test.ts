// The manifest's indexerHints.prune, read as graph-node reads it: how many blocks of history the
// store keeps (all without it, or with `never`; 500 with `auto`; else the number given), accepted
// from specVersion 1.0.0 only.
import { describe, expect, it } from 'vitest';
import { AUTO_HISTORY_BLOCKS, UNPRUNED_HISTORY_BLOCKS } from '../../../indexer/runtime/manifest.ts';
import { loadEditedProbe } from './runtime-harness.ts';

const withPrune =
  (prune: string, specVersion = '1.3.0') =>
  (manifest: string) =>
    manifest.replace('specVersion: 1.3.0', `specVersion: ${specVersion}\nindexerHints:\n  prune: ${prune}`);

describe("a manifest's indexerHints", () => {
  it('keep all history when absent or when prune is never', async () => {
    expect((await loadEditedProbe((m) => m)).historyBlocks).toBe(UNPRUNED_HISTORY_BLOCKS);
    expect((await loadEditedProbe(withPrune('never'))).historyBlocks).toBe(UNPRUNED_HISTORY_BLOCKS);
  });

  it("keep graph-node's minimum history for prune: auto, and the number of blocks given otherwise", async () => {
    expect((await loadEditedProbe(withPrune('auto'))).historyBlocks).toBe(AUTO_HISTORY_BLOCKS);
    expect(AUTO_HISTORY_BLOCKS).toBe(500);
    expect((await loadEditedProbe(withPrune('1200'))).historyBlocks).toBe(1200);
    expect((await loadEditedProbe(withPrune('"1200"'))).historyBlocks).toBe(1200);
  });

  it('refuse a prune value that is neither auto, never nor a number of blocks, naming what it takes', async () => {
    for (const [value, shown] of [
      ['all', '"all"'],
      ['0', '0'],
      ['-5', '-5'],
      ['1.5', '1.5'],
    ]) {
      await expect(loadEditedProbe(withPrune(value!))).rejects.toThrow(
        `indexerHints.prune must be auto, never or a number of blocks from 1 to 2147483647, not ${shown}`,
      );
    }
  });

  it('are refused before specVersion 1.0.0, as graph-node refuses them', async () => {
    await expect(loadEditedProbe(withPrune('auto', '0.0.9'))).rejects.toThrow(
      '`indexerHints` are not supported prior to 1.0.0 (this manifest has 0.0.9)',
    );
  });
});
