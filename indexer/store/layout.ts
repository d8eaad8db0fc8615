// How the entity model maps onto SQLite: one table per entity type, one column per stored field,
// plus the version columns (__vid, __from, __to) that give every entity version its block range,
// and, for the types file data sources write, the causality region (__region) that wrote it.
// Both the writer (entity values in) and the query API (JSON values out) convert through here, so
// the encodings below are the single definition of what a stored value looks like.
import {
  referencedIdKind,
  type EntityTypeModel,
  type FieldModel,
  type IdKind,
  type ScalarKind,
  type SubgraphSchema,
} from '../subgraph-schema.ts';
import type { Entity, StoreValue } from './entity.ts';
import { decodeBigIntKey, encodeBigDecimalKey, encodeBigIntKey } from './sortable-numbers.ts';

/** `__to` of a version that is still current; a block number no chain reaches. */
export const OPEN_BLOCK = Number.MAX_SAFE_INTEGER;

/** The kind a field's values have once references are resolved to their target's id kind. */
type ValueKind = Exclude<ScalarKind, 'ID'>;

export interface ColumnLayout {
  field: FieldModel;
  /** quoted SQL identifier of the value column */
  sql: string;
  /** BigDecimal only: quoted identifier of the sortable key column used for comparisons */
  keySql: string | undefined;
  /** kind of the values (for references: the id kind of the referenced entity) */
  valueKind: ValueKind;
  list: boolean;
  /**
   * String and Bytes attributes (not the id, references or lists): how many characters or bytes
   * of a value their index holds (STRING_PREFIX_CHARS, BYTES_PREFIX_LENGTH). A comparison reaches
   * the index only through the same expression, valuePrefix(column, prefix).
   */
  prefix: number | undefined;
}

export interface TableLayout {
  entity: EntityTypeModel;
  /** quoted SQL identifier of the table */
  sql: string;
  /** stored columns in declaration order, `id` first */
  columns: ColumnLayout[];
  byField: Map<string, ColumnLayout>;
  idKind: IdKind;
  /**
   * whether versions record their causality region (`__region`): 0 for chain handlers, one of its
   * own for each file data source (graph-node's causality_region column, on the same types)
   */
  regioned: boolean;
}

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

function valueKindOf(schema: SubgraphSchema, field: FieldModel): ValueKind {
  switch (field.kind) {
    case 'ID':
    case 'String':
    case 'Enum':
      return 'String';
    case 'Entity':
      return referencedIdKind(schema, field.typeName);
    default:
      return field.kind;
  }
}

/**
 * What the index of a String or Bytes attribute holds of each value, as in graph-node
 * (relational.rs STRING_PREFIX_SIZE, BYTE_ARRAY_PREFIX_SIZE): a value may be any length (a String
 * of event arguments as JSON, say), and a prefix decides most comparisons at a bounded cost per entry.
 */
const STRING_PREFIX_CHARS = 256;
const BYTES_PREFIX_LENGTH = 64;

/** The prefix of `expr` an index on a column with `prefix` holds: characters of text, bytes of a blob. */
export function valuePrefix(expr: string, prefix: number): string {
  return `substr(${expr}, 1, ${prefix})`;
}

/** graph-node's use_prefix_comparison: Strings (not enums) and Bytes, neither the id, a reference nor a list. */
function prefixOf(field: FieldModel): number | undefined {
  if (field.list || field.name === 'id') return undefined;
  if (field.kind === 'String' || field.kind === 'ID') return STRING_PREFIX_CHARS;
  if (field.kind === 'Bytes') return BYTES_PREFIX_LENGTH;
  return undefined;
}

export function buildLayouts(
  schema: SubgraphSchema,
  regioned: ReadonlySet<string> = new Set(),
): Map<string, TableLayout> {
  const layouts = new Map<string, TableLayout>();
  for (const entity of schema.entities.values()) {
    const columns: ColumnLayout[] = [];
    for (const field of entity.fields.values()) {
      if (field.derivedFrom !== undefined) continue;
      const valueKind = valueKindOf(schema, field);
      columns.push({
        field,
        sql: quoteIdent(field.name),
        keySql: valueKind === 'BigDecimal' && !field.list ? quoteIdent(field.name + '__key') : undefined,
        valueKind,
        list: field.list,
        prefix: prefixOf(field),
      });
    }
    layouts.set(entity.name, {
      entity,
      sql: quoteIdent(entity.name),
      columns,
      byField: new Map(columns.map((c) => [c.field.name, c])),
      idKind: entity.idKind,
      regioned: regioned.has(entity.name),
    });
  }
  return layouts;
}

function sqlType(column: ColumnLayout): string {
  if (column.list) return 'TEXT';
  switch (column.valueKind) {
    case 'String':
    case 'BigDecimal':
      return 'TEXT';
    case 'Bytes':
    case 'BigInt':
      return 'BLOB';
    default:
      return 'INTEGER';
  }
}

/** CREATE statements of an entity table and its indexes. */
export function tableDdl(table: TableLayout): string[] {
  const name = table.entity.name;
  const cols = ['"__vid" INTEGER PRIMARY KEY', '"__from" INTEGER NOT NULL', '"__to" INTEGER NOT NULL'];
  if (table.regioned) cols.push('"__region" INTEGER NOT NULL');
  for (const c of table.columns) {
    cols.push(`${c.sql} ${sqlType(c)}`);
    if (c.keySql) cols.push(`${c.keySql} BLOB`);
  }
  const ddl = [`CREATE TABLE IF NOT EXISTS ${table.sql} (${cols.join(', ')})`];
  const idx = (suffix: string) => quoteIdent(`${name}__${suffix}`);
  if (table.entity.immutable) {
    // An immutable entity has one version, never closed: its id alone is unique and is the lookup
    // path of get() and of queries by id at any block.
    ddl.push(`CREATE UNIQUE INDEX IF NOT EXISTS ${idx('id')} ON ${table.sql} ("id")`);
  } else {
    // one current version per id, the writer's lookup path; (id, __from) serves reads at a block
    ddl.push(
      `CREATE UNIQUE INDEX IF NOT EXISTS ${idx('current')} ON ${table.sql} ("id") WHERE "__to" = ${OPEN_BLOCK}`,
    );
    ddl.push(`CREATE INDEX IF NOT EXISTS ${idx('id_range')} ON ${table.sql} ("id", "__from")`);
    ddl.push(
      `CREATE INDEX IF NOT EXISTS ${idx('to')} ON ${table.sql} ("__to") WHERE "__to" <> ${OPEN_BLOCK}`,
    );
  }
  // what a reorg deletes
  ddl.push(`CREATE INDEX IF NOT EXISTS ${idx('from')} ON ${table.sql} ("__from")`);
  // as graph-node (ddl.rs columns_to_index), every attribute but the id and lists, which a filter
  // tests item by item (graph-node's GIN indexes on lists are off by default)
  for (const c of table.columns) {
    if (c.list || c.field.name === 'id') continue;
    if (c.field.kind === 'Entity') {
      // references are what @derivedFrom lists and nested filters look up
      ddl.push(
        `CREATE INDEX IF NOT EXISTS ${idx('ref_' + c.field.name)} ON ${table.sql} (${c.sql}, "__from")`,
      );
    } else {
      // numbers are also what collections are ordered and paged by (`orderBy: x, where: { x_lt:
      // cursor }`); as in graph-node the index holds the value alone: ties on x are few, and their
      // sort by id is cheaper than a wide (x, id) entry on every insert
      const value = c.prefix === undefined ? (c.keySql ?? c.sql) : valuePrefix(c.sql, c.prefix);
      ddl.push(`CREATE INDEX IF NOT EXISTS ${idx('by_' + c.field.name)} ON ${table.sql} (${value})`);
    }
  }
  return ddl;
}

/** What the store takes as bytes (Bytes values and ids, hashes): block-write-buffer.ts says it too. */
export const HEX_BYTES_FORM = '0x and an even number of hex digits';

/** The bytes of `hex`, which is HEX_BYTES_FORM. */
export function hexToBytes(hex: string): Buffer {
  const bytes = hex.startsWith('0x') && hex.length % 2 === 0 ? Buffer.from(hex.slice(2), 'hex') : null;
  // Buffer.from stops at the first non-hex digit, so a short result means invalid input
  if (!bytes || bytes.length * 2 !== hex.length - 2) {
    throw new Error(`invalid hex bytes: ${hex} (expected ${HEX_BYTES_FORM})`);
  }
  return bytes;
}

/** Lowercase 0x hex of `bytes`, the one form the indexer writes bytes in. */
export function bytesToHex(bytes: Uint8Array): string {
  return '0x' + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** SQL parameter of an id given as a string (Bytes ids as 0x hex, Int8 ids as decimal). */
export function idToSql(idKind: TableLayout['idKind'], id: string): Buffer | string | bigint {
  if (idKind === 'Bytes') return hexToBytes(id);
  if (idKind === 'Int8') return BigInt(id);
  return id;
}

/** An id column's SQL value as the string ids are keyed by (the inverse of idToSql). */
export function idFromSql(idKind: TableLayout['idKind'], raw: unknown): string {
  if (idKind === 'Bytes') return bytesToHex(raw as Uint8Array);
  return String(raw);
}

function mismatch(column: ColumnLayout, value: StoreValue): Error {
  return new Error(
    `field ${column.field.name}: value of kind ${value.kind} cannot be stored as ${column.valueKind}`,
  );
}

/** A scalar (non-list) store value as its SQL column value. */
function scalarToSql(column: ColumnLayout, value: StoreValue): unknown {
  if (value.kind === 'Null') return null;
  switch (column.valueKind) {
    case 'String':
      if (value.kind !== 'String') throw mismatch(column, value);
      return value.value;
    case 'Bytes':
      if (value.kind === 'Bytes') return value.value; // better-sqlite3 binds any Uint8Array as a BLOB
      if (value.kind === 'String') return hexToBytes(value.value);
      throw mismatch(column, value);
    case 'BigInt':
      if (value.kind !== 'BigInt') throw mismatch(column, value);
      return encodeBigIntKey(value.value);
    case 'BigDecimal':
      if (value.kind !== 'BigDecimal') throw mismatch(column, value);
      return value.value;
    case 'Int':
      if (value.kind !== 'Int') throw mismatch(column, value);
      return value.value;
    case 'Int8':
    case 'Timestamp':
      if (value.kind !== 'Int8' && value.kind !== 'Timestamp') throw mismatch(column, value);
      return value.value;
    case 'Boolean':
      if (value.kind !== 'Bool') throw mismatch(column, value);
      return value.value ? 1 : 0;
  }
}

/** One list item as JSON: numbers beyond 32 bits and bytes as strings, so JSON text stays exact. */
function itemToJson(column: ColumnLayout, value: StoreValue): unknown {
  switch (value.kind) {
    case 'Null':
      return null;
    case 'String':
      return column.valueKind === 'Bytes' ? value.value.toLowerCase() : value.value;
    case 'Bytes':
      return bytesToHex(value.value);
    case 'Int':
    case 'Bool':
    case 'BigDecimal':
      return value.value;
    case 'Int8':
    case 'BigInt':
    case 'Timestamp':
      return value.value.toString();
    case 'List':
      throw mismatch(column, value);
  }
}

/** The column values (in `columns` order, BigDecimal keys after their value) of an entity. */
export function entityToRow(table: TableLayout, entity: Entity): unknown[] {
  const row: unknown[] = [];
  for (const c of table.columns) {
    const value = entity.get(c.field.name) ?? { kind: 'Null' };
    if (c.list) {
      if (value.kind === 'Null') row.push(null);
      else if (value.kind === 'List') row.push(JSON.stringify(value.value.map((v) => itemToJson(c, v))));
      else throw mismatch(c, value);
    } else {
      const sql = scalarToSql(c, value);
      row.push(sql);
      if (c.keySql) row.push(sql === null ? null : encodeBigDecimalKey(sql as string));
    }
  }
  return row;
}

function itemFromJson(column: ColumnLayout, item: unknown): StoreValue {
  if (item === null) return { kind: 'Null' };
  switch (column.valueKind) {
    case 'String':
      return { kind: 'String', value: item as string };
    case 'Bytes':
      return { kind: 'Bytes', value: hexToBytes(item as string) };
    case 'BigInt':
      return { kind: 'BigInt', value: BigInt(item as string) };
    case 'BigDecimal':
      return { kind: 'BigDecimal', value: item as string };
    case 'Int':
      return { kind: 'Int', value: item as number };
    case 'Int8':
      return { kind: 'Int8', value: BigInt(item as string) };
    case 'Timestamp':
      return { kind: 'Timestamp', value: BigInt(item as string) };
    case 'Boolean':
      return { kind: 'Bool', value: item as boolean };
  }
}

function scalarFromSql(column: ColumnLayout, raw: unknown): StoreValue {
  switch (column.valueKind) {
    case 'String':
      return { kind: 'String', value: raw as string };
    case 'Bytes': {
      const b = raw as Buffer; // a plain Uint8Array view, as the runtime's values are
      return { kind: 'Bytes', value: new Uint8Array(b.buffer, b.byteOffset, b.byteLength) };
    }
    case 'BigInt':
      return { kind: 'BigInt', value: decodeBigIntKey(raw as Buffer) };
    case 'BigDecimal':
      return { kind: 'BigDecimal', value: raw as string };
    case 'Int':
      return { kind: 'Int', value: Number(raw) };
    case 'Int8':
      return { kind: 'Int8', value: BigInt(raw as bigint) };
    case 'Timestamp':
      return { kind: 'Timestamp', value: BigInt(raw as bigint) };
    case 'Boolean':
      return { kind: 'Bool', value: Number(raw) !== 0 };
  }
}

/** An entity read back from a row object keyed by field name; NULL columns are left out. */
export function rowToEntity(table: TableLayout, row: Record<string, unknown>): Entity {
  const entity: Entity = new Map();
  for (const c of table.columns) {
    const raw = row[c.field.name];
    if (raw === null || raw === undefined) continue;
    if (c.list) {
      const items = JSON.parse(raw as string) as unknown[];
      entity.set(c.field.name, { kind: 'List', value: items.map((i) => itemFromJson(c, i)) });
    } else {
      entity.set(c.field.name, scalarFromSql(c, raw));
    }
  }
  return entity;
}

/** A column value as graph-node serialises it in query responses. */
export function sqlToJson(column: ColumnLayout, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  if (column.list) return JSON.parse(raw as string);
  switch (column.valueKind) {
    case 'String':
    case 'BigDecimal':
      return raw;
    case 'Bytes':
      return bytesToHex(raw as Uint8Array);
    case 'BigInt':
      return decodeBigIntKey(raw as Uint8Array).toString();
    case 'Int':
      return Number(raw);
    case 'Int8':
    case 'Timestamp':
      return String(raw);
    case 'Boolean':
      return Number(raw) !== 0;
  }
}
