// Which `where` keys and `orderBy` values exist for an entity type or an interface, following
// graph-node's api.rs (field_filter_ops, field_list_filter_input_values, field_enum_values). The
// GraphQL schema is generated from this list and the SQL compiler interprets keys through it, so a
// key either exists in both or in neither.
import {
  referencedIdKind,
  type EntityTypeModel,
  type FieldModel,
  type InterfaceModel,
  type SubgraphSchema,
} from '../subgraph-schema.ts';

/** What filters and orderings are generated from: an entity type's or an interface's fields. */
export type QueryableType = EntityTypeModel | InterfaceModel;

/** The types the query API serves: the entity types, then the interfaces. */
export function queryableTypes(schema: SubgraphSchema): QueryableType[] {
  return [...schema.entities.values(), ...schema.interfaces.values()];
}

export type FilterOp =
  | ''
  | 'not'
  | 'gt'
  | 'lt'
  | 'gte'
  | 'lte'
  | 'in'
  | 'not_in'
  | 'contains'
  | 'contains_nocase'
  | 'not_contains'
  | 'not_contains_nocase'
  | 'starts_with'
  | 'starts_with_nocase'
  | 'not_starts_with'
  | 'not_starts_with_nocase'
  | 'ends_with'
  | 'ends_with_nocase'
  | 'not_ends_with'
  | 'not_ends_with_nocase';

export interface FilterEntry {
  key: string;
  field: FieldModel;
  /** 'child' is the nested filter `<field>_` on an entity reference or derived list */
  op: FilterOp | 'child';
  /** GraphQL type name of the value (a scalar, an enum, or `<Entity>_filter` for 'child') */
  typeName: string;
  /** the value is a list `[T!]` */
  listValue: boolean;
  /** the field holds a list, so ops apply to the whole list */
  listField: boolean;
}

export interface OrderByValue {
  name: string;
  field: FieldModel;
  /** for `<field>__<child>`: the field of the referenced entity */
  child: FieldModel | undefined;
}

const comparison: FilterOp[] = ['', 'not', 'gt', 'lt', 'gte', 'lte', 'in', 'not_in'];
const stringOps: FilterOp[] = [
  ...comparison,
  'contains',
  'contains_nocase',
  'not_contains',
  'not_contains_nocase',
  'starts_with',
  'starts_with_nocase',
  'not_starts_with',
  'not_starts_with_nocase',
  'ends_with',
  'ends_with_nocase',
  'not_ends_with',
  'not_ends_with_nocase',
];

function scalarOps(typeName: string): FilterOp[] {
  switch (typeName) {
    case 'Boolean':
      return ['', 'not', 'in', 'not_in'];
    case 'Bytes':
      return [...comparison, 'contains', 'not_contains'];
    case 'ID':
    case 'BigInt':
    case 'BigDecimal':
    case 'Int':
    case 'Int8':
    case 'Timestamp':
      return comparison;
    case 'String':
      return stringOps;
    default:
      return ['', 'not'];
  }
}

/** graph-node filters a reference by its target's id as String (String and Bytes ids) or Int (Int8 ids). */
function referenceScalar(schema: SubgraphSchema, field: FieldModel): string {
  return referencedIdKind(schema, field.typeName) === 'Int8' ? 'Int' : 'String';
}

function entry(field: FieldModel, op: FilterOp, typeName: string, listField: boolean): FilterEntry {
  const key = op === '' ? field.name : `${field.name}_${op}`;
  const listValue = listField || op === 'in' || op === 'not_in';
  return { key, field, op, typeName, listValue, listField };
}

function childEntry(field: FieldModel): FilterEntry {
  return {
    key: `${field.name}_`,
    field,
    op: 'child',
    typeName: `${field.typeName}_filter`,
    listValue: false,
    listField: false,
  };
}

export function filterEntries(schema: SubgraphSchema, entity: QueryableType): FilterEntry[] {
  const out: FilterEntry[] = [];
  for (const field of entity.fields.values()) {
    if (field.list) {
      if (field.derivedFrom === undefined) {
        const reference = field.kind === 'Entity';
        const typeName = reference ? referenceScalar(schema, field) : field.typeName;
        // api.rs field_list_supports_nocase: Strings, and references to String ids only
        const nocase = reference
          ? referencedIdKind(schema, field.typeName) === 'String'
          : typeName === 'String';
        const ops: FilterOp[] = nocase
          ? ['', 'not', 'contains', 'contains_nocase', 'not_contains', 'not_contains_nocase']
          : ['', 'not', 'contains', 'not_contains'];
        for (const op of ops) out.push(entry(field, op, typeName, true));
      }
      if (field.kind === 'Entity') out.push(childEntry(field));
    } else if (field.kind === 'Entity') {
      if (field.derivedFrom === undefined) {
        const typeName = referenceScalar(schema, field);
        for (const op of scalarOps(typeName)) out.push(entry(field, op, typeName, false));
      }
      out.push(childEntry(field));
    } else if (field.kind === 'Enum') {
      for (const op of ['', 'not', 'in', 'not_in'] as FilterOp[])
        out.push(entry(field, op, field.typeName, false));
    } else {
      for (const op of scalarOps(field.typeName)) out.push(entry(field, op, field.typeName, false));
    }
  }
  return out;
}

export function orderByValues(schema: SubgraphSchema, entity: QueryableType): OrderByValue[] {
  const out: OrderByValue[] = [];
  for (const field of entity.fields.values()) {
    out.push({ name: field.name, field, child: undefined });
    if (field.kind === 'Entity' && !field.list) {
      const target = schema.entities.get(field.typeName) ?? schema.interfaces.get(field.typeName);
      for (const child of target?.fields.values() ?? []) {
        if (child.list || child.kind === 'Entity') continue;
        out.push({ name: `${field.name}__${child.name}`, field, child });
      }
    }
  }
  return out;
}
