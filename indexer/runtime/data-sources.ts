// The data sources a subgraph runs at a given block: the manifest's static ones and the template
// instances created by handlers (dataSource.create), in creation order. The indexer persists the
// dynamic ones and rebuilds this set from them on restart or after a reorg.
import type { Hex } from 'viem';
import type { Entity } from '../store/entity.ts';
import type { BlockHandlerSpec, MappingSpec, Subgraph } from './manifest.ts';

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
  context: Entity | null;
  mapping: MappingSpec;
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
  if (number < ds.startBlock) return { start, end };
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

export class DataSourceSet {
  readonly dynamic: DynamicDataSource[] = [];
  private readonly active: ActiveDataSource[];

  constructor(
    private readonly subgraph: Subgraph,
    dynamic: readonly DynamicDataSource[] = [],
  ) {
    this.active = subgraph.dataSources.map((ds) => ({
      name: ds.name,
      address: ds.address,
      startBlock: ds.startBlock,
      context: null,
      mapping: ds.mapping,
    }));
    for (const d of dynamic) this.add(d);
  }

  /** Adds a template instance; returns false (and adds nothing) for an identical existing one. */
  add(ds: DynamicDataSource): boolean {
    const template = this.subgraph.templates.get(ds.template);
    if (!template) throw new Error(`unknown template ${ds.template}`);
    const address = ds.address.toLowerCase() as Hex;
    if (
      this.dynamic.some(
        (d) => d.template === ds.template && d.address === address && sameContext(d.context, ds.context),
      )
    ) {
      return false;
    }
    const normalized = { ...ds, address };
    this.dynamic.push(normalized);
    this.active.push({
      name: template.name,
      address,
      startBlock: ds.createdAtBlock,
      context: ds.context,
      mapping: template.mapping,
    });
    return true;
  }

  /** Data sources in processing order: static in manifest order, then dynamic in creation order. */
  all(): readonly ActiveDataSource[] {
    return this.active;
  }

  /** Whether some data source has a block handler that fires at block `number`. */
  hasBlockTriggers(number: bigint): boolean {
    for (const ds of this.active) {
      if (ds.mapping.blockHandlers.length === 0) continue;
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
    const address = log.address.toLowerCase();
    return this.active.some(
      (ds) =>
        (ds.address === null || ds.address === address) &&
        (log.blockNumber ?? 0n) >= ds.startBlock &&
        (ds.mapping.handlers.get(topic0)?.some((h) => h.receipt) ?? false),
    );
  }

  /** Whether some data source has an event handler that declares `receipt: true`. */
  declaresReceipts(): boolean {
    return this.active.some((ds) => ds.mapping.declaresReceipts);
  }

  /** Whether a data source has a block handler that fires on every block. */
  hasEveryBlockHandler(): boolean {
    return this.active.some((ds) => ds.mapping.blockHandlers.some((h) => h.filter === 'every'));
  }

  /**
   * What an eth_getLogs filter must cover: the addresses of the data sources (`wildcard` when one
   * has no address and so matches every contract) and the topic0 of every handler they have.
   */
  logFilter(): { addresses: Hex[]; topics: Hex[]; wildcard: boolean } {
    const addresses = new Set<Hex>();
    const topics = new Set<Hex>();
    let wildcard = false;
    for (const ds of this.active) {
      if (ds.address === null) wildcard = true;
      else addresses.add(ds.address);
      for (const t of ds.mapping.handlers.keys()) topics.add(t);
    }
    return { addresses: [...addresses], topics: [...topics], wildcard };
  }
}
