// The manifest must handle every event of every contract it tracks (each becomes a
// ProtocolEvent record), and the build must produce the wasm modules exporting those handlers
// with the devnet addresses of networks.json substituted in.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Abi, AbiEvent } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSubgraph, builtManifestPath } from '../../subgraph/scripts/build-subgraph.ts';
import { manifestSignature } from '../../indexer/runtime/manifest.ts';
import { readManifest, subgraphDir, type ManifestSource } from '../../subgraph/manifest.ts';
import { readNetwork } from '../../subgraph/scripts/networks.ts';

function abiEventSignatures(source: ManifestSource, baseDir: string): string[] {
  const file = source.abiFiles.get(source.abi);
  if (file === undefined) throw new Error(`${source.name} has no ABI file`);
  const abi = JSON.parse(readFileSync(join(baseDir, file), 'utf8')) as Abi;
  return abi
    .filter((entry): entry is AbiEvent => entry.type === 'event')
    .map(manifestSignature)
    .sort();
}

describe('subgraph manifest', () => {
  it('has a handler for every event in the ABI of each data source and template, and no other', () => {
    const sources = readManifest();
    expect(sources.map((source) => `${source.name}${source.template ? ' (template)' : ''}`)).toEqual([
      'FundRegistry',
      'NavOracle',
      'DividendDistributor',
      'FundVault (template)',
    ]);
    for (const source of sources) {
      const handled = source.eventHandlers.map((handler) => handler.event).sort();
      expect(handled, source.name).toEqual(abiEventSignatures(source, subgraphDir));
    }
  });

  it('names each handler after its event', () => {
    for (const source of readManifest()) {
      for (const { event, handler } of source.eventHandlers) {
        expect(handler, `${source.name} ${event}`).toBe(`handle${event.slice(0, event.indexOf('('))}`);
      }
    }
  });
});

describe('the manifest reader (subgraph/manifest.ts)', () => {
  const dataSource = (handlers: string) => `
specVersion: 1.3.0
dataSources:
  - name: NavOracle   # keys in any order
    kind: ethereum
    mapping:
      file: "./src/nav-oracle.ts"
      eventHandlers:
${handlers}
      abis: [{ file: ./abis/NavOracle.json, name: NavOracle }]
    source: { startBlock: 7, abi: NavOracle, address: '0x00000000000000000000000000000000000000aa' }
`;

  it('reads a handler whatever the order of its keys, in block or flow style', () => {
    const [source] = readManifest(
      dataSource(`        - handler: handleNavSubmitted
          event: NavSubmitted(indexed address,indexed uint64)
        - { handler: handleNavPublished, receipt: true, event: 'NavPublished(indexed address,indexed uint64,uint256)' }`),
    );
    expect(source).toEqual({
      name: 'NavOracle',
      template: false,
      abi: 'NavOracle',
      address: '0x00000000000000000000000000000000000000aa',
      startBlock: 7,
      mappingFile: 'src/nav-oracle.ts',
      abiFiles: new Map([['NavOracle', 'abis/NavOracle.json']]),
      eventHandlers: [
        { event: 'NavSubmitted(indexed address,indexed uint64)', handler: 'handleNavSubmitted' },
        { event: 'NavPublished(indexed address,indexed uint64,uint256)', handler: 'handleNavPublished' },
      ],
    });
  });

  it('names the place of an entry it cannot read', () => {
    expect(() => readManifest(dataSource('        - handler: handleNavSubmitted'))).toThrow(
      'subgraph.yaml: dataSources[0].mapping.eventHandlers[0] lacks event or handler',
    );
    expect(() => readManifest(dataSource('        - { event: [1], handler: h }'))).toThrow(
      'subgraph.yaml: dataSources[0].mapping.eventHandlers[0].event is not a string',
    );
    expect(() => readManifest('dataSources: {}')).toThrow('subgraph.yaml: dataSources is not a list');
    expect(() => readManifest('dataSources: [{ name: X }]')).toThrow(
      'subgraph.yaml: data source "X" lacks a name, source.abi or its ABI file',
    );
  });
});

describe('subgraph build for the devnet', () => {
  let built: ManifestSource[];

  beforeAll(async () => {
    await buildSubgraph('devnet');
    built = readManifest(readFileSync(builtManifestPath, 'utf8'));
  });

  it('compiles one wasm module per data source exporting every handler the manifest names', async () => {
    const buildDir = dirname(builtManifestPath);
    expect(built.map((source) => source.name)).toEqual(readManifest().map((source) => source.name));
    for (const source of built) {
      const module = await WebAssembly.compile(readFileSync(join(buildDir, source.mappingFile)));
      const exported = WebAssembly.Module.exports(module).map((entry) => entry.name);
      for (const { handler } of source.eventHandlers) {
        expect(exported, `${source.name}.${handler}`).toContain(handler);
      }
    }
  });

  it("reads the built manifest's handlers as the source's, an event signature graph build folded over two lines included", () => {
    const handlers = (sources: ManifestSource[]) => sources.map((source) => source.eventHandlers);
    expect(readFileSync(builtManifestPath, 'utf8')).toMatch(/- event: EpochSettled\(indexed\n/);
    expect(handlers(built)).toEqual(handlers(readManifest()));
  });

  it('skips the build when its inputs are unchanged', async () => {
    expect(await buildSubgraph('devnet')).toMatchObject({ network: 'devnet', built: false });
  });

  it('carries the devnet addresses and start blocks of networks.json', () => {
    const devnet = readNetwork('devnet');
    for (const source of built.filter((s) => !s.template)) {
      expect({ address: source.address, startBlock: source.startBlock }, source.name).toEqual(
        devnet[source.name],
      );
    }
  });
});
