// The data sources a subgraph runs at a given block: the manifest's static ones and the template
// instances created by handlers (dataSource.create), in creation order. The indexer persists the
// dynamic ones and rebuilds this set from them on restart or after a reorg. A factory subgraph (a
// registry creating one instance per fund, a DEX one per pair) can hold hundreds of thousands, so
// the set is indexed: a log reaches the data sources of its address without a pass over the
// others, an instance is added or dropped in constant time, and a rollback drops the instances
// added after a count instead of rebuilding the set from a copy. Past a threshold of data sources
// (graph-node's static filters) eth_getLogs stops naming the instances' addresses: the templates'
// events are asked for from any address, and the logs of contracts that are not instances reach no
// data source.
import type { Hex } from 'viem';
import type { Entity } from '../store/entity.ts';
import type { BlockHandlerSpec, EventHandlerSpec, MappingSpec, Subgraph } from './manifest.ts';

/** A template instance created by a handler. */
export interface DynamicDataSource {
  template: string;
  /** lowercase 0x address */
  address: Hex;
  context: Entity | null;
  createdAtBlock: bigint;
}

/** One data source as the block processor runs it. */
export interface ActiveDataSource {
  name: string;
  address: Hex | null;
  startBlock: bigint;
  /** the last block it handles (a static data source's `endBlock`), or null */
  endBlock: bigint | null;
  context: Entity | null;
  mapping: MappingSpec;
  /** its place in processing order: static in manifest order, then dynamic in creation order */
  seq: number;
  /** a file data source's content path and causality region (see file-data-sources.ts) */
  file?: { source: string; region: number };
}

/** Whether `ds` handles the triggers of block `number`: from its start block to its end block, both included. */
export function activeAt(ds: ActiveDataSource, number: bigint): boolean {
  return number >= ds.startBlock && (ds.endBlock === null || number <= ds.endBlock);
}

/** Data sources as the block processor dispatches triggers to them. */
export interface DataSourceView {
  /** those a log from `address` (lowercase) may trigger, in processing order */
  forAddress(address: string): readonly ActiveDataSource[];
  /** those with block handlers, in processing order */
  readonly withBlockHandlers: readonly ActiveDataSource[];
}

/** A DataSourceView over data sources added in processing order; the last added can be dropped. */
class DataSourceIndex implements DataSourceView {
  private readonly byAddress = new Map<string, ActiveDataSource[]>();
  /** data sources without an address, which every contract's logs reach */
  readonly anyAddress: ActiveDataSource[] = [];
  readonly withBlockHandlers: ActiveDataSource[] = [];

  add(ds: ActiveDataSource): void {
    if (ds.address === null) this.anyAddress.push(ds);
    else {
      const list = this.byAddress.get(ds.address);
      if (list) list.push(ds);
      else this.byAddress.set(ds.address, [ds]);
    }
    if (ds.mapping.blockHandlers.length > 0) this.withBlockHandlers.push(ds);
  }

  /** Drops `ds`, which must be the data source added last. */
  dropLast(ds: ActiveDataSource): void {
    if (ds.address === null) this.anyAddress.pop();
    else {
      const list = this.byAddress.get(ds.address)!;
      list.pop();
      if (list.length === 0) this.byAddress.delete(ds.address);
    }
    if (ds.mapping.blockHandlers.length > 0) this.withBlockHandlers.pop();
  }

  forAddress(address: string): readonly ActiveDataSource[] {
    const own = this.byAddress.get(address);
    if (this.anyAddress.length === 0) return own ?? [];
    if (!own) return this.anyAddress;
    return [...this.anyAddress, ...own].sort((a, b) => a.seq - b.seq);
  }
}

/**
 * The block handlers of `ds` that fire at block `number`, as graph-node's block triggers: `start`
 * (a `once` handler at the start block) runs before the block's logs, `end` (an unfiltered handler,
 * or a `polling` one every `every` blocks from the start block) after them.
 */
export function blockHandlersAt(
  ds: ActiveDataSource,
  number: bigint,
): { start: BlockHandlerSpec | null; end: BlockHandlerSpec | null } {
  let start: BlockHandlerSpec | null = null;
  let end: BlockHandlerSpec | null = null;
  if (!activeAt(ds, number)) return { start, end };
  for (const h of ds.mapping.blockHandlers) {
    if (h.filter === 'once' && number === ds.startBlock) start ??= h;
    else if (h.filter === 'every') end ??= h;
    else if (h.filter === 'polling' && (number - ds.startBlock) % BigInt(h.every) === 0n) end ??= h;
  }
  return { start, end };
}

function sameContext(a: Entity | null, b: Entity | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || JSON.stringify(v, jsonBigint) !== JSON.stringify(w, jsonBigint)) return false;
  }
  return true;
}

function jsonBigint(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  return value;
}

/**
 * What eth_getLogs must cover: every handler's topic0 from the data sources' addresses, and, from
 * any address, the topics of the handlers of data sources without an address (graph-node's
 * wildcard events and events with topic filters).
 */
export interface DataSourceLogFilter {
  /** lowercase, each once, in the order data sources first named them */
  readonly addresses: readonly Hex[];
  readonly topics: readonly Hex[];
  /**
   * asked for from any address: the topic0s of the unfiltered handlers of data sources without an
   * address, together (`[[topic0, ...]]`), and each filtered handler's topics (`[[topic0], topic1s, ...]`)
   */
  readonly anyAddressTopics: readonly (readonly (readonly Hex[] | null)[])[];
}

/** A handler's eth_getLogs topics: its topic0, then its topic filters (trailing ones that allow any dropped). */
function handlerTopics(spec: EventHandlerSpec): (readonly Hex[] | null)[] {
  const topics: (readonly Hex[] | null)[] = [
    [spec.topic0],
    ...spec.topicFilters.map((f) => (f ? [...f] : null)),
  ];
  while (topics.at(-1) === null) topics.pop();
  return topics;
}

const instanceKey = (template: string, address: Hex) => `${template}\0${address}`;

/** graph-node's GRAPH_STATIC_FILTERS_THRESHOLD */
export const STATIC_FILTERS_ABOVE = 10_000;

interface DataSourceSetOptions {
  /**
   * past this many data sources (static ones and template instances), the log filter names only
   * the static data sources' addresses and asks for the templates' events from any address, as
   * graph-node does past GRAPH_STATIC_FILTERS_THRESHOLD (default 10,000): a range's requests no
   * longer grow with the instances, and the filter stays the same as instances come
   */
  staticFiltersAbove?: number;
}

export class DataSourceSet implements DataSourceView {
  readonly dynamic: DynamicDataSource[] = [];
  private readonly active: ActiveDataSource[] = [];
  private readonly index = new DataSourceIndex();
  /** the contexts of the instances of each (template, address), to refuse an identical one */
  private readonly instances = new Map<string, (Entity | null)[]>();
  /** how many data sources name each address, and have each topic's handler */
  private readonly addressUses = new Map<Hex, number>();
  private readonly topicUses = new Map<Hex, number>();
  /** how many data sources that handle calls name each address */
  private readonly callAddressUses = new Map<Hex, number>();
  private receiptDeclarers = 0;
  private everyBlockHandlers = 0;
  /**
   * what is asked for from any address: the unfiltered handlers' topic0s and the filtered handlers'
   * topics of the data sources without an address (static ones only: fixed at construction)
   */
  private readonly anyAddressTopic0s = new Set<Hex>();
  private readonly anyAddressFiltered: (readonly Hex[] | null)[][] = [];
  /** the filters as last worked out, until the set changes */
  private filter: DataSourceLogFilter | null = null;
  private readonly staticFiltersAbove: number;
  /** the filter past staticFiltersAbove: it names no instance, so only data sources ending change it */
  private staticFilter: DataSourceLogFilter | null = null;
  private calls: readonly Hex[] | null = null;
  /** the static data sources with an address and an end block, by end block (see filterFrom) */
  private readonly ending: ActiveDataSource[];
  /** how many of `ending` the filters leave out */
  private ended = 0;

  constructor(
    private readonly subgraph: Subgraph,
    dynamic: readonly DynamicDataSource[] = [],
    options: DataSourceSetOptions = {},
  ) {
    this.staticFiltersAbove = options.staticFiltersAbove ?? STATIC_FILTERS_ABOVE;
    for (const ds of subgraph.dataSources) {
      this.activate({
        name: ds.name,
        address: ds.address,
        startBlock: ds.startBlock,
        endBlock: ds.endBlock,
        context: ds.context,
        mapping: ds.mapping,
        seq: this.active.length,
      });
    }
    this.ending = this.active
      .filter((ds) => ds.address !== null && ds.endBlock !== null)
      .sort((a, b) => (a.endBlock! < b.endBlock! ? -1 : a.endBlock! > b.endBlock! ? 1 : 0));
    for (const d of dynamic) this.add(d);
  }

  /**
   * Makes the filters (logFilter, callAddresses) leave out the static data sources that end before
   * block `number`, and only those, as graph-node rebuilds its filter without the data sources past
   * their end block: their contracts' logs are no longer fetched. They stay in the set, where
   * activeAt keeps them from later triggers. Called with the block the next range starts at, which
   * a rollback or a reorg may move back.
   */
  filterFrom(number: bigint): void {
    const before = this.ended;
    while (this.ended < this.ending.length && this.ending[this.ended]!.endBlock! < number)
      this.count(this.ending[this.ended++]!, -1);
    while (this.ended > 0 && this.ending[this.ended - 1]!.endBlock! >= number)
      this.count(this.ending[--this.ended]!, 1);
    if (this.ended !== before) this.staticFilter = null;
  }

  /** Adds a template instance; returns false (and adds nothing) for an identical existing one. */
  add(ds: DynamicDataSource): boolean {
    const template = this.subgraph.templates.get(ds.template);
    if (!template) throw new Error(`unknown template ${ds.template}`);
    const address = ds.address.toLowerCase() as Hex;
    const key = instanceKey(ds.template, address);
    const contexts = this.instances.get(key);
    if (contexts?.some((c) => sameContext(c, ds.context))) return false;
    if (contexts) contexts.push(ds.context);
    else this.instances.set(key, [ds.context]);
    this.dynamic.push({ ...ds, address });
    this.activate({
      name: template.name,
      address,
      startBlock: ds.createdAtBlock,
      endBlock: null,
      context: ds.context,
      mapping: template.mapping,
      seq: this.active.length,
    });
    return true;
  }

  /** How many data sources the set holds, static ones included: what truncate() returns to. */
  get size(): number {
    return this.active.length;
  }

  /** Drops the template instances added after the set held `size` data sources. */
  truncate(size: number): void {
    if (size < this.subgraph.dataSources.length) throw new Error('truncate() below the static data sources');
    while (this.active.length > size) {
      const ds = this.active.pop()!;
      const d = this.dynamic.pop()!;
      const key = instanceKey(d.template, d.address);
      const contexts = this.instances.get(key)!;
      contexts.pop();
      if (contexts.length === 0) this.instances.delete(key);
      this.index.dropLast(ds);
      this.count(ds, -1);
    }
  }

  /** The data sources added after the set held `size`, as a view of their own. */
  since(size: number): DataSourceView {
    const fresh = new DataSourceIndex();
    for (const ds of this.active.slice(size)) fresh.add(ds);
    return fresh;
  }

  forAddress(address: string): readonly ActiveDataSource[] {
    return this.index.forAddress(address);
  }

  get withBlockHandlers(): readonly ActiveDataSource[] {
    return this.index.withBlockHandlers;
  }

  private activate(ds: ActiveDataSource): void {
    this.active.push(ds);
    this.index.add(ds);
    this.count(ds, 1);
  }

  /** Keeps the counts behind the filter and the flags as `ds` comes (+1) or goes (-1). */
  private count(ds: ActiveDataSource, step: 1 | -1): void {
    const bump = <K>(uses: Map<K, number>, key: K) => {
      const n = (uses.get(key) ?? 0) + step;
      if (n === 0) uses.delete(key);
      else uses.set(key, n);
    };
    if (ds.address !== null) bump(this.addressUses, ds.address);
    if (ds.address !== null && ds.mapping.tracesCalls) bump(this.callAddressUses, ds.address);
    if (ds.address === null) {
      // only static data sources lack an address, and they are never dropped
      for (const spec of [...ds.mapping.handlers.values()].flat()) {
        if (spec.topicFilters.length > 0) this.anyAddressFiltered.push(handlerTopics(spec));
        else this.anyAddressTopic0s.add(spec.topic0);
      }
    } else {
      for (const topic of ds.mapping.handlers.keys()) bump(this.topicUses, topic);
    }
    if (ds.mapping.declaresReceipts) this.receiptDeclarers += step;
    if (ds.mapping.blockHandlers.some((h) => h.filter === 'every')) this.everyBlockHandlers += step;
    this.filter = null;
    // kept across other changes: the follower fetches a range again when this array changes
    if (ds.mapping.tracesCalls) this.calls = null;
  }

  /** Whether some data source has a block handler that fires at block `number`. */
  hasBlockTriggers(number: bigint): boolean {
    for (const ds of this.index.withBlockHandlers) {
      const { start, end } = blockHandlersAt(ds, number);
      if (start || end) return true;
    }
    return false;
  }

  /**
   * Whether a handler that declares `receipt: true` may run for `log`, so that its transaction's
   * receipt must be fetched (the handler runs only if the log also decodes as its event).
   */
  needsReceipt(log: { address: Hex; topics: readonly Hex[]; blockNumber: bigint | null }): boolean {
    const topic0 = log.topics[0];
    if (!topic0) return false;
    return this.forAddress(log.address.toLowerCase()).some(
      (ds) =>
        activeAt(ds, log.blockNumber ?? 0n) &&
        (ds.mapping.handlers.get(topic0)?.some((h) => h.receipt) ?? false),
    );
  }

  /** Whether some data source has an event handler that declares `receipt: true`. */
  declaresReceipts(): boolean {
    return this.receiptDeclarers > 0;
  }

  /** Whether a data source has a block handler that fires on every block. */
  hasEveryBlockHandler(): boolean {
    return this.everyBlockHandlers > 0;
  }

  /**
   * The (lowercase) addresses whose calls data sources handle (call handlers, `call` block
   * handlers): what trace_filter must cover; the same array until the set changes.
   */
  callAddresses(): readonly Hex[] {
    this.calls ??= [...this.callAddressUses.keys()];
    return this.calls;
  }

  /** Whether the set is past the static filters threshold: logs then come from any contract. */
  usesStaticFilters(): boolean {
    return this.active.length > this.staticFiltersAbove;
  }

  /**
   * What an eth_getLogs filter must cover; the same object until the set changes, or, past the
   * static filters threshold, for as long as the set stays past it (and no data source ends).
   */
  logFilter(): DataSourceLogFilter {
    if (this.usesStaticFilters()) return (this.staticFilter ??= this.staticLogFilter());
    this.filter ??= {
      addresses: [...this.addressUses.keys()],
      topics: [...this.topicUses.keys()],
      anyAddressTopics: [
        ...(this.anyAddressTopic0s.size > 0 ? [[[...this.anyAddressTopic0s]]] : []),
        ...this.anyAddressFiltered,
      ],
    };
    return this.filter;
  }

  /** The static data sources' addresses and topics, and every contract template's events from any address. */
  private staticLogFilter(): DataSourceLogFilter {
    const addresses = new Set<Hex>();
    const topics = new Set<Hex>();
    const ended = new Set(this.ending.slice(0, this.ended));
    for (const ds of this.active.slice(0, this.subgraph.dataSources.length)) {
      if (ds.address === null || ended.has(ds)) continue;
      addresses.add(ds.address);
      for (const topic of ds.mapping.handlers.keys()) topics.add(topic);
    }
    const anyAddress = new Set(this.anyAddressTopic0s);
    for (const template of this.subgraph.templates.values())
      for (const topic of template.mapping.handlers.keys()) anyAddress.add(topic);
    return {
      addresses: [...addresses],
      topics: [...topics],
      anyAddressTopics: [...(anyAddress.size > 0 ? [[[...anyAddress]]] : []), ...this.anyAddressFiltered],
    };
  }
}
