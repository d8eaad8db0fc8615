// The manifest's top-level keys besides its data sources. Features are read by their names, and
// checked as graph-node checks them. A graft is refused, since the embedded indexer has no base
// deployment to copy from. graph-node's checks of the whole manifest are made in its words.
// indexerHints.prune is read as graph-node reads it: how many blocks of history the store keeps
// (all without it, or with `never`; `auto`, which the indexer makes twice its reorg threshold; else
// the number given), accepted from specVersion 1.0.0 only; and the history the indexer keeps from
// it, never as few blocks as its reorg threshold.
import { describe, expect, it } from 'vitest';
import { historyToKeep } from '../../../indexer/deployment.ts';
import { UNPRUNED_HISTORY_BLOCKS, loadSubgraph } from '../../../indexer/runtime/manifest.ts';
import { buildProbeSubgraph } from '../probe-build.ts';
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

/** The probe manifest with its `features` list (which names ipfsOnEthereumContracts) replaced by `names`. */
const withFeatures =
  (...names: string[]) =>
  (manifest: string) =>
    manifest.replace(
      /^features:\n {2}- ipfsOnEthereumContracts\n/m,
      names.length === 0 ? '' : `features:\n${names.map((n) => `  - ${n}\n`).join('')}`,
    );

describe('a grafted manifest', () => {
  it('is refused, naming the base deployment and block, and what to do instead', async () => {
    const grafted = (manifest: string) =>
      withFeatures(
        'ipfsOnEthereumContracts',
        'grafting',
      )(manifest).replace('specVersion: 1.3.0', 'specVersion: 1.3.0\ngraft:\n  base: QmBase\n  block: 1200');
    await expect(loadEditedProbe(grafted)).rejects.toThrow(
      "graft (base QmBase, block 1200) is not supported: the embedded indexer holds no copy of the base deployment's data; remove `graft` to index from the data sources' start blocks",
    );
  });
});

describe("a manifest's features", () => {
  it('are read by their graph-node names, its alias nonDeterministicIpfs as ipfsOnEthereumContracts', async () => {
    expect((await loadEditedProbe((m) => m)).features).toEqual(new Set(['ipfsOnEthereumContracts']));
    const declaring = withFeatures('nonDeterministicIpfs', 'nonFatalErrors', 'fullTextSearch');
    expect((await loadEditedProbe(declaring)).features).toEqual(
      new Set(['ipfsOnEthereumContracts', 'nonFatalErrors', 'fullTextSearch']),
    );
  });

  it('refuse a name graph-node does not know, listing those it does', async () => {
    await expect(loadEditedProbe(withFeatures('ipfsOnEthereumContracts', 'fastMode'))).rejects.toThrow(
      'features: unknown variant `fastMode`, expected one of `nonFatalErrors`, `grafting`',
    );
  });

  it('must name ipfsOnEthereumContracts when a mapping imports ipfs.cat, as graph-node detects it', async () => {
    await expect(loadEditedProbe(withFeatures())).rejects.toThrow(
      'The feature `ipfsOnEthereumContracts` is used by the subgraph but it is not declared in the manifest.',
    );
  });
});

describe("graph-node's checks of a whole manifest, in its words", () => {
  it.each([
    [
      'a spec version past the latest',
      (m: string) => m.replace('specVersion: 1.3.0', 'specVersion: 1.6.0'),
      'only supports manifest spec versions between 0.0.2 and 1.5.0, but this subgraph uses `1.6.0`',
    ],
    [
      'data sources on two networks',
      (m: string) => m.replace(/^( {4}name: EveryBlock\n {4}network: )devnet$/m, '$1sepolia'),
      'subgraph cannot index data from different Ethereum networks',
    ],
    [
      'two mapping apiVersions',
      (m: string) => m.replace('apiVersion: 0.0.9', 'apiVersion: 0.0.8'),
      'subgraph must use a single apiVersion across its data sources. Found: 0.0.8, 0.0.9',
    ],
    [
      'topic filters before specVersion 1.2.0',
      (m: string) => m.replace('specVersion: 1.3.0', 'specVersion: 1.1.0'),
      'Subgraph uses spec version 1.1.0, but data source `ProbeCalls` requires at least version 1.2.0',
    ],
    [
      'receipts before apiVersion 0.0.7',
      (m: string) => m.replaceAll('apiVersion: 0.0.9', 'apiVersion: 0.0.6'),
      'data source ProbeEmitter is invalid: data source has event handlers that require transaction receipts, but this is only supported for apiVersion >= 0.0.7',
    ],
    [
      'no data sources',
      (m: string) => m.replace(/^dataSources:\n[\s\S]*?\ntemplates:/m, 'dataSources: []\ntemplates:'),
      'subgraph has no data sources',
    ],
  ])('refuses %s', async (_case, edit, message) => {
    await expect(loadEditedProbe(edit)).rejects.toThrow(message);
  });
});

describe('a mapping apiVersion', () => {
  it('is refused past 0.0.9, as graph-node refuses it by default', async () => {
    await expect(
      loadEditedProbe((m) => m.replaceAll('apiVersion: 0.0.9', 'apiVersion: 0.0.10')),
    ).rejects.toThrow(
      'The maximum supported mapping API version of this indexer is 0.0.9, but `0.0.10` was found',
    );
  });
});

describe("a network of networks.json applied to the build's data sources", () => {
  it('sets their network and every source key of their entries, an end block included, as graph-cli does', async () => {
    const built = await loadSubgraph({ buildDir: buildProbeSubgraph() });
    const contracts = Object.fromEntries(
      built.dataSources.map((ds) => [
        ds.name,
        { address: `0x${'AB'.repeat(20)}`, startBlock: 5, endBlock: 9 },
      ]),
    );
    const applied = await loadSubgraph({
      buildDir: buildProbeSubgraph(),
      network: { name: 'testnet', contracts },
    });
    expect(applied.dataSources.map((ds) => [ds.network, ds.address, ds.startBlock, ds.endBlock])).toEqual(
      built.dataSources.map(() => ['testnet', `0x${'ab'.repeat(20)}`, 5n, 9n]),
    );
  });

  it('must not give any data source the zero address, which stands for a contract not deployed, naming them all', async () => {
    const built = await loadSubgraph({ buildDir: buildProbeSubgraph() });
    const contracts = Object.fromEntries(
      built.dataSources.map((ds) => [ds.name, { address: `0x${'00'.repeat(20)}`, startBlock: 0 }]),
    );
    await expect(
      loadSubgraph({ buildDir: buildProbeSubgraph(), network: { name: 'sepolia', contracts } }),
    ).rejects.toThrow(
      'network sepolia: ProbeEmitter, EveryBlock, PollingBlock, ProbeCalls, DeclaredCalls have the zero address, which stands for a contract not deployed there: put the deployed addresses and start blocks in networks.json',
    );
  });

  it('must have an entry for each data source', async () => {
    await expect(
      loadSubgraph({ buildDir: buildProbeSubgraph(), network: { name: 'testnet', contracts: {} } }),
    ).rejects.toThrow('network testnet has no entry for data source ProbeEmitter');
  });
});
