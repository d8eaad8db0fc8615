// Loads what `graph build` produced: the built subgraph.yaml, each data source's and template's ABIs,
// and the compiled wasm modules (compiled once and shared by every instance). Event handlers are
// keyed by topic0, computed from the manifest's event signature with its `indexed` keywords removed
// (or given as `topic0`), and may narrow the logs they get by their topic1-3 (indexed argument
// filters, graph-node's rules); the ABI event used to decode a log is the one whose signature,
// `indexed` keywords included, equals the manifest's. Call handlers are keyed by their function's
// selector, and decode with the payable or nonpayable function of the data source's ABI whose
// signature equals the manifest's. An event handler's declared eth calls (`calls:`) are parsed and
// checked against the mapping's ABIs here (declared-calls.ts). A `file/ipfs` or `file/arweave`
// template (specVersion 0.0.7) is a file data source: its one handler gets a file's bytes, and it
// may write only the entity types it lists. A data source's `source.endBlock` (specVersion 0.0.9)
// is the last block it handles; `indexerHints.prune` (specVersion 1.0.0) says how many blocks of
// history the store keeps. A grafted manifest is refused: it needs a base deployment's data.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  keccak256,
  toBytes,
  type Abi,
  type AbiEvent,
  type AbiFunction,
  type AbiParameter,
  type Hex,
} from 'viem';
import { contextFromManifest } from './manifest-context.ts';
import { parseDeclaredCalls, type DeclaredCall } from './declared-calls.ts';
import { createEventDecoder, handlerParameters, type EventDecoder } from './event-decoder.ts';
import { importMemory, type MemoryLimits } from './wasm-memory-import.ts';
import { meterExecution } from './execution-budget.ts';
import type { Entity } from '../store/entity.ts';

export interface EventHandlerSpec {
  /** the manifest's event signature, e.g. `Transfer(indexed address,indexed address,uint256)` */
  event: string;
  handler: string;
  topic0: Hex;
  /** whether the handler declared `receipt: true` */
  receipt: boolean;
  /**
   * the manifest's `topic1`, `topic2` and `topic3`: for each, null (any topic) or the topics a log
   * must have there (lowercase; an empty list matches no log, as in graph-node); [] without any
   */
  topicFilters: readonly (ReadonlySet<Hex> | null)[];
  abiEvent: AbiEvent;
  decode: EventDecoder;
  /** the reads declared under `calls:`, made before the handlers run (see declared-calls.ts) */
  calls: readonly DeclaredCall[];
}

/** A call handler: runs for successful calls to its data source's address naming its function. */
export interface CallHandlerSpec {
  /** the manifest's function signature, e.g. `record(uint256,string)` */
  function: string;
  handler: string;
  abiFunction: AbiFunction;
}

/**
 * A block handler and when it runs (graph-node's BlockHandlerFilter): `every` block from the data
 * source's start block, every `polling` interval from it, `once` at it, or at the blocks holding a
 * `call` to the data source's address.
 */
export type BlockHandlerSpec =
  | { handler: string; filter: 'every' | 'once' | 'call' }
  | { handler: string; filter: 'polling'; every: number };

export interface MappingSpec {
  apiVersion: string;
  wasmFile: string;
  /**
   * compiled with its memory turned into an import (see wasm-memory-import.ts) and its executions
   * metered (see execution-budget.ts)
   */
  module: WebAssembly.Module;
  memoryLimits: MemoryLimits;
  /** handlers by topic0, in manifest order */
  handlers: Map<Hex, EventHandlerSpec[]>;
  /** whether an event handler declares `receipt: true` (the follower then fetches receipts) */
  declaresReceipts: boolean;
  /** at most one of each filter, never `every` together with `once` or `polling` */
  blockHandlers: BlockHandlerSpec[];
  /** call handlers by selector (the first in manifest order where two share one, as graph-node) */
  callHandlers: Map<Hex, CallHandlerSpec>;
  /** whether calls to the data source's address trigger handlers (call, or `call` block handlers) */
  tracesCalls: boolean;
  /** the mapping's ABIs by their manifest name: what ethereum.call looks contracts up in */
  abis: Map<string, Abi>;
  /** a file data source's handler (gets the file's bytes); null for chain data sources */
  fileHandler: string | null;
  /** the manifest's `entities`: what a file data source may read and write (graph-node's entity-type access) */
  entities: readonly string[];
}

interface DataSourceSpec {
  name: string;
  network: string;
  /** lowercase address, or null when the data source matches every address */
  address: Hex | null;
  startBlock: bigint;
  /** the last block whose triggers it handles (`source.endBlock`, specVersion 0.0.9), or null */
  endBlock: bigint | null;
  /** the manifest's `context`: what `dataSource.context()` returns to its handlers, or null */
  context: Entity | null;
  mapping: MappingSpec;
}

/** Where a file data source's file comes from (graph-node's offchain data source kinds). */
type FileKind = 'file/ipfs' | 'file/arweave';

export interface TemplateSpec {
  /** `ethereum`: a contract at an address given on creation; `file/*`: a file data source */
  kind: 'ethereum' | FileKind;
  name: string;
  network: string;
  mapping: MappingSpec;
}

export interface Subgraph {
  buildDir: string;
  network: string;
  schemaFile: string;
  dataSources: DataSourceSpec[];
  templates: Map<string, TemplateSpec>;
  /** whether an event handler declares eth calls (see declared-calls.ts) */
  declaresCalls: boolean;
  /** the entity types file data sources may write: their tables record each version's causality region */
  fileEntityTypes: ReadonlySet<string>;
  specVersion: string;
  /** the features the manifest declares (`features:`, graph-node's names, its alias read as the name) */
  features: ReadonlySet<string>;
  /**
   * the kinds of the data sources and templates as the manifest spells them (`ethereum/contract`
   * and `ethereum` both run as `ethereum`), which graph-node's subgraphFeatures reports
   */
  declaredKinds: ReadonlySet<string>;
  /**
   * the last block worth indexing: the latest end block when every data source has one and there
   * are no templates (graph-node stops such a subgraph there), else null
   */
  endBlock: bigint | null;
  /**
   * how many blocks of history the store keeps (`indexerHints.prune`): UNPRUNED_HISTORY_BLOCKS for
   * all, 'auto' for twice the reorg threshold (graph-node's GRAPH_MIN_HISTORY_BLOCKS default)
   */
  historyBlocks: number | 'auto';
}

/** graph-node's history for a deployment that is never pruned (BLOCK_NUMBER_MAX). */
export const UNPRUNED_HISTORY_BLOCKS = 2_147_483_647;

/** A data source's entry in networks.json: the `source` keys it sets, as graph-cli's `--network` does. */
export interface NetworkContract {
  address: string;
  startBlock: number;
  endBlock?: number;
}

interface LoadSubgraphOptions {
  /** directory `graph build` wrote (holds subgraph.yaml, schema.graphql, wasm and ABIs) */
  buildDir: string;
  /** the built manifest; defaults to `<buildDir>/subgraph.yaml` */
  manifestPath?: string;
  /**
   * a network of networks.json: every data source takes its name as `network` and its entry's keys
   * into `source`, replacing the build's (each data source must have an entry)
   */
  network?: { name: string; contracts: Record<string, NetworkContract> };
}

interface CompiledMapping {
  module: WebAssembly.Module;
  memoryLimits: MemoryLimits;
}

interface RawHandler {
  event?: string;
  handler?: string;
  receipt?: boolean;
  topic0?: unknown;
  topic1?: unknown;
  topic2?: unknown;
  topic3?: unknown;
  calls?: unknown;
}

interface RawDataSource {
  kind?: string;
  name?: string;
  network?: string;
  source?: { address?: string; abi?: string; startBlock?: number; endBlock?: unknown };
  context?: unknown;
  mapping?: {
    kind?: string;
    apiVersion?: string;
    language?: string;
    file?: string;
    abis?: { name: string; file: string }[];
    handler?: string;
    entities?: unknown;
    eventHandlers?: RawHandler[];
    blockHandlers?: { handler?: string; filter?: { kind?: string; every?: unknown } }[];
    callHandlers?: { function?: string; handler?: string }[];
  };
}

interface RawManifest {
  specVersion?: unknown;
  indexerHints?: { prune?: unknown } | null;
  graft?: { base?: unknown; block?: unknown } | null;
  features?: unknown;
  schema?: { file?: string };
  dataSources?: RawDataSource[];
  templates?: RawDataSource[];
}

/** The manifest spec versions graph-node accepts (its MIN_SPEC_VERSION and default maximum). */
const MIN_SPEC_VERSION = '0.0.2';
export const LATEST_SPEC_VERSION = '1.5.0';
/** graph-node's default GRAPH_MAX_API_VERSION: the newest mapping apiVersion it runs */
const MAX_API_VERSION = '0.0.9';

/** `Name(type,...)` with `indexed ` prefixes removed and whitespace normalized. */
function canonicalSignature(event: string): string {
  return event
    .replace(/\s+/g, ' ')
    .replace(/\bindexed /g, '')
    .replace(/\s/g, '');
}

/** Whether `version` (`major.minor.patch`: a mapping's apiVersion or a specVersion) is `minimum` or later. */
export function versionAtLeast(version: string, minimum: string): boolean {
  const have = version.split('.').map(Number);
  const want = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) !== (want[i] ?? 0)) return (have[i] ?? 0) > (want[i] ?? 0);
  }
  return true;
}

/** A parameter's type as signatures spell it: tuples as their component types in parentheses. */
export function formatParameterType(param: AbiParameter): string {
  if (param.type.startsWith('tuple')) {
    const components = 'components' in param ? param.components : [];
    return `(${components.map(formatParameterType).join(',')})${param.type.slice('tuple'.length)}`;
  }
  return param.type;
}

/** The manifest form of an ABI event: `Name(indexed address,uint256)`. */
export function manifestSignature(event: AbiEvent): string {
  const inputs = event.inputs.map(
    (input) => `${input.indexed ? 'indexed ' : ''}${formatParameterType(input)}`,
  );
  return `${event.name}(${inputs.join(',')})`;
}

function findAbiEvent(abis: Abi[], event: string): AbiEvent {
  const wanted = event.replace(/\s+/g, ' ').trim();
  const canonical = canonicalSignature(event);
  const events = abis.flat().filter((item): item is AbiEvent => item.type === 'event');
  const exact = events.find((e) => manifestSignature(e) === wanted);
  if (exact) return exact;
  // Manifests written without `indexed` keywords match on the canonical signature alone.
  const loose =
    !/\bindexed\b/.test(wanted) && events.find((e) => canonicalSignature(manifestSignature(e)) === canonical);
  if (loose) return loose;
  throw new Error(`event ${event} is not in the data source's ABIs`);
}

async function readAbi(file: string): Promise<Abi> {
  const json: unknown = JSON.parse(await readFile(file, 'utf8'));
  if (Array.isArray(json)) return json as Abi;
  if (json && typeof json === 'object' && Array.isArray((json as { abi?: unknown }).abi)) {
    return (json as { abi: Abi }).abi;
  }
  throw new Error(`${file} is not an ABI`);
}

function blockHandlerSpec(
  dataSource: string,
  raw: { handler?: string; filter?: { kind?: string; every?: unknown } },
): BlockHandlerSpec {
  if (!raw.handler) throw new Error(`data source ${dataSource}: block handler without handler`);
  const kind = raw.filter?.kind;
  if (kind === undefined) return { handler: raw.handler, filter: 'every' };
  if (kind === 'once') return { handler: raw.handler, filter: 'once' };
  if (kind === 'polling') {
    const every = raw.filter?.every;
    if (typeof every !== 'number' || !Number.isInteger(every) || every < 1)
      throw new Error(
        `data source ${dataSource}: block handler ${raw.handler}: polling needs \`every\`, a positive integer`,
      );
    return { handler: raw.handler, filter: 'polling', every };
  }
  if (kind === 'call') return { handler: raw.handler, filter: 'call' };
  throw new Error(`data source ${dataSource}: block handler ${raw.handler}: unknown filter kind ${kind}`);
}

/**
 * A handler's `topic1`-`topic3` filter as graph-node reads it: a list of hex strings, each with or
 * without 0x and left-padded with zeros to 32 bytes (so an address or a small number may be given
 * as it is); null when absent.
 */
function topicFilter(where: string, name: string, raw: unknown): Set<Hex> | null {
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw)) throw new Error(`${where}: ${name} must be a list of hex strings`);
  return new Set(
    raw.map((value: unknown) => {
      const hex = typeof value === 'string' ? value.replace(/^(0x)+/, '') : '';
      if (!/^[0-9a-fA-F]{1,64}$/.test(hex))
        throw new Error(`${where}: ${name} value ${String(value)} is not a hex string of at most 32 bytes`);
      return `0x${hex.toLowerCase().padStart(64, '0')}` as Hex;
    }),
  );
}

/** Whether `topics` (a log's) pass the handler's topic1-topic3 filters. */
export function matchesTopicFilters(spec: EventHandlerSpec, topics: readonly Hex[]): boolean {
  for (let i = 0; i < spec.topicFilters.length; i++) {
    const allowed = spec.topicFilters[i];
    if (allowed && !allowed.has(topics[i + 1]?.toLowerCase() as Hex)) return false;
  }
  return true;
}

/** graph-node's rules: one handler per filter, and an unfiltered one alone (a call filter aside). */
function checkBlockHandlers(dataSource: string, handlers: readonly BlockHandlerSpec[]): void {
  const count = (filter: BlockHandlerSpec['filter']) => handlers.filter((h) => h.filter === filter).length;
  if (count('every') > 0 && (count('once') > 0 || count('polling') > 0)) {
    throw new Error(
      `data source ${dataSource}: data source has a combination of filtered and non-filtered block handlers that is not allowed`,
    );
  }
  if (count('every') > 1 || count('once') > 1 || count('polling') > 1 || count('call') > 1)
    throw new Error(`data source ${dataSource}: data source has duplicated block handlers`);
}

/** The manifest form of an ABI function: `name(type,...)`, tuples as their component types. */
function functionSignature(fn: AbiFunction): string {
  return `${fn.name}(${fn.inputs.map(formatParameterType).join(',')})`;
}

/**
 * The call handlers of a mapping by selector. As graph-node, the function is looked up among the
 * payable and nonpayable functions of the data source's own ABI (`source.abi`), by its exact
 * signature.
 */
function callHandlerSpecs(
  dataSource: string,
  raw: readonly { function?: string; handler?: string }[],
  sourceAbi: Abi | undefined,
): Map<Hex, CallHandlerSpec> {
  const specs = new Map<Hex, CallHandlerSpec>();
  const functions = (sourceAbi ?? []).filter(
    (item): item is AbiFunction =>
      item.type === 'function' &&
      (item.stateMutability === 'payable' || item.stateMutability === 'nonpayable'),
  );
  for (const h of raw) {
    if (!h.function || !h.handler)
      throw new Error(`data source ${dataSource}: call handler without function or handler`);
    const abiFunction = functions.find((f) => functionSignature(f) === h.function);
    if (!abiFunction)
      throw new Error(
        `data source ${dataSource}: call handler ${h.handler}: function ${h.function} is not a payable or nonpayable function of the data source's ABI`,
      );
    const selector = keccak256(toBytes(h.function)).slice(0, 10) as Hex;
    if (!specs.has(selector)) specs.set(selector, { function: h.function, handler: h.handler, abiFunction });
  }
  return specs;
}

async function loadMapping(
  raw: RawDataSource,
  dir: string,
  modules: Map<string, Promise<CompiledMapping>>,
  specVersion: string,
): Promise<MappingSpec> {
  const name = raw.name ?? '(unnamed)';
  if (raw.kind !== 'ethereum' && raw.kind !== 'ethereum/contract') {
    throw new Error(`data source ${name}: kind ${raw.kind} is not supported (only ethereum)`);
  }
  const base = await loadMappingBase(raw, `data source ${name}`, dir, modules);
  const mapping = raw.mapping!;
  const blockHandlers = (mapping.blockHandlers ?? []).map((h) => blockHandlerSpec(name, h));
  checkBlockHandlers(name, blockHandlers);
  const abis = [...base.abis.values()];
  const callHandlers = callHandlerSpecs(
    name,
    mapping.callHandlers ?? [],
    raw.source?.abi === undefined ? undefined : base.abis.get(raw.source.abi),
  );
  const handlers = new Map<Hex, EventHandlerSpec[]>();
  for (const h of mapping.eventHandlers ?? []) {
    if (!h.event || !h.handler)
      throw new Error(`data source ${name}: event handler without event or handler`);
    const where = `data source ${name}: handler ${h.handler}`;
    if (h.topic0 !== undefined && (typeof h.topic0 !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(h.topic0)))
      throw new Error(`${where}: topic0 must be a 32-byte hex string (0x and 64 digits)`);
    const topic0 =
      typeof h.topic0 === 'string'
        ? (h.topic0.toLowerCase() as Hex)
        : keccak256(toBytes(canonicalSignature(h.event)));
    const abiEvent = findAbiEvent(abis, h.event);
    const topicFilters = [
      topicFilter(where, 'topic1', h.topic1),
      topicFilter(where, 'topic2', h.topic2),
      topicFilter(where, 'topic3', h.topic3),
    ];
    const calls = parseDeclaredCalls(
      {
        where,
        specVersion,
        structFields: versionAtLeast(specVersion, '1.4.0'),
        event: abiEvent,
        params: handlerParameters(abiEvent),
        abis: base.abis,
      },
      h.calls,
    );
    if (calls.length > 0 && !versionAtLeast(specVersion, '1.2.0')) {
      throw new Error(
        `${where}: declaring eth calls on handlers is only supported for specVersion >= 1.2.0 (this manifest has ${specVersion})`,
      );
    }
    const spec: EventHandlerSpec = {
      event: h.event,
      handler: h.handler,
      topic0,
      receipt: h.receipt === true,
      // none at all in the common case, so that matching a log costs nothing
      topicFilters: topicFilters.some((f) => f !== null) ? topicFilters : [],
      abiEvent,
      decode: createEventDecoder(abiEvent),
      calls,
    };
    const list = handlers.get(topic0) ?? [];
    list.push(spec);
    handlers.set(topic0, list);
  }
  return {
    ...base,
    handlers,
    declaresReceipts: [...handlers.values()].some((specs) => specs.some((h) => h.receipt)),
    blockHandlers,
    callHandlers,
    tracesCalls: callHandlers.size > 0 || blockHandlers.some((h) => h.filter === 'call'),
    fileHandler: null,
  };
}

/** What every mapping has: its apiVersion (0.0.5 or later), compiled wasm, ABIs by name and `entities`. */
async function loadMappingBase(
  raw: RawDataSource,
  where: string,
  dir: string,
  modules: Map<string, Promise<CompiledMapping>>,
): Promise<Pick<MappingSpec, 'apiVersion' | 'wasmFile' | 'module' | 'memoryLimits' | 'abis' | 'entities'>> {
  const mapping = raw.mapping;
  if (!mapping?.file || !mapping.apiVersion) throw new Error(`${where}: mapping file or apiVersion missing`);
  if (!versionAtLeast(mapping.apiVersion, '0.0.5'))
    throw new Error(`${where}: apiVersion ${mapping.apiVersion} is not supported (0.0.5 or later)`);
  if (!versionAtLeast(MAX_API_VERSION, mapping.apiVersion))
    throw new Error(
      `The maximum supported mapping API version of this indexer is ${MAX_API_VERSION}, but \`${mapping.apiVersion}\` was found`,
    );
  const named = mapping.abis ?? [];
  const abis = await Promise.all(named.map((a) => readAbi(path.resolve(dir, a.file))));
  const wasmFile = path.resolve(dir, mapping.file);
  const { module, memoryLimits } = await compileMapping(wasmFile, modules);
  return {
    apiVersion: mapping.apiVersion,
    wasmFile,
    module,
    memoryLimits,
    abis: new Map(named.map((a, i) => [a.name, abis[i]!])),
    entities: entityNames(where, mapping.entities),
  };
}

/** Compiles a mapping's wasm once however many data sources share the file. */
function compileMapping(
  wasmFile: string,
  modules: Map<string, Promise<CompiledMapping>>,
): Promise<CompiledMapping> {
  let compiled = modules.get(wasmFile);
  if (!compiled) {
    compiled = readFile(wasmFile).then(async (bytes) => {
      const { bytes: rewritten, limits } = importMemory(bytes);
      const metered = meterExecution(rewritten);
      return { module: await WebAssembly.compile(new Uint8Array(metered)), memoryLimits: limits };
    });
    modules.set(wasmFile, compiled);
  }
  return compiled;
}

function entityNames(where: string, raw: unknown): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || !raw.every((e) => typeof e === 'string'))
    throw new Error(`${where}: mapping.entities must be a list of entity type names`);
  return raw as string[];
}

/**
 * A `file/ipfs` template's mapping (graph-node's offchain data source): one `handler`, run with the
 * file's bytes, and the `entities` it may touch (graph-node accepts them from specVersion 0.0.7).
 */
async function loadFileMapping(
  raw: RawDataSource,
  dir: string,
  modules: Map<string, Promise<CompiledMapping>>,
): Promise<MappingSpec> {
  const name = raw.name ?? '(unnamed)';
  const handler = raw.mapping?.handler;
  if (!handler) throw new Error(`template ${name}: a file data source needs mapping.handler`);
  return {
    ...(await loadMappingBase(raw, `template ${name}`, dir, modules)),
    handlers: new Map(),
    declaresReceipts: false,
    blockHandlers: [],
    callHandlers: new Map(),
    tracesCalls: false,
    fileHandler: handler,
  };
}

/** A template: a contract template, or a file data source. */
async function loadTemplate(
  raw: RawDataSource,
  dir: string,
  modules: Map<string, Promise<CompiledMapping>>,
  specVersion: string,
): Promise<TemplateSpec> {
  const name = raw.name ?? '';
  if (raw.kind === 'file/ipfs' || raw.kind === 'file/arweave')
    return {
      kind: raw.kind,
      name,
      network: raw.network ?? '',
      mapping: await loadFileMapping(raw, dir, modules),
    };
  if (raw.kind?.startsWith('file/'))
    throw new Error(
      `template ${name}: unsupported offchain datasource kind: ${raw.kind}, expected one of: file/ipfs,file/arweave`,
    );
  return {
    kind: 'ethereum',
    name,
    network: raw.network ?? '',
    mapping: await loadMapping(raw, dir, modules, specVersion),
  };
}

/** A data source's `source.endBlock`: the last block it handles triggers of, inclusive, as in graph-node. */
function endBlock(raw: RawDataSource, specVersion: string): bigint | null {
  const end = raw.source?.endBlock;
  if (end === undefined || end === null) return null;
  if (!versionAtLeast(specVersion, '0.0.9'))
    throw new Error(
      `data source ${raw.name ?? ''}: defining \`endBlock\` in the manifest is not supported prior to 0.0.9 (this manifest has ${specVersion})`,
    );
  if (typeof end !== 'number' || !Number.isInteger(end) || end < 0)
    throw new Error(
      `data source ${raw.name ?? ''}: source.endBlock must be a block number, not ${JSON.stringify(end)}`,
    );
  return BigInt(end);
}

/** The blocks of history `indexerHints.prune` asks to keep: `never`, `auto` or a number of blocks. */
function historyBlocks(manifest: RawManifest, specVersion: string): number | 'auto' {
  if (manifest.indexerHints === undefined || manifest.indexerHints === null) return UNPRUNED_HISTORY_BLOCKS;
  if (!versionAtLeast(specVersion, '1.0.0'))
    throw new Error(`\`indexerHints\` are not supported prior to 1.0.0 (this manifest has ${specVersion})`);
  const prune = manifest.indexerHints.prune;
  if (prune === undefined || prune === 'never') return UNPRUNED_HISTORY_BLOCKS;
  if (prune === 'auto') return 'auto';
  const blocks = typeof prune === 'string' && /^\d+$/.test(prune) ? Number(prune) : prune;
  if (
    typeof blocks !== 'number' ||
    !Number.isInteger(blocks) ||
    blocks < 1 ||
    blocks > UNPRUNED_HISTORY_BLOCKS
  )
    throw new Error(
      `indexerHints.prune must be auto, never or a number of blocks from 1 to ${UNPRUNED_HISTORY_BLOCKS}, not ${JSON.stringify(prune)}`,
    );
  return blocks;
}

/** Puts a networks.json network's entries into the manifest's data sources, as `graph build --network` does. */
function applyNetwork(
  manifest: RawManifest,
  network: string,
  contracts: Record<string, NetworkContract>,
): void {
  // every data source still at the zero address is named at once, as the deploy script names them
  const undeployed: string[] = [];
  for (const raw of manifest.dataSources ?? []) {
    const entry = contracts[raw.name ?? ''];
    if (!entry) throw new Error(`network ${network} has no entry for data source ${raw.name ?? ''}`);
    if (!/^0x[0-9a-fA-F]{40}$/.test(entry.address))
      throw new Error(`network ${network}: ${raw.name ?? ''} address ${entry.address} is invalid`);
    if (/^0x0{40}$/.test(entry.address)) undeployed.push(raw.name ?? '');
    raw.network = network;
    raw.source = { ...raw.source, ...entry };
  }
  if (undeployed.length > 0)
    throw new Error(
      `network ${network}: ${undeployed.join(', ')} ${undeployed.length === 1 ? 'has' : 'have'} the zero address, which stands for a contract not deployed there: put the deployed addresses and start blocks in networks.json`,
    );
  for (const raw of manifest.templates ?? []) if (raw.network !== undefined) raw.network = network;
}

/** The names of the manifest's `features`: graph-node's SubgraphFeature, and the alias it reads as one. */
const FEATURE_NAMES = new Set([
  'nonFatalErrors',
  'grafting',
  'fullTextSearch',
  'aggregations',
  'bytesAsIds',
  'declaredEthCalls',
  'immutableEntities',
  'ipfsOnEthereumContracts',
  'nonDeterministicIpfs',
]);
const FEATURE_ALIASES: Readonly<Record<string, string>> = { nonDeterministicIpfs: 'ipfsOnEthereumContracts' };

/** The spec version each data source's handlers need (graph-node's min_spec_version), in its words. */
function checkHandlerSpecVersions(manifest: RawManifest, specVersion: string): void {
  for (const raw of manifest.dataSources ?? []) {
    const filtered = (raw.mapping?.blockHandlers ?? []).some(
      (h) => h.filter?.kind === 'once' || h.filter?.kind === 'polling',
    );
    const topics = (raw.mapping?.eventHandlers ?? []).some(
      (h) => h.topic1 !== undefined || h.topic2 !== undefined || h.topic3 !== undefined,
    );
    const needed = topics ? '1.2.0' : filtered ? '0.0.8' : null;
    if (needed !== null && !versionAtLeast(specVersion, needed))
      throw new Error(
        `Subgraph uses spec version ${specVersion}, but data source \`${raw.name ?? ''}\` requires at least version ${needed}`,
      );
  }
}

/**
 * graph-node's checks of a manifest as a whole, in its words: data sources and their receipts, one
 * mapping apiVersion, one network, and the features' names.
 */
function checkManifest(manifest: RawManifest): void {
  const dataSources = manifest.dataSources ?? [];
  if (dataSources.length === 0) throw new Error('subgraph has no data sources');
  for (const raw of dataSources) {
    const receipts = (raw.mapping?.eventHandlers ?? []).some((h) => h.receipt === true);
    if (receipts && !versionAtLeast(raw.mapping?.apiVersion ?? '0.0.0', '0.0.7'))
      throw new Error(
        `data source ${raw.name ?? ''} is invalid: data source has event handlers that require transaction receipts, but this is only supported for apiVersion >= 0.0.7`,
      );
  }
  const apiVersions = [...dataSources, ...(manifest.templates ?? [])].map((raw) => raw.mapping?.apiVersion);
  const distinct = [...new Set(apiVersions.filter((v): v is string => v !== undefined))];
  if (distinct.length > 1)
    throw new Error(
      `subgraph must use a single apiVersion across its data sources. Found: ${distinct.join(', ')}`,
    );
  if (new Set(dataSources.map((raw) => raw.network).filter((n) => n !== undefined)).size > 1)
    throw new Error('subgraph cannot index data from different Ethereum networks');
  const features = manifest.features ?? [];
  if (!Array.isArray(features)) throw new Error('features must be a list of feature names');
  for (const feature of features)
    if (!FEATURE_NAMES.has(String(feature)))
      throw new Error(
        `features: unknown variant \`${String(feature)}\`, expected one of ${[...FEATURE_NAMES].map((f) => `\`${f}\``).join(', ')}`,
      );
}

/** The host functions whose imports make a mapping use graph-node's `ipfsOnEthereumContracts`. */
const IPFS_ON_ETHEREUM_CONTRACTS_FUNCTIONS = new Set(['ipfs.cat', 'ipfs.getBlock', 'ipfs.map']);

/**
 * graph-node's validate_subgraph_features (spec version 0.0.4 on): a feature the subgraph uses must
 * be declared. Of those it detects, only ipfsOnEthereumContracts reaches this point: grafting and
 * fulltext search are refused on their own.
 */
function checkFeaturesDeclared(
  specVersion: string,
  features: ReadonlySet<string>,
  mappings: readonly MappingSpec[],
): void {
  if (!versionAtLeast(specVersion, '0.0.4')) return;
  if (features.has('ipfsOnEthereumContracts')) return;
  const usesIpfs = mappings.some((m) =>
    WebAssembly.Module.imports(m.module).some((i) => IPFS_ON_ETHEREUM_CONTRACTS_FUNCTIONS.has(i.name)),
  );
  if (usesIpfs)
    throw new Error(
      'The feature `ipfsOnEthereumContracts` is used by the subgraph but it is not declared in the manifest.',
    );
}

/** Reads a `graph build` output directory into a runnable subgraph. */
export async function loadSubgraph(options: LoadSubgraphOptions): Promise<Subgraph> {
  const buildDir = path.resolve(options.buildDir);
  const manifestPath = path.resolve(options.manifestPath ?? path.join(buildDir, 'subgraph.yaml'));
  const dir = path.dirname(manifestPath);
  const manifestText = await readFile(manifestPath, 'utf8');
  const manifest = parseYaml(manifestText) as RawManifest;
  // contexts are read again with integers as bigint: an Int8 needs all 64 bits
  const exactDataSources = (manifest.dataSources ?? []).some((raw) => raw.context !== undefined)
    ? (parseYaml(manifestText, { intAsBigInt: true }) as RawManifest).dataSources
    : undefined;
  if (options.network) applyNetwork(manifest, options.network.name, options.network.contracts);
  const specVersion = String(manifest.specVersion ?? '0.0.4');
  if (!versionAtLeast(specVersion, MIN_SPEC_VERSION) || !versionAtLeast(LATEST_SPEC_VERSION, specVersion))
    throw new Error(
      `The embedded indexer, as graph-node, only supports manifest spec versions between ${MIN_SPEC_VERSION} and ${LATEST_SPEC_VERSION}, but this subgraph uses \`${specVersion}\``,
    );
  if (manifest.graft) {
    // graph-node copies the base deployment's entities up to the graft block; there is no such
    // deployment here, and indexing from the start blocks would not give what graph-node gives
    throw new Error(
      `graft (base ${String(manifest.graft.base)}, block ${String(manifest.graft.block)}) is not supported: the embedded indexer holds no copy of the base deployment's data; remove \`graft\` to index from the data sources' start blocks`,
    );
  }
  const history = historyBlocks(manifest, specVersion);
  const fileTemplate = (manifest.templates ?? []).find((t) => t.kind?.startsWith('file/'));
  if (fileTemplate && !versionAtLeast(specVersion, '0.0.7'))
    throw new Error(
      `template ${fileTemplate.name ?? ''}: file data sources (kind ${fileTemplate.kind}) are only supported from specVersion 0.0.7 (this manifest has ${specVersion})`,
    );
  // graph-node's order: the versions the manifest's keys need, then those its handlers need, then
  // the data sources one by one, then the manifest as a whole
  const ends = (manifest.dataSources ?? []).map((raw) => endBlock(raw, specVersion));
  checkHandlerSpecVersions(manifest, specVersion);
  const modules = new Map<string, Promise<CompiledMapping>>();
  const dataSources: DataSourceSpec[] = [];
  for (const [index, raw] of (manifest.dataSources ?? []).entries()) {
    if (raw.kind?.startsWith('file/'))
      throw new Error(
        `data source ${raw.name ?? ''}: file data sources (kind ${raw.kind}) can only be templates`,
      );
    if ((raw.mapping?.blockHandlers?.length ?? 0) > 0 && !raw.source?.address)
      throw new Error(`data source ${raw.name ?? ''}: block handlers need a source address`);
    if ((raw.mapping?.callHandlers?.length ?? 0) > 0 && !raw.source?.address)
      throw new Error(`data source ${raw.name ?? ''}: call handlers need a source address`);
    dataSources.push({
      name: raw.name ?? '',
      network: raw.network ?? '',
      address: raw.source?.address ? (raw.source.address.toLowerCase() as Hex) : null,
      startBlock: BigInt(raw.source?.startBlock ?? 0),
      endBlock: ends[index]!,
      context: contextFromManifest(exactDataSources?.[index]?.context, raw.name ?? ''),
      mapping: await loadMapping(raw, dir, modules, specVersion),
    });
  }
  const templates = new Map<string, TemplateSpec>();
  for (const raw of manifest.templates ?? []) {
    templates.set(raw.name ?? '', await loadTemplate(raw, dir, modules, specVersion));
  }
  const network =
    dataSources[0]?.network ?? [...templates.values()].find((t) => t.kind === 'ethereum')?.network ?? '';
  const mappings = [...dataSources, ...templates.values()].map((d) => d.mapping);
  checkManifest(manifest);
  const features = new Set(
    ((manifest.features as unknown[] | undefined) ?? []).map(String).map((f) => FEATURE_ALIASES[f] ?? f),
  );
  checkFeaturesDeclared(specVersion, features, mappings);
  const lastBlock =
    templates.size === 0 && ends.length > 0 && ends.every((e) => e !== null)
      ? ends.reduce((a, b) => (b! > a! ? b : a))
      : null;
  return {
    buildDir,
    network,
    schemaFile: path.resolve(dir, manifest.schema?.file ?? 'schema.graphql'),
    dataSources,
    templates,
    declaresCalls: mappings.some((m) =>
      [...m.handlers.values()].some((specs) => specs.some((h) => h.calls.length > 0)),
    ),
    fileEntityTypes: new Set(
      [...templates.values()].filter((t) => t.kind !== 'ethereum').flatMap((t) => t.mapping.entities),
    ),
    specVersion,
    features,
    declaredKinds: new Set(
      [...(manifest.dataSources ?? []), ...(manifest.templates ?? [])].map((raw) => raw.kind ?? ''),
    ),
    endBlock: lastBlock,
    historyBlocks: history,
  };
}
