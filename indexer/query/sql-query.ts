// Compiles graph-node collection arguments (where, orderBy, orderDirection, first, skip) into one
// SQLite SELECT over the versions visible at a block. Semantics follow graph-node's
// relational_queries.rs: list `contains` means "has all", list `not_contains` "has none", nested
// `<field>_` filters go one level deep, `and`/`or` take query.rs's operands (see booleanOperands),
// ordering is `<key> <dir>, id <dir>` with NULLs last ascending / first descending as in Postgres,
// and the default order is `id asc`. An interface's collection is the UNION ALL of one such SELECT
// per implementing table, ordered as one (graph-node's FilterCollection::All).
import { bigIntTooBig } from '../runtime/bigint-limit.ts';
import { fieldTypeText, referencedTypes, type FieldModel, type SubgraphSchema } from '../subgraph-schema.ts';
import { bytesToHex, valuePrefix, type ColumnLayout, type TableLayout } from '../store/layout.ts';
import { bigIntBoundKey, encodeBigDecimalKey } from '../store/sortable-numbers.ts';
import {
  filterEntries,
  orderByValues,
  queryableTypes,
  type FilterEntry,
  type FilterOp,
  type OrderByValue,
} from './filter-model.ts';
import { queryBytes } from './scalars.ts';

/** An error in what the client asked for; its message is returned to the client as is. */
export class QueryError extends Error {}

export interface QueryModel {
  schema: SubgraphSchema;
  layouts: Map<string, TableLayout>;
  filters: Map<string, Map<string, FilterEntry>>;
  orderBy: Map<string, Map<string, OrderByValue>>;
}

export function buildQueryModel(schema: SubgraphSchema, layouts: Map<string, TableLayout>): QueryModel {
  const filters = new Map<string, Map<string, FilterEntry>>();
  const orderBy = new Map<string, Map<string, OrderByValue>>();
  for (const type of queryableTypes(schema)) {
    filters.set(type.name, new Map(filterEntries(schema, type).map((e) => [e.key, e])));
    orderBy.set(type.name, new Map(orderByValues(schema, type).map((o) => [o.name, o])));
  }
  return { schema, layouts, filters, orderBy };
}

/** The tables holding what a reference to `typeName` may point at: an entity's, or each implementer's. */
export function tablesOf(model: QueryModel, typeName: string): TableLayout[] {
  return referencedTypes(model.schema, typeName).map((type) => model.layouts.get(type.name)!);
}

/** graph-node's defaults for GRAPH_GRAPHQL_MAX_FIRST and GRAPH_GRAPHQL_MAX_SKIP (env/graphql.rs, u32::MAX). */
const MAX_FIRST = 1000;
const MAX_SKIP = 4_294_967_295;

/** SQLite's SQLITE_MAX_VARIABLE_NUMBER: the most parameters one statement takes. */
const MAX_SQL_PARAMETERS = 32_766;

const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

export interface CollectionArgs {
  first?: number | null;
  skip?: number | null;
  orderBy?: string | null;
  orderDirection?: 'asc' | 'desc' | null;
  where?: Record<string, unknown> | null;
}

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

/**
 * The versions visible at `block`. At the head `__from <= block` holds for nearly every row, but
 * without statistics SQLite takes a range on the "__from" index (which exists for reorg deletes)
 * for a selective one, reads the whole table through it and sorts it, where an index on the sort
 * key would have served the first page. Telling it the condition is likely true keeps it from
 * driving a scan, while an index led by an equality ((id, __from), (reference, __from)) still
 * narrows its range with it.
 */
function blockRange(alias: string, block: number): string {
  return `likelihood(${alias}."__from" <= ${block}, 0.99) AND ${alias}."__to" > ${block}`;
}

/**
 * A SELECT of `what` from the newest version at or before `block` of the entity whose id is `id`
 * (an SQL expression): one seek down the (id, __from) index. That version is the one visible at
 * the block unless it was closed by then (the entity removed), which `"__to" > block` tells; the
 * range `__from <= block AND __to > block` alone walks every version up to the block, and an
 * entity gains one in each block it changes in.
 */
function newestVersion(table: TableLayout, alias: string, what: string, id: string, block: number): string {
  return `SELECT ${what} FROM ${table.sql} ${alias} WHERE ${alias}."id" = ${id} AND ${alias}."__from" <= ${block} ORDER BY ${alias}."__from" DESC LIMIT 1`;
}

/** SQL text of an id expression as it appears in JSON lists and responses (0x hex for Bytes). */
export function idAsText(expr: string, idKind: TableLayout['idKind']): string {
  if (idKind === 'Bytes') return `('0x' || lower(hex(${expr})))`;
  if (idKind === 'Int8') return `CAST(${expr} AS TEXT)`;
  return expr;
}

type PatternKind = 'contains' | 'starts_with' | 'ends_with';

/**
 * The Postgres LIKE pattern graph-node builds for a string operator (relational_queries.rs
 * `Filter::new`): the value is not escaped, so `%` and `_` in it are wildcards and `\\` escapes the
 * character after it; `contains` takes a value that starts or ends with `%` as the whole pattern.
 */
function likePattern(kind: PatternKind, value: string): string {
  const pattern =
    kind === 'starts_with'
      ? `${value}%`
      : kind === 'ends_with'
        ? `%${value}`
        : value.startsWith('%') || value.endsWith('%')
          ? value
          : `%${value}%`;
  checkLikePattern(pattern);
  return pattern;
}

/** Postgres refuses a LIKE pattern ending in its escape character rather than match it. */
function checkLikePattern(pattern: string): void {
  const trailingEscapes = pattern.length - pattern.replace(/\\+$/, '').length;
  if (trailingEscapes % 2 === 1) throw new QueryError('LIKE pattern must not end with escape character');
}

/**
 * A LIKE pattern as the SQLite GLOB pattern matching the same strings: Postgres' LIKE is
 * case-sensitive, SQLite's is not, and GLOB is.
 */
function likeToGlob(pattern: string): string {
  let glob = '';
  let escaped = false;
  for (const char of pattern) {
    if (!escaped && char === '\\') escaped = true;
    else if (!escaped && char === '%') glob += '*';
    else if (!escaped && char === '_') glob += '?';
    else {
      glob += '*?['.includes(char) ? `[${char}]` : char;
      escaped = false;
    }
  }
  return glob;
}

/** A BigInt filter value, refused past graph-node's limit in its words (scalar::BigInt::new). */
function checkedBigInt(value: unknown): bigint {
  const n = BigInt(value as bigint);
  const tooBig = bigIntTooBig(n);
  if (tooBig !== undefined) throw new QueryError(`Failed to decode \`BigInt\` value: \`${tooBig}\``);
  return n;
}

/** An Int8 or Timestamp filter value: a 64-bit integer, as graph-node parses them (i64). */
function checkedInt8(kind: 'Int8' | 'Timestamp', value: unknown): bigint {
  const n = BigInt(value as bigint);
  if (n < INT8_MIN || n > INT8_MAX) throw new QueryError(`Failed to decode \`${kind}\` value: \`${n}\``);
  return n;
}

/**
 * SQL values as one JSON array, for `json_each`: blobs as hex text (which `unhex` turns back),
 * 64-bit integers as JSON numbers, which SQLite reads back exactly.
 */
function jsonArrayOf(values: readonly unknown[]): string {
  const items = values.map((v) => {
    if (Buffer.isBuffer(v)) return `"${v.toString('hex')}"`;
    if (typeof v === 'string') return JSON.stringify(v);
    return String(v);
  });
  return `[${items.join(',')}]`;
}

/**
 * `parts` joined by `op` as a balanced tree: SQLite refuses an expression nested more than 1,000
 * deep (SQLITE_MAX_EXPR_DEPTH), which a chain of 1,000 ORs is; balanced, it is log2(n) deep.
 */
function joinBalanced(parts: readonly string[], op: 'AND' | 'OR'): string {
  if (parts.length === 1) return parts[0]!;
  const half = parts.length >> 1;
  return `(${joinBalanced(parts.slice(0, half), op)} ${op} ${joinBalanced(parts.slice(half), op)})`;
}

/** graph-node's InvalidFilterError, its typo included. */
const INVALID_FILTER = 'Filter must by an object';

function isFilterObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** graph-node refuses column filters beside `or` (query.rs build_filter_from_object), in its words. */
function checkNoColumnFilters(keys: readonly string[]): void {
  const columns = keys.filter((k) => k !== 'or' && k !== 'and' && k !== '_change_block').map((k) => `'${k}'`);
  if (columns.length === 0) return;
  const list = columns.join(', ');
  throw new QueryError(
    `Cannot mix column filters with 'or' operator at the same level. Found column filter(s) ${list} alongside 'or' operator.\n\n` +
      `Instead of:\nwhere: { ${list}, or: [...] }\n\nUse:\nwhere: { or: [{ ${list}, ... }, { ${list}, ... }] }`,
  );
}

/** SQL operators graph-node names when it refuses a null for them (relational_queries.rs). */
const NULL_REFUSING_OPERATORS: Partial<Record<FilterOp, string>> = {
  gt: '>',
  lt: '<',
  gte: '>=',
  lte: '<=',
  starts_with: ' like ',
  ends_with: ' like ',
  starts_with_nocase: ' ilike ',
  ends_with_nocase: ' ilike ',
  not_starts_with: ' not like ',
  not_ends_with: ' not like ',
  not_starts_with_nocase: ' not ilike ',
  not_ends_with_nocase: ' not ilike ',
};

/** graph-node's error for a null given to an operator other than equality. */
function nullFilterMessage(key: string, op: FilterOp): string {
  if (op === 'in' || op === 'not_in') return `Non-list value passed to \`_${op}\` filter`;
  const operator = NULL_REFUSING_OPERATORS[op];
  if (operator !== undefined) return `Store error: unsupported filter \`${operator}\` for value \`null\``;
  return `Filter not supported by value \`null\`: \`${key}\``;
}

/**
 * The refusal of `_starts_with`, `_ends_with` and their `not_`/`_nocase` forms on a reference to a
 * Bytes-id entity: graph-node's schema has them (a reference is filtered as String), but its store
 * compares the bytea column with a text pattern, which Postgres has no operator for, so the query
 * fails there. Answering it here would make a query that only this indexer runs.
 */
function bytesPatternMessage(field: FieldModel, op: string): string {
  const name = field.name;
  return (
    `\`${name}_${op}\` cannot filter \`${name}\`: it refers to \`${field.typeName}\` by a Bytes id, which cannot be matched as text. ` +
    `Use \`${name}_contains\` or \`${name}_not_contains\` for bytes anywhere in the id, ` +
    `or \`${name}_gte\` with \`${name}_lt\` for a prefix (the ids from 0x12 up to 0x13 are those starting with 0x12)`
  );
}

class Compiler {
  private aliasCount = 0;
  readonly params: unknown[] = [];

  constructor(
    private readonly model: QueryModel,
    private readonly block: number,
  ) {}

  alias(): string {
    return `t${this.aliasCount++}`;
  }

  private param(value: unknown): string {
    this.params.push(value);
    return '?';
  }

  /** A ready-made fragment's SQL, its parameters taken in at this point of the text. */
  fragment(fragment: SqlFragment): string {
    this.params.push(...fragment.params);
    return fragment.sql;
  }

  /** A filter value as the SQL value of `column`. */
  private sqlValue(column: ColumnLayout, value: unknown): unknown {
    switch (column.valueKind) {
      case 'String':
        return String(value);
      case 'Bytes': {
        if (Buffer.isBuffer(value)) return value;
        const bytes = queryBytes(String(value));
        if (!bytes) {
          throw new QueryError(
            `Failed to parse \`${String(value)}\` as bytes for field \`${column.field.name}\``,
          );
        }
        return bytes;
      }
      case 'BigInt':
        // a number too large to store compares as greater (or less) than every stored one
        return bigIntBoundKey(checkedBigInt(value));
      case 'BigDecimal':
        return encodeBigDecimalKey(String(value));
      case 'Int':
        return value;
      case 'Int8':
      case 'Timestamp':
        return checkedInt8(column.valueKind, value);
      case 'Boolean':
        return value ? 1 : 0;
    }
  }

  /** A filter value as a list item in the stored JSON encoding. */
  private jsonItem(column: ColumnLayout, value: unknown): unknown {
    if (value === null) return null;
    switch (column.valueKind) {
      case 'Bytes':
        return Buffer.isBuffer(value) ? bytesToHex(value) : String(value).toLowerCase();
      case 'BigInt':
        return String(checkedBigInt(value));
      case 'Int8':
      case 'Timestamp':
        return String(value);
      default:
        return value;
    }
  }

  where(table: TableLayout, alias: string, where: Record<string, unknown>, nested: boolean): string {
    const filters = this.model.filters.get(table.entity.name)!;
    // graph-node coerces the object into a BTreeMap, so it reads the keys in byte order
    const keys = Object.keys(where).sort();
    if (keys.includes('or')) checkNoColumnFilters(keys);
    return keys
      .map((key) => {
        const value = where[key];
        if (key === 'and' || key === 'or') {
          const operands = this.booleanOperands(table, alias, keys, where, nested);
          // graph-node renders an empty `and` as true and an empty `or` as false
          if (operands.length === 0) return key === 'and' ? '1' : '0';
          return `(${joinBalanced(operands, key === 'and' ? 'AND' : 'OR')})`;
        }
        if (key === '_change_block') {
          if (!isFilterObject(value)) throw new QueryError(INVALID_FILTER);
          return `${alias}."__from" >= ${Number(value.number_gte)}`;
        }
        const entry = filters.get(key);
        if (!entry) throw new QueryError(`Type \`${table.entity.name}\` has no field \`${key}\``);
        if (entry.op !== 'child') return this.condition(table, alias, entry, value);
        if (nested) {
          throw new QueryError(
            `Child filter nesting not supported by value \`${key}\`: \`${entry.field.name}_\``,
          );
        }
        if (!isFilterObject(value)) {
          throw new QueryError(
            `Query contains value with invalid type \`${fieldTypeText(entry.field)}\`: \`${String(value)}\``,
          );
        }
        return this.child(table, alias, entry, value);
      })
      .join(' AND ');
  }

  /**
   * The operands of an `and` or `or`: graph-node takes the filters of every list in the object, not
   * just the key's own (query.rs build_list_filter_from_object), so `{ and: [a], or: [b] }` is
   * `a AND b`, and any key beside them whose value is not a list of filters is refused.
   */
  private booleanOperands(
    table: TableLayout,
    alias: string,
    keys: readonly string[],
    where: Record<string, unknown>,
    nested: boolean,
  ): string[] {
    return keys.flatMap((key) => {
      const list = where[key];
      if (!Array.isArray(list)) throw new QueryError(INVALID_FILTER);
      return list.map((item) => {
        if (!isFilterObject(item)) throw new QueryError(INVALID_FILTER);
        return `(${this.where(table, alias, item, nested) || '1'})`;
      });
    });
  }

  /** A nested `<field>_` filter; on an interface, it matches an entity of any implementer. */
  private child(
    table: TableLayout,
    alias: string,
    entry: FilterEntry,
    filter: Record<string, unknown>,
  ): string {
    const tables = tablesOf(this.model, entry.field.typeName);
    const conditions = tables.map((childTable) => this.childOf(table, alias, entry, childTable, filter));
    if (conditions.length === 0) return '0';
    return conditions.length === 1 ? conditions[0]! : `(${conditions.join(' OR ')})`;
  }

  private childOf(
    table: TableLayout,
    alias: string,
    entry: FilterEntry,
    childTable: TableLayout,
    filter: Record<string, unknown>,
  ): string {
    const field = entry.field;
    const c = this.alias();
    const inner = this.where(childTable, c, filter, true);
    const cond = [blockRange(c, this.block)];
    if (inner) cond.push(inner);
    if (field.derivedFrom !== undefined) {
      const back = childTable.byField.get(field.derivedFrom);
      if (!back) throw new QueryError(`${field.typeName} has no field ${field.derivedFrom}`);
      if (back.list) {
        cond.push(
          `${idAsText(`${alias}."id"`, table.idKind)} IN (SELECT value FROM json_each(${c}.${back.sql}))`,
        );
      } else {
        cond.push(`${c}.${back.sql} = ${alias}."id"`);
      }
      return `EXISTS (SELECT 1 FROM ${childTable.sql} ${c} WHERE ${cond.join(' AND ')})`;
    }
    const column = table.byField.get(field.name)!;
    if (column.list) {
      cond.push(
        `${idAsText(`${c}."id"`, childTable.idKind)} IN (SELECT value FROM json_each(${alias}.${column.sql}))`,
      );
      return `EXISTS (SELECT 1 FROM ${childTable.sql} ${c} WHERE ${cond.join(' AND ')})`;
    }
    return `${alias}.${column.sql} IN (SELECT ${c}."id" FROM ${childTable.sql} ${c} WHERE ${cond.join(' AND ')})`;
  }

  private condition(table: TableLayout, alias: string, entry: FilterEntry, value: unknown): string {
    const column = table.byField.get(entry.field.name)!;
    const col = `${alias}.${column.sql}`;
    if (entry.listField) return this.listCondition(column, col, entry, value);
    const cmp = `${alias}.${column.keySql ?? column.sql}`;
    const op = entry.op as Exclude<FilterEntry['op'], 'child'>;
    if (value === null && op !== '' && op !== 'not') throw new QueryError(nullFilterMessage(entry.key, op));
    // an id of a mutable entity type is looked up by a seek to its version at the block
    const version = column.field.name === 'id' && !table.entity.immutable ? this.versionById(table) : null;
    switch (op) {
      case '':
        if (value === null) return `${cmp} IS NULL`;
        if (version) return `${alias}."__vid" = ${version(this.param(this.sqlValue(column, value)))}`;
        return this.comparison(column, cmp, '=', value);
      case 'not':
        return value === null
          ? `${cmp} IS NOT NULL`
          : `${cmp} <> ${this.param(this.sqlValue(column, value))}`;
      case 'gt':
        return this.comparison(column, cmp, '>', value);
      case 'lt':
        return this.comparison(column, cmp, '<', value);
      case 'gte':
        return this.comparison(column, cmp, '>=', value);
      case 'lte':
        return this.comparison(column, cmp, '<=', value);
      case 'in':
      case 'not_in': {
        // the schema's `[T!]` keeps nulls out of the list
        const values = (value as unknown[]).map((v) => this.sqlValue(column, v));
        // graph-node renders an empty list as false whichever the operator (Filter::in_array)
        if (values.length === 0) return '0';
        // the list is one JSON parameter, however long: a statement takes 32,766 parameters at most
        const json = jsonArrayOf(values);
        const item = Buffer.isBuffer(values[0]) ? 'unhex(j.value)' : 'j.value';
        const list = (expr: (e: string) => string) =>
          `(SELECT ${expr(item)} FROM json_each(${this.param(json)}) j)`;
        const whole = (e: string) => e;
        if (op === 'not_in') return `${cmp} NOT IN ${list(whole)}`;
        if (version) return `${alias}."__vid" IN ${list(version)}`;
        const prefix = column.prefix;
        if (prefix === undefined) return `${cmp} IN ${list(whole)}`;
        // the index holds prefixes (layout.ts): the value's prefix must be one of the items'
        const p = (e: string) => valuePrefix(e, prefix);
        return `(${p(cmp)} IN ${list(p)} AND ${cmp} IN ${list(whole)})`;
      }
      default:
        return this.textCondition(column, col, op, value);
    }
  }

  /**
   * `column operator value`. A column whose index holds value prefixes (layout.ts) is compared by
   * prefix first, which the index serves, then in full, which decides: a prefix is in the order of
   * its value (a <= b gives prefix(a) <= prefix(b)), so `a > b` gives `prefix(a) >= prefix(b)`.
   */
  private comparison(
    column: ColumnLayout,
    cmp: string,
    operator: '=' | '>' | '<' | '>=' | '<=',
    value: unknown,
  ): string {
    const sqlValue = this.sqlValue(column, value);
    const prefix = column.prefix;
    if (prefix === undefined) return `${cmp} ${operator} ${this.param(sqlValue)}`;
    const prefixOperator = operator === '=' ? '=' : `${operator[0]}=`;
    const p = (e: string) => valuePrefix(e, prefix);
    return `(${p(cmp)} ${prefixOperator} ${p(this.param(sqlValue))} AND ${cmp} ${operator} ${this.param(sqlValue)})`;
  }

  /**
   * The `__vid` of the newest version at or before the block of the entity with a given id (SQL),
   * by newestVersion; the block range beside it drops that version if it was closed by then.
   */
  private versionById(table: TableLayout): (id: string) => string {
    const v = this.alias();
    return (id) => `(${newestVersion(table, v, `${v}."__vid"`, id, this.block)})`;
  }

  /** contains / starts_with / ends_with and their negated and case-insensitive forms. */
  private textCondition(column: ColumnLayout, col: string, op: string, value: unknown): string {
    const negated = op.startsWith('not_');
    const nocase = op.endsWith('_nocase');
    const kind = op.replace(/^not_/, '').replace(/_nocase$/, '') as PatternKind;
    if (column.valueKind === 'Bytes' && kind === 'contains') {
      // graph-node compares bytes, its Bytes fields' and references to Bytes ids alike, with
      // position(value in column), and has no case-insensitive form of it
      if (nocase)
        throw new QueryError(`Store error: unsupported filter \`${op}\` for value \`${String(value)}\``);
      const needle = this.param(this.sqlValue(column, value));
      return negated ? `instr(${col}, ${needle}) = 0` : `instr(${col}, ${needle}) > 0`;
    }
    if (column.valueKind === 'Bytes') throw new QueryError(bytesPatternMessage(column.field, op));
    const pattern = likePattern(kind, String(value));
    // ILIKE: SQLite's LIKE folds ASCII letters only, where Postgres folds every letter
    const test = nocase
      ? `${col} LIKE ${this.param(pattern)} ESCAPE '\\'`
      : `${col} GLOB ${this.param(likeToGlob(pattern))}`;
    return negated ? `NOT (${test})` : test;
  }

  private listCondition(column: ColumnLayout, col: string, entry: FilterEntry, value: unknown): string {
    if (value === null) {
      if (entry.op === '') return `${col} IS NULL`;
      if (entry.op === 'not') return `${col} IS NOT NULL`;
      throw new QueryError(`Filter not supported by value \`null\`: \`${entry.key}\``);
    }
    const items = (value as unknown[]).map((v) => this.jsonItem(column, v));
    const json = this.param(JSON.stringify(items));
    switch (entry.op) {
      case '':
        return `${col} = ${json}`;
      case 'not':
        return `${col} <> ${json}`;
      case 'contains':
        return `(${col} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM json_each(${json}) p WHERE p.value NOT IN (SELECT j.value FROM json_each(${col}) j)))`;
      case 'not_contains':
        return `(${col} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM json_each(${col}) j WHERE j.value IN (SELECT p.value FROM json_each(${json}) p)))`;
      case 'contains_nocase':
      case 'not_contains_nocase': {
        // graph-node: `[not] exists (select 1 from unnest(col) as elem where elem ilike any(values))`,
        // each value a pattern, so a null list has no match and is not containing
        for (const pattern of value as string[]) checkLikePattern(pattern);
        const matches = `EXISTS (SELECT 1 FROM json_each(${col}) j, json_each(${json}) p WHERE j.value LIKE p.value ESCAPE '\\')`;
        return entry.op === 'contains_nocase' ? matches : `NOT ${matches}`;
      }
      default:
        throw new QueryError(`Filter not supported: \`${entry.key}\``);
    }
  }

  /** The expression `orderBy` (one checkOrderBy allows) sorts by before the id; null when it is the id itself. */
  sortKey(table: TableLayout, alias: string, orderBy: string): SortKey | null {
    const value = this.model.orderBy.get(table.entity.name)!.get(orderBy);
    if (!value) throw new QueryError(`Type \`${table.entity.name}\` has no field \`${orderBy}\``);
    if (value.field.name === 'id' && !value.child) return null;
    return {
      expr: this.sortExpression(table, alias, value),
      nullable: value.child !== undefined || !value.field.nonNull,
    };
  }

  private sortExpression(table: TableLayout, alias: string, value: OrderByValue): string {
    const field = value.field;
    if (!value.child) {
      const column = table.byField.get(field.name)!;
      return `${alias}.${column.keySql ?? column.sql}`;
    }
    // `<ref>__id` too reads the referenced entity, not the reference: graph-node joins the entity
    // at the block (ChildKey::Id), so a reference to one missing then sorts as null. On an
    // interface, the referenced entity is in one implementer's table
    const picks = tablesOf(this.model, field.typeName).map((childTable) =>
      this.childSortValue(table, alias, value, childTable),
    );
    if (picks.length === 0) return 'NULL';
    return picks.length === 1 ? picks[0]! : `COALESCE(${picks.join(', ')})`;
  }

  private childSortValue(
    table: TableLayout,
    alias: string,
    value: OrderByValue,
    childTable: TableLayout,
  ): string {
    const field = value.field;
    const childColumn = childTable.byField.get(value.child!.name);
    if (!childColumn) {
      throw new QueryError(`Ordering by \`${value.name}\` is not supported`);
    }
    const c = this.alias();
    const pick = `${c}.${childColumn.keySql ?? childColumn.sql}`;
    if (field.derivedFrom !== undefined) {
      const back = childTable.byField.get(field.derivedFrom);
      if (!back || back.list) throw new QueryError(`Ordering by \`${value.name}\` is not supported`);
      return `(SELECT ${pick} FROM ${childTable.sql} ${c} WHERE ${c}.${back.sql} = ${alias}."id" AND ${blockRange(c, this.block)} ORDER BY ${c}."id" LIMIT 1)`;
    }
    // the referenced entity's version at the block, by a seek; null when it has none then
    const column = table.byField.get(field.name)!;
    const visible = `CASE WHEN ${c}."__to" > ${this.block} THEN ${pick} END`;
    return `(${newestVersion(childTable, c, visible, `${alias}.${column.sql}`, this.block)})`;
  }
}

/**
 * graph-node orders by scalar values only (query.rs build_order_by, ast.rs get_field_value_type):
 * an `orderBy` naming a list, an enum or an entity (a reference or a derived field), directly or as
 * the `<field>__<child>` child, is its error, naming the type the field belongs to.
 */
export function checkOrderBy(model: QueryModel, typeName: string, orderBy: string | null | undefined): void {
  const value = orderBy ? model.orderBy.get(typeName)!.get(orderBy) : undefined;
  if (!value) return;
  const field = value.child ?? value.field;
  if (field.list || field.kind === 'Enum' || field.kind === 'Entity') {
    const owner = value.child ? value.field.typeName : typeName;
    throw new QueryError(`Ordering by \`${field.name}\` is not supported for type \`${owner}\``);
  }
}

interface SortKey {
  expr: string;
  /** whether NULLs need placing: last ascending, first descending, as in Postgres */
  nullable: boolean;
}

/** ORDER BY terms: the sort key, then the id, both in `dir`. */
function orderTerms(key: SortKey | null, id: string, dir: 'ASC' | 'DESC'): string {
  if (!key) return `${id} ${dir}`;
  // a non-null column needs no NULL placement, which also lets an index on it serve the order;
  // SQLite sorts NULLs first ascending, and a key named in one term is computed once per row
  if (!key.nullable) return `${key.expr} ${dir}, ${id} ${dir}`;
  return `${key.expr} ${dir} NULLS ${dir === 'ASC' ? 'LAST' : 'FIRST'}, ${id} ${dir}`;
}

/** A compiled query's parameters, refused when SQLite could not take them all, with what to do instead. */
function checkedParams(params: unknown[]): unknown[] {
  if (params.length > MAX_SQL_PARAMETERS) {
    throw new QueryError(
      `The filter holds ${params.length} values, more than the ${MAX_SQL_PARAMETERS} one query can take: give long lists of values to \`_in\` or \`_not_in\` (a list counts as one), or split the query`,
    );
  }
  return params;
}

function rangeError(name: string, value: number, max: number): QueryError {
  return new QueryError(`The \`${name}\` argument must be between 0 and ${max}, but is ${value}`);
}

/** Restricts a collection further (a nested collection's link to its parent), given a table's alias. */
export type CollectionScope = (alias: string, table: TableLayout) => SqlFragment;

/**
 * first and skip, checked as graph-node's build_range checks them: `first` must be positive (its
 * message says 0 all the same), `skip` not negative (a GraphQL Int never exceeds its default cap).
 */
function pageOf(args: CollectionArgs): { first: number; skip: number } {
  const first = args.first ?? 100;
  const skip = args.skip ?? 0;
  if (first <= 0 || first > MAX_FIRST) throw rangeError('first', first, MAX_FIRST);
  if (skip < 0) throw rangeError('skip', skip, MAX_SKIP);
  return { first, skip };
}

/** The WHERE conditions of one table's SELECT in a collection; parameters go to the compiler in text order. */
function conditions(
  compiler: Compiler,
  table: TableLayout,
  alias: string,
  args: CollectionArgs,
  block: number,
  scope: CollectionScope | undefined,
): string {
  const conds = [blockRange(alias, block)];
  if (scope) conds.push(compiler.fragment(scope(alias, table)));
  if (args.where) {
    const w = compiler.where(table, alias, args.where, false);
    if (w) conds.push(w);
  }
  return conds.join(' AND ');
}

const directionOf = (args: CollectionArgs): 'ASC' | 'DESC' =>
  args.orderBy && args.orderDirection === 'desc' ? 'DESC' : 'ASC';

/** The SELECT of a collection field of an entity type at `block`. */
export function compileCollection(
  model: QueryModel,
  table: TableLayout,
  args: CollectionArgs,
  block: number,
  scope?: CollectionScope,
): SqlFragment {
  const { first, skip } = pageOf(args);
  const compiler = new Compiler(model, block);
  const alias = compiler.alias();
  const where = conditions(compiler, table, alias, args, block, scope);
  const key = args.orderBy ? compiler.sortKey(table, alias, args.orderBy) : null;
  const order = orderTerms(key, `${alias}."id"`, directionOf(args));
  return {
    sql: `SELECT ${alias}.* FROM ${table.sql} ${alias} WHERE ${where} ORDER BY ${order} LIMIT ${first} OFFSET ${skip}`,
    params: checkedParams(compiler.params),
  };
}

/**
 * The SELECT of a collection field of an interface at `block`: the UNION ALL of each implementing
 * table's matches, ordered and paged as one. Its rows are `__part` (the index of the table in
 * `tables`) and `__vid`, which compileByVids turns into the entities.
 */
export function compileInterfaceCollection(
  model: QueryModel,
  tables: readonly TableLayout[],
  args: CollectionArgs,
  block: number,
  scope?: CollectionScope,
): SqlFragment {
  const { first, skip } = pageOf(args);
  const compiler = new Compiler(model, block);
  // every implementer has the interface's fields, so the key is the id for all of them or for none
  let unionKey: SortKey | null = null;
  const parts = tables.map((table, part) => {
    const alias = compiler.alias();
    // the sort key comes first in the text, so it is compiled before the conditions
    const key = args.orderBy ? compiler.sortKey(table, alias, args.orderBy) : null;
    if (key) unionKey = { expr: '"__key"', nullable: key.nullable };
    const keyColumn = key ? `, ${key.expr} AS "__key"` : '';
    const where = conditions(compiler, table, alias, args, block, scope);
    return `SELECT ${part} AS "__part", ${alias}."__vid" AS "__vid", ${alias}."id" AS "__id"${keyColumn} FROM ${table.sql} ${alias} WHERE ${where}`;
  });
  // an interface nothing implements has nothing to list
  if (parts.length === 0) return { sql: 'SELECT NULL AS "__part", NULL AS "__vid" WHERE 0', params: [] };
  const order = orderTerms(unionKey, '"__id"', directionOf(args));
  return {
    sql: `SELECT "__part", "__vid" FROM (${parts.join(' UNION ALL ')}) ORDER BY ${order} LIMIT ${first} OFFSET ${skip}`,
    params: checkedParams(compiler.params),
  };
}

/** The versions with the given `__vid`s (as many placeholders as `count`). */
export function compileByVids(table: TableLayout, count: number): string {
  return `SELECT * FROM ${table.sql} WHERE "__vid" IN (${new Array<string>(count).fill('?').join(', ')})`;
}

/** The version of one entity visible at `block`. */
export function compileById(table: TableLayout, block: number): string {
  return `SELECT * FROM (${newestVersion(table, 't0', 't0.*', '?', block)}) WHERE "__to" > ${block}`;
}
