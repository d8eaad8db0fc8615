// The entity model of a subgraph's schema.graphql, parsed once and shared by every part of
// the embedded indexer: host-side validation of store.set, SQLite table layout, and the
// graph-node-dialect query API all read entity and field types from here. Interfaces are checked
// with graph-node's rules and wording (each implementer has every interface field, all implementers
// share one id type). What graph-node serves and the embedded indexer does not (timeseries and
// aggregations, fulltext search) is refused here, naming it, rather than ignored.
import {
  Kind,
  parse,
  print,
  type DirectiveNode,
  type DocumentNode,
  type EnumTypeDefinitionNode,
  type FieldDefinitionNode,
  type InterfaceTypeDefinitionNode,
  type ObjectTypeDefinitionNode,
  type TypeNode,
} from 'graphql';
import { LATEST_SPEC_VERSION } from './runtime/manifest.ts';
import { SCALARS, validateSchemaDocument } from './schema-validation.ts';

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
  /** scalar kind, 'Enum' or 'Entity' (a reference by id to an entity, or to any implementer of an interface) */
  kind: ScalarKind | 'Enum' | 'Entity';
  /** the enum, entity or interface type name, when kind is 'Enum' or 'Entity' */
  typeName: string;
  list: boolean;
  nonNull: boolean;
  /** for lists: whether the items are non-null */
  itemNonNull: boolean;
  /** set for @derivedFrom fields, which are never stored */
  derivedFrom: string | undefined;
  /** its description in schema.graphql, which the query API carries as graph-node's does */
  description: string | undefined;
}

/**
 * A field's type as schema.graphql writes it (`BigInt!`, `[NavRecord!]!`), as graph-node's errors
 * name it: a store.set of the wrong type and a query filter of the wrong type both quote it.
 */
export function fieldTypeText(field: FieldModel): string {
  const inner = field.list ? `[${field.typeName}${field.itemNonNull ? '!' : ''}]` : field.typeName;
  return field.nonNull ? `${inner}!` : inner;
}

export type IdKind = 'String' | 'Bytes' | 'Int8';

export interface EntityTypeModel {
  name: string;
  immutable: boolean;
  /**
   * `@entity(immutable: true, skipDuplicates: true)`: a later block's insert, overwrite or removal
   * of an entity an earlier block inserted is dropped rather than failing the subgraph, so the first
   * version stays (graph-node's `ON CONFLICT DO NOTHING`)
   */
  skipDuplicates: boolean;
  idKind: IdKind;
  /** every field in declaration order, `id` included */
  fields: Map<string, FieldModel>;
  /** the interfaces it implements */
  interfaces: string[];
  /** the other entity types that implement one of its interfaces: no two of them may hold the same id */
  sharesIdsWith: string[];
  description: string | undefined;
}

export interface InterfaceModel {
  name: string;
  /** the interface's own fields in declaration order, `id` included */
  fields: Map<string, FieldModel>;
  /** the entity types implementing it, in schema order */
  implementers: string[];
  /** its implementers' id kind; String when nothing implements it, as graph-node assumes */
  idKind: IdKind;
  description: string | undefined;
}

export interface EnumModel {
  /** its values in declaration order */
  values: string[];
  description: string | undefined;
  /** each value's description, by value */
  valueDescriptions: ReadonlyMap<string, string | undefined>;
}

export interface SubgraphSchema {
  entities: Map<string, EntityTypeModel>;
  interfaces: Map<string, InterfaceModel>;
  enums: Map<string, EnumModel>;
}

/** The id kind of the entities a reference to `typeName` (an entity type or an interface) holds. */
export function referencedIdKind(schema: SubgraphSchema, typeName: string): IdKind {
  const target = schema.entities.get(typeName) ?? schema.interfaces.get(typeName);
  if (!target) throw new Error(`unknown entity type ${typeName}`);
  return target.idKind;
}

/** The entity types a reference to `typeName` may point at: the type itself, or an interface's implementers. */
export function referencedTypes(schema: SubgraphSchema, typeName: string): EntityTypeModel[] {
  const entity = schema.entities.get(typeName);
  if (entity) return [entity];
  const implementers = schema.interfaces.get(typeName)?.implementers;
  if (!implementers) throw new Error(`unknown entity type ${typeName}`);
  return implementers.map((name) => schema.entities.get(name)!);
}

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

/** A boolean argument of `@entity`, undefined when absent; any other value is graph-node's error. */
function entityFlag(directive: DirectiveNode | undefined, name: string): boolean | undefined {
  const value = directive?.arguments?.find((a) => a.name.value === name)?.value;
  if (value === undefined) return undefined;
  if (value.kind !== Kind.BOOLEAN)
    throw new Error(`The \`${name}\` argument of the @entity directive must be a boolean`);
  return value.value;
}

/** Throws on the first schema feature the embedded indexer does not support. */
function refuseUnsupported(document: DocumentNode): void {
  const unsupported = (what: string) =>
    new Error(`${what} is not supported by the embedded indexer (graph-node supports it)`);
  for (const def of document.definitions) {
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

/**
 * graph-node's validate_interface_implementation: every interface field exists in the object with
 * the same type, as written (`[Note!]!`), and its error lists the missing ones.
 */
function checkImplementation(object: ObjectTypeDefinitionNode, intf: InterfaceTypeDefinitionNode): void {
  const missing = (intf.fields ?? []).filter(
    (i) =>
      !(object.fields ?? []).some((o) => o.name.value === i.name.value && print(o.type) === print(i.type)),
  );
  if (missing.length > 0) {
    throw new Error(
      `Entity type \`${object.name.value}\` does not satisfy interface \`${intf.name.value}\` because it is missing the following fields: ${missing.map((f) => `${f.name.value}: ${print(f.type)}`).join(', ')}`,
    );
  }
}

function idKindOf(fields: Map<string, FieldModel>, typeName: string): IdKind {
  const id = fields.get('id');
  if (!id) throw new Error(`entity ${typeName} has no id field`);
  return id.kind === 'Bytes' ? 'Bytes' : id.kind === 'Int8' ? 'Int8' : 'String';
}

/**
 * Parses a subgraph schema.graphql into its entity, interface and enum model, validated as graph-node
 * validates it for a manifest of `specVersion` (the latest when there is no manifest).
 */
export function parseSubgraphSchema(sdl: string, specVersion = LATEST_SPEC_VERSION): SubgraphSchema {
  const document = parse(sdl);
  refuseUnsupported(document);
  validateSchemaDocument(document, specVersion);
  const definitions = sortDefinitions(document);
  const entities = new Map(
    definitions.entities.map((def) => [def.name.value, entityModel(def, definitions)] as const),
  );
  const interfaces = new Map<string, InterfaceModel>();
  for (const [name, def] of definitions.interfaces)
    interfaces.set(name, interfaceModel(def, entities, definitions));
  return { entities, interfaces, enums: definitions.enums };
}

/** A schema's definitions by kind: what a field's type may name. */
interface SchemaDefinitions {
  enums: Map<string, EnumModel>;
  interfaces: Map<string, InterfaceTypeDefinitionNode>;
  /** the object types with `@entity`, in schema order */
  entities: ObjectTypeDefinitionNode[];
  entityNames: Set<string>;
}

function sortDefinitions(document: DocumentNode): SchemaDefinitions {
  const enums = new Map<string, EnumModel>();
  const interfaces = new Map<string, InterfaceTypeDefinitionNode>();
  const entities: ObjectTypeDefinitionNode[] = [];
  for (const def of document.definitions) {
    if (def.kind === Kind.ENUM_TYPE_DEFINITION) enums.set(def.name.value, enumModel(def));
    else if (def.kind === Kind.INTERFACE_TYPE_DEFINITION) interfaces.set(def.name.value, def);
    else if (
      def.kind === Kind.OBJECT_TYPE_DEFINITION &&
      def.directives?.some((d) => d.name.value === 'entity')
    )
      entities.push(def);
  }
  return { enums, interfaces, entities, entityNames: new Set(entities.map((d) => d.name.value)) };
}

function enumModel(def: EnumTypeDefinitionNode): EnumModel {
  const values = def.values ?? [];
  return {
    values: values.map((v) => v.name.value),
    description: def.description?.value,
    valueDescriptions: new Map(values.map((v) => [v.name.value, v.description?.value])),
  };
}

/** An `@entity` type, its flags and interfaces checked with graph-node's rules and wording. */
function entityModel(def: ObjectTypeDefinitionNode, definitions: SchemaDefinitions): EntityTypeModel {
  const name = def.name.value;
  const entityDirective = def.directives?.find((d) => d.name.value === 'entity');
  const immutable = entityFlag(entityDirective, 'immutable') ?? false;
  const skipDuplicates = entityFlag(entityDirective, 'skipDuplicates') ?? false;
  if (skipDuplicates && !immutable) {
    throw new Error(
      `Entity type \`${name}\` has skipDuplicates: true but is not immutable; skipDuplicates requires immutable: true`,
    );
  }
  const interfaces = (def.interfaces ?? []).map((i) => i.name.value);
  for (const interfaceName of interfaces) {
    const intf = definitions.interfaces.get(interfaceName);
    if (!intf) throw new Error(`Interface \`${interfaceName}\` not defined`);
    checkImplementation(def, intf);
  }
  const fields = fieldsOf(def, definitions);
  return {
    name,
    immutable,
    skipDuplicates,
    idKind: idKindOf(fields, name),
    fields,
    interfaces,
    sharesIdsWith: [],
    description: def.description?.value,
  };
}

/**
 * An interface and its implementers, which must share one id type; each implementer learns the
 * others it shares ids with (its `sharesIdsWith`).
 */
function interfaceModel(
  def: InterfaceTypeDefinitionNode,
  entities: ReadonlyMap<string, EntityTypeModel>,
  definitions: SchemaDefinitions,
): InterfaceModel {
  const name = def.name.value;
  const implementers = [...entities.values()].filter((e) => e.interfaces.includes(name));
  const idKinds = [...new Set(implementers.map((e) => e.idKind))];
  if (idKinds.length > 1) {
    throw new Error(
      `Implementors of interface \`${name}\` use different id types \`${idKinds.join(', ')}\`. They must all use the same type`,
    );
  }
  const implementerNames = implementers.map((e) => e.name);
  for (const entity of implementers) {
    for (const other of implementerNames)
      if (other !== entity.name && !entity.sharesIdsWith.includes(other)) entity.sharesIdsWith.push(other);
  }
  return {
    name,
    fields: fieldsOf(def, definitions),
    implementers: implementerNames,
    idKind: idKinds[0] ?? 'String',
    description: def.description?.value,
  };
}

/** The fields of an entity type or interface, in declaration order. */
function fieldsOf(
  def: ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode,
  definitions: SchemaDefinitions,
): Map<string, FieldModel> {
  const fields = new Map<string, FieldModel>();
  for (const field of def.fields ?? []) {
    const t = unwrapType(field.type);
    fields.set(field.name.value, {
      name: field.name.value,
      kind: fieldKind(t.name, definitions, `${def.name.value}.${field.name.value}`),
      typeName: t.name,
      list: t.list,
      nonNull: t.nonNull,
      itemNonNull: t.itemNonNull,
      derivedFrom: derivedFromField(field),
      description: field.description?.value,
    });
  }
  return fields;
}

/** What a field's named type `typeName` is: a scalar, an enum or an entity reference. */
function fieldKind(typeName: string, definitions: SchemaDefinitions, field: string): FieldModel['kind'] {
  if (SCALARS.has(typeName)) return typeName as ScalarKind;
  if (definitions.enums.has(typeName)) return 'Enum';
  if (definitions.entityNames.has(typeName) || definitions.interfaces.has(typeName)) return 'Entity';
  throw new Error(`${field}: unknown type ${typeName}`);
}
