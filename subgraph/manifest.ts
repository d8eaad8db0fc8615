// Reads what the project needs from a subgraph manifest (subgraph.yaml, or the one `graph build`
// writes): each data source and template, its ABI, its address and start block, its mapping file and
// its event handlers; and the ABIs those sources declare, where their files are (abiPath) and what
// they hold (readAbi). It is a YAML parse (the `yaml` package the embedded indexer's runtime uses
// too), so key order, quoting, comments and flow style do not matter: an earlier reader matched
// lines of the committed file's layout and found no handler whose `handler:` came before its `event:`.
//
// It lives in subgraph/, beside the manifest it describes, because the service reads it at run time
// (gateway/event-names.ts: the event names of the indexed stream are the manifest's, and their
// address parameters its ABIs'; gateway/claim-function.ts: the claim call a dividend proof makes is
// the DividendDistributor ABI's) and the subgraph's build and deploy scripts (subgraph/scripts/) read
// it too: the gateway may depend on the subgraph's description but not on its deploy tooling. It
// imports nothing of the project.
// (indexer/runtime/manifest.ts loads the built manifest in full for the runtime: handlers' topics and
// filters, declared calls, the wasm; this reader is for everything else.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi } from 'viem';
import { parse as parseYaml } from 'yaml';

export const subgraphDir = fileURLToPath(new URL('.', import.meta.url));
export const manifestPath = join(subgraphDir, 'subgraph.yaml');

interface ManifestEventHandler {
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

type YamlMap = Record<string, unknown>;

const isMap = (value: unknown): value is YamlMap =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `./src/x.ts` -> `src/x.ts`, as paths are compared relative to the manifest's directory */
const relativePath = (file: string) => file.replace(/^\.\//, '');

/** The data sources, then the templates, of the manifest `text` (by default the committed subgraph.yaml). */
export function readManifest(text: string = readFileSync(manifestPath, 'utf8')): ManifestSource[] {
  let manifest: unknown;
  try {
    manifest = parseYaml(text);
  } catch (error) {
    throw new Error(`subgraph.yaml: not YAML (${(error as Error).message})`);
  }
  if (!isMap(manifest)) throw new Error('subgraph.yaml: not a mapping of keys to values');
  const sources: ManifestSource[] = [];
  for (const section of ['dataSources', 'templates'] as const) {
    const entries = manifest[section] ?? [];
    if (!Array.isArray(entries)) throw new Error(`subgraph.yaml: ${section} is not a list`);
    entries.forEach((entry: unknown, i) =>
      sources.push(readSource(entry, `${section}[${i}]`, section === 'templates')),
    );
  }
  return sources;
}

/**
 * The absolute path of the ABI file `source` declares as `name` (by default `source.abi`, the ABI its
 * events are decoded with), resolved against subgraph/ as the committed manifest's paths are.
 */
export function abiPath(source: ManifestSource, name: string = source.abi): string {
  const file = source.abiFiles.get(name);
  if (file === undefined) {
    throw new Error(
      `subgraph.yaml: data source "${source.name}" declares no ABI named ${name} in mapping.abis`,
    );
  }
  return join(subgraphDir, file);
}

/** The ABI `source` decodes its events with (`source.abi`), read from its file. */
export function readAbi(source: ManifestSource): Abi {
  const path = abiPath(source);
  let abi: unknown;
  try {
    abi = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(
      `${path} cannot be read as JSON (${(error as Error).message}): run \`npm run subgraph:abis\``,
    );
  }
  if (!Array.isArray(abi))
    throw new Error(`${path} is no ABI (not a JSON array): run \`npm run subgraph:abis\``);
  return abi as Abi;
}

function readSource(entry: unknown, where: string, template: boolean): ManifestSource {
  const at = (path: string) => `subgraph.yaml: ${where}.${path}`;
  const string = (value: unknown, path: string): string | undefined => {
    if (value === undefined || value === null) return undefined;
    // an unquoted 0x address is a YAML integer: graph-cli refuses it too
    if (typeof value !== 'string') throw new Error(`${at(path)} is not a string: ${String(value)}`);
    return value;
  };
  const list = (value: unknown, path: string): unknown[] => {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw new Error(`${at(path)} is not a list`);
    return value;
  };
  const map = (value: unknown, path: string): YamlMap => {
    if (value === undefined || value === null) return {};
    if (!isMap(value)) throw new Error(`${at(path)} is not a mapping`);
    return value;
  };

  const spec = map(entry, '');
  const source = map(spec.source, 'source');
  const mapping = map(spec.mapping, 'mapping');
  const name = string(spec.name, 'name') ?? '';
  const abi = string(source.abi, 'source.abi') ?? '';
  const startBlock = source.startBlock;
  if (startBlock !== undefined && startBlock !== null && !Number.isSafeInteger(startBlock)) {
    throw new Error(`${at('source.startBlock')} is not a block number: ${JSON.stringify(startBlock)}`);
  }
  const abiFiles = new Map<string, string>();
  list(mapping.abis, 'mapping.abis').forEach((item, i) => {
    const entry = map(item, `mapping.abis[${i}]`);
    const abiName = string(entry.name, `mapping.abis[${i}].name`);
    const file = string(entry.file, `mapping.abis[${i}].file`);
    if (abiName !== undefined && file !== undefined) abiFiles.set(abiName, relativePath(file));
  });
  const eventHandlers = list(mapping.eventHandlers, 'mapping.eventHandlers').map((item, i) => {
    const path = `mapping.eventHandlers[${i}]`;
    const handler = map(item, path);
    const event = string(handler.event, `${path}.event`);
    const handlerName = string(handler.handler, `${path}.handler`);
    if (event === undefined || handlerName === undefined)
      throw new Error(`${at(path)} lacks event or handler`);
    return { event, handler: handlerName };
  });

  if (!name || !abi || !abiFiles.has(abi)) {
    throw new Error(`subgraph.yaml: data source "${name || '?'}" lacks a name, source.abi or its ABI file`);
  }
  return {
    name,
    template,
    abi,
    // a template's instances get their address when created
    address: string(source.address, 'source.address'),
    startBlock: typeof startBlock === 'number' ? startBlock : undefined,
    mappingFile: relativePath(string(mapping.file, 'mapping.file') ?? ''),
    abiFiles,
    eventHandlers,
  };
}
