// What host functions see while a handler runs: the instance's memory, the schema, the store
// transaction of the current block, the data source that fired, the chain as of that block, and the
// per-block bookkeeping (entities written in this block, data sources created by handlers).
import type { Hex } from 'viem';
import type { Entity, EntityStoreTx } from '../store/entity.ts';
import { MapJournal } from '../store/map-journal.ts';
import type { SubgraphSchema } from '../subgraph-schema.ts';
import type { AscHeap } from './asc-memory.ts';
import type { ActiveDataSource, DynamicDataSource } from './data-sources.ts';
import type { Subgraph } from './manifest.ts';

export type LogLevel = 'critical' | 'error' | 'warning' | 'info' | 'debug';

/** Receives mapping log lines (log.info etc.); the indexer decides where they go. */
export type MappingLogger = (level: LogLevel, message: string, dataSource: string) => void;

/** A file data source a handler created: its template, canonical content path and context. */
export interface CreatedFile {
  template: string;
  source: string;
  context: Entity | null;
}

/** The state of one block being processed. */
export class BlockState {
  /**
   * `type\u0000id` of the entities written during this block: null once removed, else the fields the
   * block's sets gave it since the block began or since its last removal, each set's merged over the
   * one before (graph-node's accumulated entity op, all that store.get_in_block sees: not the stored
   * fields a set left alone)
   */
  readonly writes = new Map<string, Entity | null>();
  /**
   * `type\u0000id` of immutable entities an earlier block stored, as far as this block learnt it (a
   * store.get found one it had not written, or a store.set looked one up): store.set compares with
   * them even when `deferImmutableChecks` holds.
   */
  readonly earlierImmutables = new Set<string>();
  readonly created: DynamicDataSource[] = [];
  readonly createdFiles: CreatedFile[] = [];
  /** the sequence number the next generated entity id takes (see nextIdSequence) */
  private idSequence = 0;

  constructor(
    readonly number: bigint,
    /** the block's hash: chain reads are made at it */
    readonly hash: Hex,
    readonly tx: EntityStoreTx,
    /**
     * When true, store.set of a new immutable entity does not look up whether an earlier block
     * inserted it: the store's unique id index refuses such an insert when the block is written,
     * and the caller then runs the block again with this false to fail it with graph-node's error
     * (graph-node likewise leaves that case to a database constraint).
     */
    readonly deferImmutableChecks = false,
  ) {}

  /** set by enterHandler(): what discardHandler() puts back */
  private handlerMark: { created: number; createdFiles: number; writes: MapJournal } | null = null;

  /**
   * The next number of the block's sequence of generated ids (`store.set(type, "auto", …)`), shared
   * by all its handlers and entity types and not taken back with a discarded handler, as graph-node's.
   */
  nextIdSequence(): number {
    return this.idSequence++;
  }

  /** Whether the block's latest write of the entity of `key` (see `writes`) set it. */
  wasSet(key: string): boolean {
    const fields = this.writes.get(key);
    return fields !== undefined && fields !== null;
  }

  /** Records a store.set of `fields` (a null value unsets one) to the entity of `key` (see `writes`). */
  noteSet(key: string, fields: Entity): void {
    const before = this.writes.get(key);
    this.noteWrite(key, new Map([...(before ?? []), ...fields]));
  }

  /** Records a store.remove of the entity of `key` (see `writes`). */
  noteRemove(key: string): void {
    this.noteWrite(key, null);
  }

  private noteWrite(key: string, fields: Entity | null): void {
    this.handlerMark?.writes.record(this.writes, key);
    this.writes.set(key, fields);
  }

  /** Marks the start of a handler whose changes may have to be discarded (nonFatalErrors). */
  enterHandler(): void {
    this.tx.mark();
    this.handlerMark = {
      created: this.created.length,
      createdFiles: this.createdFiles.length,
      writes: new MapJournal(),
    };
  }

  /** Discards what the handler since enterHandler() did: its writes, the data sources it created. */
  discardHandler(): void {
    const mark = this.handlerMark;
    if (!mark) throw new Error('discardHandler() without enterHandler()');
    this.tx.undo();
    this.created.length = mark.created;
    this.createdFiles.length = mark.createdFiles;
    mark.writes.undo();
    this.handlerMark = null;
  }
}

/**
 * Contract state at a block, read synchronously (a host function cannot wait for a promise). The
 * indexer supplies one over JSON-RPC (follower/chain-reader.ts). A failure to get an answer from the
 * node is a ChainAccessError; a call the node says reverted is not a failure.
 */
export interface ChainReader {
  /** eth_call's return data at the block, or null when the call reverted */
  call(to: Hex, data: Hex, blockHash: Hex): Hex | null;
  balance(address: Hex, blockHash: Hex): bigint;
  code(address: Hex, blockHash: Hex): Hex;
  /**
   * Makes the eth_calls at the block all at once (a block's declared calls), so that call() then
   * answers each without a round trip; their answers in order, null where the call reverted.
   * `known` holds answers already at hand (by callKey), which are kept rather than asked for.
   */
  prefetchCalls(
    calls: readonly { to: Hex; data: Hex }[],
    blockHash: Hex,
    known?: ReadonlyMap<string, Hex | null>,
  ): (Hex | null)[];
}

/**
 * The node did not answer a chain read (unreachable, timed out, an error other than a revert). Not
 * the mapping's fault and not deterministic, so it must not fail the subgraph: the block processor
 * rethrows it as it is and the follower runs the range again later, as graph-node retries a block.
 */
export class ChainAccessError extends Error {}

/** Shared by every instance of a block processor. */
export interface RuntimeEnv {
  subgraph: Subgraph;
  schema: SubgraphSchema;
  logger: MappingLogger;
  /** null when the runtime was given no chain: chain reads then fail the handler */
  chain: ChainReader | null;
  block: BlockState | null;
  dataSource: ActiveDataSource | null;
}

/** One wasm instance's view: its heap plus the shared runtime state. */
export class HostEnv {
  heap!: AscHeap;

  constructor(readonly runtime: RuntimeEnv) {}

  get block(): BlockState {
    const b = this.runtime.block;
    if (!b) throw new Error('host function called outside of a handler');
    return b;
  }

  get dataSource(): ActiveDataSource {
    const ds = this.runtime.dataSource;
    if (!ds) throw new Error('host function called outside of a handler');
    return ds;
  }
}

/**
 * A failure of the entity store itself (I/O, a closed database) met inside a host function. It is
 * not the mapping's fault and not deterministic, so it must not fail the subgraph: the block
 * processor rethrows the original error instead of turning it into a HandlerError.
 */
export class StoreAccessError extends Error {}

/** A host function as linked into the module (pointers and numbers in, pointer or number out). */
export type HostFunction = (...args: never[]) => number | bigint | void;
export type HostFunctions = Record<string, (env: HostEnv) => HostFunction>;
