// One block's (or one file data source handler's) view of the store, EntityStoreTx: the runtime's
// hot path, where every handler's get, set and remove lands. Apart from the store class because it
// holds no SQL: it buffers writes in memory, answers reads from them first, and hands the store the
// net changes when flushed.
import type { Entity, EntityStoreTx } from './entity.ts';
import { HEX_BYTES_FORM } from './layout.ts';
import { MapJournal } from './map-journal.ts';
import { relatedEntities } from './related-entities.ts';
import type { IndexerStore } from './sqlite-store.ts';

/**
 * Lowercase 0x hex of a Bytes id. The store's rule, layout.ts hexToBytes's, checked here by hand
 * rather than by calling it: every get and set passes here, and the key is a string, so decoding
 * the id to bytes would allocate a Buffer only to throw it away. (What a mapping may pass is
 * laxer and is made canonical before it gets here: host-store.ts bytesIdKey.)
 */
function normalizeHex(id: string): string {
  let valid = id.length % 2 === 0 && id.charCodeAt(0) === 48 && id.charCodeAt(1) === 120; // "0x"
  for (let i = 2; valid && i < id.length; i++) {
    const c = id.charCodeAt(i);
    const lower = c | 0x20; // ASCII lowercase, for A-F only: it would also turn 0x10-0x19 into digits
    valid = (c >= 48 && c <= 57) || (lower >= 97 && lower <= 102);
  }
  if (!valid) throw new Error(`invalid Bytes id: ${id} (expected ${HEX_BYTES_FORM})`);
  return id.toLowerCase();
}

/**
 * One block's view of the store (EntityStoreTx): writes are buffered per (type, id) and reads see
 * them first, so handlers observe their own block's changes; flush() hands the net changes to SQL.
 */
export class BlockWriteBuffer implements EntityStoreTx {
  private readonly changes = new Map<string, Map<string, Entity | null>>();
  /** what set and remove replaced since mark(), to put back on undo(); null when not marked */
  private journal: MapJournal | null = null;

  constructor(
    private readonly store: IndexerStore,
    readonly blockNumber: number,
    /** the causality region writing: 0 for chain handlers, whose reads see the store; a file data source's own, whose do not */
    readonly region: number,
  ) {}

  private key(entityType: string, id: string): { byId: Map<string, Entity | null>; key: string } {
    const layout = this.store.layouts.get(entityType);
    if (!layout) throw new Error(`unknown entity type ${entityType}`);
    let byId = this.changes.get(entityType);
    if (!byId) {
      byId = new Map();
      this.changes.set(entityType, byId);
    }
    // Bytes ids compare by value, so their hex spelling is normalised
    return { byId, key: layout.idKind === 'Bytes' ? normalizeHex(id) : id };
  }

  /** The entity as the block sees it; callers copy it before changing it (the runtime's merge does). */
  get(entityType: string, id: string): Entity | null {
    const { byId, key } = this.key(entityType, id);
    if (byId.has(key)) return byId.get(key)!;
    return this.region === 0 ? this.store.getCurrent(entityType, key) : null;
  }

  has(entityType: string, id: string): boolean {
    const { byId, key } = this.key(entityType, id);
    if (byId.has(key)) return byId.get(key) !== null;
    return this.region === 0 && this.store.hasCurrent(entityType, key);
  }

  otherRegionHolding(entityType: string, id: string): number | null {
    const { key } = this.key(entityType, id);
    return this.store.otherRegionHolding(entityType, key, this.region);
  }

  /** Takes ownership of `entity`: the caller does not change it afterwards. */
  set(entityType: string, id: string, entity: Entity): void {
    this.write(entityType, id, entity);
  }

  remove(entityType: string, id: string): void {
    this.write(entityType, id, null);
  }

  private write(entityType: string, id: string, entity: Entity | null): void {
    const { byId, key } = this.key(entityType, id);
    this.journal?.record(byId, key);
    byId.delete(key); // keep insertion order = last write order
    byId.set(key, entity);
  }

  mark(): void {
    this.journal = new MapJournal();
  }

  undo(): void {
    this.journal?.undo();
    this.journal = null;
  }

  loadRelated(entityType: string, field: string, id: string): Entity[] {
    return relatedEntities(this.store, this.changes, entityType, field, id, this.region);
  }

  flush(): void {
    this.store.writeChanges(this.blockNumber, this.changes, this.region);
    this.changes.clear();
  }
}
