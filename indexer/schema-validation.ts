// graph-node's validations of a subgraph schema's document (graph/src/schema/input/mod.rs), in its
// words, for what the entity model in subgraph-schema.ts does not check while it is built: types
// without @entity, reserved type names, id field types, undefined field types, @derivedFrom
// targets, and the `_Schema_` type. A schema graph-node would refuse to deploy does not start here
// either, rather than loading with a different meaning (a type left out, a derived field stored).
import {
  Kind,
  type DocumentNode,
  type FieldDefinitionNode,
  type InterfaceTypeDefinitionNode,
  type ObjectTypeDefinitionNode,
  type TypeNode,
} from 'graphql';
import { versionAtLeast } from './runtime/manifest.ts';

/** The scalars a field may have, as graph-node's ValueType names them. */
export const SCALARS: ReadonlySet<string> = new Set([
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

/** The type `_Schema_` holds schema-wide directives (@fulltext) and nothing else. */
const SCHEMA_TYPE = '_Schema_';

function baseType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : baseType(type.type);
}

function hasDirective(node: { directives?: readonly { name: { value: string } }[] }, name: string): boolean {
  return node.directives?.some((d) => d.name.value === name) ?? false;
}

/** Every check at once, so the first error found is reported, in graph-node's order. */
export function validateSchemaDocument(document: DocumentNode, specVersion: string): void {
  const objects = document.definitions.filter(
    (d): d is ObjectTypeDefinitionNode => d.kind === Kind.OBJECT_TYPE_DEFINITION,
  );
  const interfaces = document.definitions.filter(
    (d): d is InterfaceTypeDefinitionNode => d.kind === Kind.INTERFACE_TYPE_DEFINITION,
  );
  const entities = objects.filter((o) => hasDirective(o, 'entity'));
  checkNoExtraTypes(objects);
  checkDerivedFrom(entities, [...objects, ...interfaces], interfaces);
  checkSchemaType(objects);
  checkReservedNames(document, [...objects, ...interfaces]);
  checkIds(entities, specVersion);
  checkFieldTypes(document, [...objects, ...interfaces]);
}

function checkNoExtraTypes(objects: readonly ObjectTypeDefinitionNode[]): void {
  const extra = objects
    .filter(
      (o) => !hasDirective(o, 'entity') && !hasDirective(o, 'aggregation') && o.name.value !== SCHEMA_TYPE,
    )
    .map((o) => o.name.value);
  if (extra.length > 0)
    throw new Error(`@entity directive missing on the following types: \`${extra.join(', ')}\``);
}

function checkSchemaType(objects: readonly ObjectTypeDefinitionNode[]): void {
  const schemaType = objects.find((o) => o.name.value === SCHEMA_TYPE);
  if (!schemaType) return;
  if ((schemaType.fields ?? []).length > 0)
    throw new Error('_Schema_ type is only for @fulltext and must not have any fields');
  if ((schemaType.directives ?? []).some((d) => d.name.value !== 'fulltext'))
    throw new Error('The _Schema_ type only allows @fulltext directives');
}

function checkReservedNames(
  document: DocumentNode,
  types: readonly (ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode)[],
): void {
  const named = new Set(document.definitions.flatMap((d) => ('name' in d && d.name ? [d.name.value] : [])));
  const reserved = [
    ...['Boolean', 'ID', 'Int', 'BigDecimal', 'String', 'Bytes', 'BigInt', 'Query', 'Subscription'],
    ...types.map((t) => `${t.name.value}_filter`),
    ...types.map((t) => `${t.name.value}_orderBy`),
  ].filter((name) => named.has(name));
  if (reserved.length > 0)
    throw new Error(`The following type names are reserved: \`${reserved.join(', ')}\``);
}

function checkIds(entities: readonly ObjectTypeDefinitionNode[], specVersion: string): void {
  for (const entity of entities) {
    const id = entity.fields?.find((f) => f.name.value === 'id');
    if (!id) throw new Error(`Type ${entity.name.value} is missing an \`id\` field`);
    const type = baseType(id.type);
    if (type === 'Int8' && !versionAtLeast(specVersion, '1.1.0'))
      throw new Error(
        `Using Int8 as the type for the \`id\` field is not supported with spec version ${specVersion}; please migrate the subgraph to the latest version`,
      );
    if (!['ID', 'String', 'Bytes', 'Int8'].includes(type))
      throw new Error(`Entity type ${entity.name.value} uses illegal type ${type} for id column`);
  }
}

function checkFieldTypes(
  document: DocumentNode,
  types: readonly (ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode)[],
): void {
  const known = new Set([
    ...types.map((t) => t.name.value),
    ...document.definitions.flatMap((d) => (d.kind === Kind.ENUM_TYPE_DEFINITION ? [d.name.value] : [])),
  ]);
  for (const type of types) {
    for (const field of type.fields ?? []) {
      const base = baseType(field.type);
      if (!SCALARS.has(base) && !known.has(base))
        throw new Error(
          `Type \`${type.name.value}\`, field \`${field.name.value}\`: type \`${base}\` is not defined`,
        );
    }
  }
}

/**
 * graph-node's validate_derived_from: the directive names a field of the target entity type or
 * interface, and that field points back at the type (or at an interface the type implements that
 * declares the derived field), or is the target's `id`.
 */
function checkDerivedFrom(
  entities: readonly ObjectTypeDefinitionNode[],
  types: readonly (ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode)[],
  interfaces: readonly InterfaceTypeDefinitionNode[],
): void {
  const fieldsByType = new Map(types.map((t) => [t.name.value, t.fields ?? []]));
  for (const entity of entities) {
    for (const field of entity.fields ?? []) {
      const directive = field.directives?.find((d) => d.name.value === 'derivedFrom');
      if (!directive) continue;
      const invalid = (reason: string) =>
        new Error(
          `Field \`${field.name.value}\` in type \`${entity.name.value}\` has invalid @derivedFrom: ${reason}`,
        );
      const argument = directive.arguments?.find((a) => a.name.value === 'field')?.value;
      if (!argument) throw invalid('the @derivedFrom directive must have a `field` argument');
      if (argument.kind !== Kind.STRING) throw invalid('the @derivedFrom `field` argument must be a string');
      const targetType = baseType(field.type);
      const targetFields = fieldsByType.get(targetType);
      if (!targetFields) throw invalid('type must be an existing entity or interface');
      const target = targetFields.find((f: FieldDefinitionNode) => f.name.value === argument.value);
      if (!target) throw invalid(`field \`${argument.value}\` does not exist on type \`${targetType}\``);
      const backTo = baseType(target.type);
      // the interfaces of the entity that declare the derived field may be pointed at instead
      const viaInterfaces = (entity.interfaces ?? [])
        .map((i) => i.name.value)
        .filter((name) =>
          interfaces.some(
            (i) => i.name.value === name && (i.fields ?? []).some((f) => f.name.value === field.name.value),
          ),
        );
      if (backTo !== entity.name.value && target.name.value !== 'id' && !viaInterfaces.includes(backTo)) {
        const signatures = [entity.name.value, ...viaInterfaces].flatMap((n) => [
          n,
          `${n}!`,
          `[${n}!]`,
          `[${n}!]!`,
        ]);
        throw invalid(
          `field \`${target.name.value}\` on type \`${targetType}\` must have one of the following types: ${signatures.join(', ')}`,
        );
      }
    }
  }
}
