// The entity model of a subgraph's schema.graphql, parsed once and shared by every part of
// the embedded indexer: host-side validation of store.set, SQLite table layout, and the
// graph-node-dialect query API all read entity and field types from here. What graph-node serves
// and the embedded indexer does not (interfaces, timeseries and aggregations, fulltext search) is
// refused here, naming it, rather than ignored.
import { Kind, parse, type DocumentNode, type FieldDefinitionNode, type TypeNode } from 'graphql';

export type ScalarKind =
  | 'ID'
  | 'String'
  | 'Bytes'
  | 'BigInt'
  | 'BigDecimal'
  | 'Int'
  | 'Int8'
  | 'Boolean'
  | 'Timestamp';

export interface FieldModel {
  name: string;
  /** scalar kind, 'Enum' or 'Entity' (a reference to another entity by id) */
  kind: ScalarKind | 'Enum' | 'Entity';
  /** the enum or entity type name, when kind is 'Enum' or 'Entity' */
  typeName: string;
  list: boolean;
  nonNull: boolean;
  /** for lists: whether the items are non-null */
  itemNonNull: boolean;
  /** set for @derivedFrom fields, which are never stored */
  derivedFrom: string | undefined;
}

export interface EntityTypeModel {
  name: string;
  immutable: boolean;
  idKind: 'String' | 'Bytes' | 'Int8';
  /** every field in declaration order, `id` included */
  fields: Map<string, FieldModel>;
}

export interface SubgraphSchema {
  entities: Map<string, EntityTypeModel>;
  enums: Map<string, string[]>;
}

const scalarKinds = new Set<string>([
  'ID',
  'String',
  'Bytes',
  'BigInt',
  'BigDecimal',
  'Int',
  'Int8',
  'Boolean',
  'Timestamp',
]);

interface Unwrapped {
  name: string;
  list: boolean;
  nonNull: boolean;
  itemNonNull: boolean;
}

function unwrapType(type: TypeNode): Unwrapped {
  let nonNull = false;
  let list = false;
  let itemNonNull = false;
  let t = type;
  if (t.kind === Kind.NON_NULL_TYPE) {
    nonNull = true;
    t = t.type;
  }
  if (t.kind === Kind.LIST_TYPE) {
    list = true;
    t = t.type;
    if (t.kind === Kind.NON_NULL_TYPE) {
      itemNonNull = true;
      t = t.type;
    }
  }
  if (t.kind !== Kind.NAMED_TYPE) throw new Error('nested list types are not supported in subgraph schemas');
  return { name: t.name.value, list, nonNull, itemNonNull };
}

function derivedFromField(field: FieldDefinitionNode): string | undefined {
  const directive = field.directives?.find((d) => d.name.value === 'derivedFrom');
  const arg = directive?.arguments?.find((a) => a.name.value === 'field');
  return arg && arg.value.kind === Kind.STRING ? arg.value.value : undefined;
}

/** Parses a subgraph schema.graphql into its entity and enum model. */
/** Throws on the first schema feature the embedded indexer does not support. */
function refuseUnsupported(document: DocumentNode): void {
  const unsupported = (what: string) =>
    new Error(`${what} is not supported by the embedded indexer (graph-node supports it)`);
  for (const def of document.definitions) {
    if (def.kind === Kind.INTERFACE_TYPE_DEFINITION)
      throw unsupported(`interface ${def.name.value}: an interface in a subgraph schema`);
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION) continue;
    for (const directive of def.directives ?? []) {
      const name = directive.name.value;
      if (name === 'aggregation') throw unsupported(`type ${def.name.value}: an aggregation (@aggregation)`);
      if (name === 'fulltext') throw unsupported(`type ${def.name.value}: fulltext search (@fulltext)`);
      const timeseries = directive.arguments?.find((a) => a.name.value === 'timeseries')?.value;
      if (name === 'entity' && timeseries?.kind === Kind.BOOLEAN && timeseries.value)
        throw unsupported(`type ${def.name.value}: a timeseries entity (@entity(timeseries: true))`);
    }
  }
}

export function parseSubgraphSchema(sdl: string): SubgraphSchema {
  const document = parse(sdl);
  refuseUnsupported(document);
  const enums = new Map<string, string[]>();
  for (const def of document.definitions) {
    if (def.kind === Kind.ENUM_TYPE_DEFINITION) {
      enums.set(
        def.name.value,
        (def.values ?? []).map((v) => v.name.value),
      );
    }
  }
  const entityNames = new Set(
    document.definitions
      .filter((d) => d.kind === Kind.OBJECT_TYPE_DEFINITION)
      .filter((d) => d.directives?.some((x) => x.name.value === 'entity'))
      .map((d) => (d.kind === Kind.OBJECT_TYPE_DEFINITION ? d.name.value : '')),
  );
  const entities = new Map<string, EntityTypeModel>();
  for (const def of document.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION || !entityNames.has(def.name.value)) continue;
    const entityDirective = def.directives?.find((d) => d.name.value === 'entity');
    const immutableArg = entityDirective?.arguments?.find((a) => a.name.value === 'immutable');
    const immutable = immutableArg?.value.kind === Kind.BOOLEAN ? immutableArg.value.value : false;
    const fields = new Map<string, FieldModel>();
    for (const field of def.fields ?? []) {
      const t = unwrapType(field.type);
      let kind: FieldModel['kind'];
      if (scalarKinds.has(t.name)) kind = t.name as ScalarKind;
      else if (enums.has(t.name)) kind = 'Enum';
      else if (entityNames.has(t.name)) kind = 'Entity';
      else throw new Error(`${def.name.value}.${field.name.value}: unknown type ${t.name}`);
      fields.set(field.name.value, {
        name: field.name.value,
        kind,
        typeName: t.name,
        list: t.list,
        nonNull: t.nonNull,
        itemNonNull: t.itemNonNull,
        derivedFrom: derivedFromField(field),
      });
    }
    const id = fields.get('id');
    if (!id) throw new Error(`entity ${def.name.value} has no id field`);
    const idKind = id.kind === 'Bytes' ? 'Bytes' : id.kind === 'Int8' ? 'Int8' : 'String';
    entities.set(def.name.value, { name: def.name.value, immutable, idKind, fields });
  }
  return { entities, enums };
}
