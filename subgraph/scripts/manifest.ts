// Reads the parts of subgraph.yaml that the project's scripts and tests check: each data
// source or template, its ABI and its event handlers. The manifest is Prettier-formatted,
// so a reader for its fixed layout suffices and no YAML package is needed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const subgraphDir = fileURLToPath(new URL('..', import.meta.url));
export const manifestPath = join(subgraphDir, 'subgraph.yaml');

export interface ManifestEventHandler {
  /** graph-cli's event signature, e.g. `NavSubmitted(indexed address,indexed uint64)` */
  event: string;
  handler: string;
}

export interface ManifestSource {
  /** data source or template name */
  name: string;
  template: boolean;
  /** the ABI the source is decoded with (`source.abi`) */
  abi: string;
  /** `source.address` and `source.startBlock`; templates have neither */
  address: string | undefined;
  startBlock: number | undefined;
  /** `mapping.file`: the AssemblyScript source, or in a built manifest the wasm module */
  mappingFile: string;
  /** every ABI the mapping declares, by name, with its file relative to the manifest's directory */
  abiFiles: Map<string, string>;
  eventHandlers: ManifestEventHandler[];
}

export function readManifest(text: string = readFileSync(manifestPath, 'utf8')): ManifestSource[] {
  const sources: ManifestSource[] = [];
  let section: 'dataSources' | 'templates' | null = null;
  let current: ManifestSource | null = null;
  let pendingAbiName: string | null = null;
  for (const line of text.split('\n')) {
    const topLevel = /^(\w+):/.exec(line);
    if (topLevel) {
      section = topLevel[1] === 'dataSources' || topLevel[1] === 'templates' ? topLevel[1] : null;
      current = null;
      continue;
    }
    if (section === null) continue;
    if (/^ {2}- kind: /.test(line)) {
      current = {
        name: '',
        template: section === 'templates',
        abi: '',
        address: undefined,
        startBlock: undefined,
        mappingFile: '',
        abiFiles: new Map(),
        eventHandlers: [],
      };
      sources.push(current);
      continue;
    }
    if (current === null) continue;
    const value = (pattern: RegExp): string | undefined =>
      pattern.exec(line)?.[1]?.replace(/^['"]|['"]$/g, '');
    const name = value(/^ {4}name: (.+)$/);
    if (name !== undefined) current.name = name;
    const abi = value(/^ {6}abi: (.+)$/);
    if (abi !== undefined) current.abi = abi;
    const address = value(/^ {6}address: (.+)$/);
    if (address !== undefined) current.address = address;
    const startBlock = value(/^ {6}startBlock: (.+)$/);
    if (startBlock !== undefined) current.startBlock = Number(startBlock);
    const mappingFile = value(/^ {6}file: (.+)$/);
    if (mappingFile !== undefined) current.mappingFile = mappingFile.replace(/^\.\//, '');
    const abiName = value(/^ {8}- name: (.+)$/);
    if (abiName !== undefined) pendingAbiName = abiName;
    const abiFile = value(/^ {10}file: (.+)$/);
    if (abiFile !== undefined && pendingAbiName !== null) {
      current.abiFiles.set(pendingAbiName, abiFile.replace(/^\.\//, ''));
      pendingAbiName = null;
    }
    const event = value(/^ {8}- event: (.+)$/);
    if (event !== undefined) current.eventHandlers.push({ event, handler: '' });
    const handler = value(/^ {10}handler: (.+)$/);
    const last = current.eventHandlers.at(-1);
    if (handler !== undefined && last !== undefined) last.handler = handler;
  }
  for (const source of sources) {
    if (!source.name || !source.abi || !source.abiFiles.has(source.abi)) {
      throw new Error(
        `subgraph.yaml: data source "${source.name || '?'}" lacks a name, source.abi or its ABI file`,
      );
    }
  }
  return sources;
}

/** An ABI event in graph-cli's signature form: `Name(indexed type,type,...)`. */
export function eventSignature(event: {
  name: string;
  inputs: readonly { type: string; indexed?: boolean; components?: readonly unknown[] }[];
}): string {
  const params = event.inputs.map((input) => `${input.indexed ? 'indexed ' : ''}${abiType(input)}`);
  return `${event.name}(${params.join(',')})`;
}

function abiType(input: { type: string; components?: readonly unknown[] }): string {
  if (!input.type.startsWith('tuple')) return input.type;
  const components = (input.components ?? []) as { type: string; components?: readonly unknown[] }[];
  return `(${components.map(abiType).join(',')})${input.type.slice('tuple'.length)}`;
}
