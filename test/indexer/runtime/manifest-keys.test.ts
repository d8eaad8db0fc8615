// The manifest's top-level keys besides its data sources. Features are read by their names. A
// graft is refused, since the embedded indexer has no base deployment to copy from.
// indexerHints.prune is read as graph-node reads it: how many blocks of history the store keeps
// (all without it, or with `never`; `auto`, which the indexer makes twice its reorg threshold; else
// the number given), accepted from specVersion 1.0.0 only; and the history the indexer keeps from
// it, never as few blocks as its reorg threshold.
import { describe, expect, it } from 'vitest';
import { historyToKeep } from '../../../indexer/indexer.ts';
import { UNPRUNED_HISTORY_BLOCKS } from '../../../indexer/runtime/manifest.ts';
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

  it('leave prune: auto to the indexer, and keep the number of blocks given otherwise', async () => {
    expect((await loadEditedProbe(withPrune('auto'))).historyBlocks).toBe('auto');
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

describe('the history the indexer keeps', () => {
  const config = { rpcUrl: '', network: 'devnet', dataDir: '', port: 0 };
  const subgraph = async (prune: string) => loadEditedProbe(withPrune(prune));

  it('is twice the reorg threshold for prune: auto (500 by default, as graph-node)', async () => {
    expect(historyToKeep(config, await subgraph('auto'), () => undefined)).toBe(500);
    expect(historyToKeep({ ...config, reorgThreshold: 20 }, await subgraph('auto'), () => undefined)).toBe(
      40,
    );
  });

  it('is INDEXER_HISTORY_BLOCKS when set, whatever the manifest says', async () => {
    expect(historyToKeep({ ...config, historyBlocks: 900 }, await subgraph('auto'), () => undefined)).toBe(
      900,
    );
  });

  it('is one block more than the reorg threshold when fewer are asked for, and a log line says so', async () => {
    const lines: string[] = [];
    expect(historyToKeep(config, await subgraph('100'), (l) => lines.push(l))).toBe(251);
    expect(lines).toEqual([
      'history: 100 blocks asked for (indexerHints.prune); keeping 251, one more than the reorg threshold (250, INDEXER_REORG_THRESHOLD), so that a reorg that deep can be reverted',
    ]);
  });
});

describe('a grafted manifest', () => {
  it('is refused, naming the base deployment and block, and what to do instead', async () => {
    const grafted = (manifest: string) =>
      manifest.replace(
        'specVersion: 1.3.0',
        'specVersion: 1.3.0\nfeatures:\n  - grafting\ngraft:\n  base: QmBase\n  block: 1200',
      );
    await expect(loadEditedProbe(grafted)).rejects.toThrow(
      "graft (base QmBase, block 1200) is not supported: the embedded indexer holds no copy of the base deployment's data; remove `graft` to index from the data sources' start blocks",
    );
  });
});

describe("a manifest's features", () => {
  it('are read by their graph-node names', async () => {
    expect((await loadEditedProbe((m) => m)).features).toEqual(new Set());
    const declaring = (manifest: string) =>
      manifest.replace(
        'specVersion: 1.3.0',
        'specVersion: 1.3.0\nfeatures:\n  - nonFatalErrors\n  - fullTextSearch',
      );
    expect((await loadEditedProbe(declaring)).features).toEqual(
      new Set(['nonFatalErrors', 'fullTextSearch']),
    );
  });
});
