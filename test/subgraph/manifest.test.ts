// The manifest must handle every event of every contract it tracks (each becomes a
// ProtocolEvent record), and the build must produce the wasm modules exporting those handlers
// with the devnet addresses of networks.json substituted in.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSubgraph, builtManifestPath } from '../../subgraph/scripts/build-subgraph.ts';
import {
  eventSignature,
  readManifest,
  subgraphDir,
  type ManifestSource,
} from '../../subgraph/scripts/manifest.ts';
import { readNetwork } from '../../subgraph/scripts/networks.ts';

interface AbiEntry {
  type: string;
  name: string;
  inputs: { type: string; indexed?: boolean }[];
}

function abiEventSignatures(source: ManifestSource, baseDir: string): string[] {
  const file = source.abiFiles.get(source.abi);
  if (file === undefined) throw new Error(`${source.name} has no ABI file`);
  const abi = JSON.parse(readFileSync(join(baseDir, file), 'utf8')) as AbiEntry[];
  return abi
    .filter((entry) => entry.type === 'event')
    .map(eventSignature)
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
