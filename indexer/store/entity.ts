// The value model shared by the wasm host (which builds entities from AssemblyScript
// memory) and the SQLite store (which persists them): graph-node's `Value` enum in TypeScript.

export type StoreValue =
  | { kind: 'String'; value: string }
  | { kind: 'Int'; value: number }
  | { kind: 'Int8'; value: bigint }
  | { kind: 'BigInt'; value: bigint }
  | { kind: 'BigDecimal'; value: string }
  | { kind: 'Bool'; value: boolean }
  | { kind: 'Bytes'; value: Uint8Array }
  | { kind: 'Timestamp'; value: bigint }
  | { kind: 'List'; value: StoreValue[] }
  | { kind: 'Null' };

/** An entity's fields by name; `id` included. */
export type Entity = Map<string, StoreValue>;

/** The store as one block's handlers see it: reads see the writes made earlier in the same block. */
export interface EntityStoreTx {
  get(entityType: string, id: string): Entity | null;
  /** Whether the entity exists as the block sees it; cheaper than get() when its fields are not needed. */
  has(entityType: string, id: string): boolean;
  /** Entities of `entityType` whose reference `field` holds `id`, as the block sees them (store.loadRelated). */
  loadRelated(entityType: string, field: string, id: string): Entity[];
  /**
   * The causality region, other than the writer's, holding a current version of the entity (chain
   * handlers write region 0, each file data source its own); null if none. An id belongs to one region.
   */
  otherRegionHolding(entityType: string, id: string): number | null;
  set(entityType: string, id: string, entity: Entity): void;
  remove(entityType: string, id: string): void;
  /** Starts recording set and remove, so that undo() can take them back (a failed handler's, under nonFatalErrors). */
  mark(): void;
  /** Takes back the sets and removes since mark(). */
  undo(): void;
}
