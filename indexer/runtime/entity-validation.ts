// graph-node's schema checks on an entity written by a mapping (Entity::validate and the id rules of
// store.set), with its error wording, plus a check graph-node leaves to Postgres: enum fields
// must hold one of the enum's values. Errors name the entity type, the id and the field.
import type { Entity, StoreValue } from '../store/entity.ts';
import { bytesToHex } from '../store/layout.ts';
import {
  fieldTypeText,
  referencedIdKind,
  type EntityTypeModel,
  type FieldModel,
  type SubgraphSchema,
} from '../subgraph-schema.ts';
import { decimalFromString, decimalToString } from './decimal.ts';

export class EntityValidationError extends Error {}

/** graph-node `Value` Display. */
export function displayValue(value: StoreValue): string {
  switch (value.kind) {
    case 'Null':
      return 'null';
    case 'Bytes':
      return bytesToHex(value.value);
    case 'List':
      return `[${value.value.map(displayValue).join(', ')}]`;
    case 'BigDecimal':
      return decimalToString(decimalFromString(value.value));
    default:
      return String(value.value);
  }
}

/** graph-node `Value::type_name`. */
export function valueTypeName(value: StoreValue): string {
  switch (value.kind) {
    case 'Bool':
      return 'Boolean';
    case 'List':
      return value.value.length > 0 ? `[${valueTypeName(value.value[0] as StoreValue)}]` : '[Any]';
    default:
      return value.kind;
  }
}

/** The store value kind a scalar field holds; references hold the referenced entity's id kind. */
function storedKind(schema: SubgraphSchema, field: FieldModel): StoreValue['kind'] {
  switch (field.kind) {
    case 'ID':
    case 'String':
    case 'Enum':
      return 'String';
    case 'Boolean':
      return 'Bool';
    case 'Entity':
      return referencedIdKind(schema, field.typeName);
    default:
      return field.kind;
  }
}

function assignable(value: StoreValue, kind: StoreValue['kind']): boolean {
  return value.kind === 'Null' || value.kind === kind;
}

/** A type's fields in schema order, as an array: validation walks them on every store.set. */
const fieldLists = new WeakMap<EntityTypeModel, FieldModel[]>();

function fieldsOf(type: EntityTypeModel): FieldModel[] {
  let fields = fieldLists.get(type);
  if (!fields) {
    fields = [...type.fields.values()];
    fieldLists.set(type, fields);
  }
  return fields;
}

/** How errors name an entity; built only when one is thrown, as validation runs on every store.set. */
function entityLabel(type: EntityTypeModel, id: string): string {
  return `Entity ${type.name}[${id}]`;
}

/** Entity::validate, in schema field order; `entity` is the merged entity without null fields. */
export function validateEntity(
  schema: SubgraphSchema,
  type: EntityTypeModel,
  id: string,
  entity: Entity,
): void {
  for (const field of fieldsOf(type)) {
    const value = entity.get(field.name);
    if (field.derivedFrom !== undefined) {
      if (value !== undefined)
        throw new EntityValidationError(
          `${entityLabel(type, id)}: field \`${field.name}\` is derived and cannot be set`,
        );
      continue;
    }
    if (value === undefined || value.kind === 'Null') {
      if (field.nonNull)
        throw new EntityValidationError(
          `${entityLabel(type, id)}: missing value for non-nullable field \`${field.name}\``,
        );
      continue;
    }
    const kind = storedKind(schema, field);
    if (field.list && value.kind === 'List') {
      value.value.forEach((element, index) => {
        if (!assignable(element, kind)) {
          throw new EntityValidationError(
            `${entityLabel(type, id)}: field \`${field.name}\` is of type ${fieldTypeText(field)}, but the value \`${displayValue(value)}\` contains a ${valueTypeName(element)} at index ${index}`,
          );
        }
      });
    }
    const ok = field.list ? value.kind === 'List' : assignable(value, kind);
    if (!ok) {
      throw new EntityValidationError(
        `${entityLabel(type, id)}: the value \`${displayValue(value)}\` for field \`${field.name}\` must have type ${fieldTypeText(field)} but has type ${valueTypeName(value)}`,
      );
    }
    if (field.kind === 'Enum') checkEnumValue(schema, entityLabel(type, id), field, value);
  }
}

function checkEnumValue(schema: SubgraphSchema, where: string, field: FieldModel, value: StoreValue): void {
  const allowed = schema.enums.get(field.typeName)?.values ?? [];
  const items = value.kind === 'List' ? value.value : [value];
  for (const item of items) {
    if (item.kind === 'String' && !allowed.includes(item.value)) {
      throw new EntityValidationError(
        `${where}: the value \`${item.value}\` for field \`${field.name}\` is not a value of enum ${field.typeName} (${allowed.join(', ')})`,
      );
    }
  }
}

/** apiVersion >= 0.0.8: setting fields the schema does not define is an error listing them sorted. */
export function checkUndefinedFields(type: EntityTypeModel, data: Entity): void {
  let allDefined = true;
  for (const name of data.keys()) allDefined &&= type.fields.has(name);
  if (allDefined) return;
  const unknown = [...data.keys()].filter((name) => !type.fields.has(name)).sort();
  throw new EntityValidationError(
    `Attempted to set undefined fields [${unknown.join(', ')}] for the entity type \`${type.name}\`. Make sure those fields are defined in the schema.`,
  );
}
