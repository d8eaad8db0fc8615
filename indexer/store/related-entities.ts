// The store side of graph-ts's store.loadRelated: the current entities of one type whose reference
// field holds a given id, as a block sees them mid-way through its handlers. The stored versions
// are read through the reference column's index, then the block's own pending writes are laid on
// top (graph-node's entity_cache.load_related): an entity written in the block counts only if its
// final in-block state still references the id, and one removed in the block does not count. Chain
// handlers see only the versions chain handlers wrote (causality region 0); a file data source's
// handler sees only its own writes.
import type Database from 'better-sqlite3';
import type { IdKind } from '../subgraph-schema.ts';
import type { Entity, StoreValue } from './entity.ts';
import {
  OPEN_BLOCK,
  bytesToHex,
  idFromSql,
  idToSql,
  rowToEntity,
  type ColumnLayout,
  type TableLayout,
} from './layout.ts';
import type { IndexerStore } from './sqlite-store.ts';

/** One prepared lookup per (type, field), per store: mappings call loadRelated from hot handlers. */
const lookups = new WeakMap<IndexerStore, Map<string, Database.Statement>>();

function lookup(store: IndexerStore, table: TableLayout, column: ColumnLayout): Database.Statement {
  let byField = lookups.get(store);
  if (!byField) {
    byField = new Map();
    lookups.set(store, byField);
  }
  const key = `${table.entity.name}.${column.field.name}`;
  let statement = byField.get(key);
  if (!statement) {
    statement = store.db.prepare(
      `SELECT * FROM ${table.sql} WHERE ${column.sql} = ? AND "__to" = ${OPEN_BLOCK}${table.regioned ? ' AND "__region" = 0' : ''}`,
    );
    byField.set(key, statement);
  }
  return statement;
}

/** An id in the spelling the block write buffer keys entities by: Bytes lowercase 0x hex, Int8 decimal. */
function canonicalId(kind: IdKind, id: string): string {
  if (kind === 'Bytes') return id.toLowerCase();
  if (kind === 'Int8') return BigInt(id).toString();
  return id;
}

/** Whether a reference value (as a handler set it) points at `id`, in the referenced type's id kind. */
function references(kind: IdKind, value: StoreValue | undefined, id: string): boolean {
  if (value === undefined) return false;
  switch (kind) {
    case 'Bytes':
      // a hex string is accepted for a Bytes reference and stored as its bytes
      if (value.kind === 'Bytes') return bytesToHex(value.value) === id;
      return value.kind === 'String' && value.value.toLowerCase() === id;
    case 'Int8':
      return value.kind === 'Int8' && value.value.toString() === id;
    default:
      return value.kind === 'String' && value.value === id;
  }
}

/** graph-node orders the result by entity key: ids as bytes (UTF-8 for strings), Int8 ids as numbers. */
function compareIds(kind: IdKind): (a: string, b: string) => number {
  if (kind === 'Int8') {
    return (a, b) => {
      const x = BigInt(a);
      const y = BigInt(b);
      return x < y ? -1 : x > y ? 1 : 0;
    };
  }
  // lowercase 0x hex of equal-length or prefix-related byte strings sorts as the bytes do
  if (kind === 'Bytes') return (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The current entities of `entityType` whose reference `field` holds `id`, in id order, with the
 * pending writes of causality region `region` (type -> id -> entity, or null for a removal) applied
 * over the stored ones, which only region 0 (chain handlers) reads. `field` must be a stored,
 * single-valued column of `entityType`.
 */
export function relatedEntities(
  store: IndexerStore,
  pending: ReadonlyMap<string, ReadonlyMap<string, Entity | null>>,
  entityType: string,
  field: string,
  id: string,
  region = 0,
): Entity[] {
  const table = store.layouts.get(entityType);
  if (!table) throw new Error(`unknown entity type ${entityType}`);
  const column = table.byField.get(field);
  if (!column || column.list) {
    throw new Error(`${entityType}.${field} is not a single-valued stored field, so it cannot be looked up`);
  }
  const refKind = column.valueKind as IdKind;
  if (refKind !== 'String' && refKind !== 'Bytes' && refKind !== 'Int8') {
    throw new Error(`${entityType}.${field} holds ${column.valueKind} values, which are never entity ids`);
  }
  const target = canonicalId(refKind, id);
  const written = pending.get(entityType);
  const found = new Map<string, Entity>();
  const rows =
    region === 0
      ? (lookup(store, table, column).all(idToSql(refKind, target)) as Record<string, unknown>[])
      : [];
  for (const row of rows) {
    const rowId = idFromSql(table.idKind, row.id);
    // the block's write of this entity, if any, decides instead (below)
    if (!written?.has(rowId)) found.set(rowId, rowToEntity(table, row));
  }
  if (written) {
    for (const [writtenId, entity] of written) {
      if (entity !== null && references(refKind, entity.get(field), target)) found.set(writtenId, entity);
    }
  }
  const order = compareIds(table.idKind);
  return [...found.keys()].sort(order).map((key) => found.get(key)!);
}
