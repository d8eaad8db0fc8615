// The manifest rules of file data sources (file/ipfs templates, graph-node's offchain data
// sources), on the host-probe subgraph's ProbeFile template with its manifest text edited.
import { describe, expect, it } from 'vitest';
import { loadEditedProbe } from './runtime-harness.ts';

describe('file data source templates in a manifest', () => {
  it('load with their handler and entities, whose types then record the causality region of each version', async () => {
    const subgraph = await loadEditedProbe((text) => text);
    const template = subgraph.templates.get('ProbeFile')!;
    expect(template.kind).toBe('file/ipfs');
    expect(template.mapping.fileHandler).toBe('handleProbeFile');
    expect(template.mapping.entities).toEqual(['FileContent']);
    expect([...subgraph.fileEntityTypes]).toEqual(['FileContent']);
    expect(subgraph.templates.get('ProbeTemplate')!.kind).toBe('ethereum');
  });

  it('are refused before specVersion 0.0.7, as graph-node refuses them', async () => {
    await expect(
      loadEditedProbe((text) => text.replace('specVersion: 1.3.0', 'specVersion: 0.0.6')),
    ).rejects.toThrow(
      'template ProbeFile: file data sources (kind file/ipfs) are only supported from specVersion 0.0.7 (this manifest has 0.0.6)',
    );
  });

  it('cannot be static data sources', async () => {
    await expect(
      loadEditedProbe((text) =>
        text.replace('- kind: ethereum\n    name: EveryBlock', '- kind: file/ipfs\n    name: EveryBlock'),
      ),
    ).rejects.toThrow('data source EveryBlock: file data sources (kind file/ipfs) can only be templates');
  });

  it('need a handler', async () => {
    await expect(loadEditedProbe((text) => text.replace('handler: handleProbeFile', ''))).rejects.toThrow(
      'template ProbeFile: a file data source needs mapping.handler',
    );
  });

  it("of kind file/arweave load as file/ipfs ones do, and other file kinds are refused in graph-node's words", async () => {
    const subgraph = await loadEditedProbe((text) => text);
    expect(subgraph.templates.get('ArweaveFile')!.kind).toBe('file/arweave');
    await expect(loadEditedProbe((text) => text.replace('kind: file/ipfs', 'kind: file/s3'))).rejects.toThrow(
      'template ProbeFile: unsupported offchain datasource kind: file/s3, expected one of: file/ipfs,file/arweave',
    );
  });
});
