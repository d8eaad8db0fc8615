// store.get / get_in_block / set / remove with graph-node's semantics: `set` merges the given fields
// into the entity as the block sees it (a null value removes the field), checks undefined fields
// (apiVersion >= 0.0.8; earlier versions drop them) and the id, then validates the merged entity
// against the schema; immutable entities may be set again within the block that created them, in a
// later block only unchanged (graph-node's entity cache then writes nothing), and never removed.
// store.loadRelated lists the entities behind a @derivedFrom field as the block sees them.
// Ids are canonical strings: Bytes ids as lowercase 0x hex, Int8 ids as decimal.
// A file data source's handler may touch only the entity types its template lists, and an entity
// belongs to the causality region that created it (chain handlers, or one file data source): the
// others neither see it nor may write its id (graph-node's causality-region isolation).
// An interface is not a type store calls take, and two types sharing an interface may not hold the
// same id, as an interface's queries find its entities by id across their tables.
// The id `auto` asks for a generated one, unique in the subgraph (see generatedId).
import type { Entity, StoreValue } from '../store/entity.ts';
import { bytesToHex } from '../store/layout.ts';
import type { EntityTypeModel } from '../subgraph-schema.ts';
import { readEntity, writeEntity } from './asc-values.ts';
import {
  EntityValidationError,
  checkUndefinedFields,
  displayValue,
  validateEntity,
  valueTypeName,
} from './entity-validation.ts';
import { StoreAccessError, type HostEnv, type HostFunctions } from './host-context.ts';
import { versionAtLeast } from './manifest.ts';

/** graph-node's error for an interface named where a store call needs an entity type. */
function notAnObjectType(name: string): EntityValidationError {
  return new EntityValidationError(`expected \`${name}\` to refer to an object type but it's an interface`);
}

/** The schema's type `name`, if the running data source may touch it (graph-node's entity-type access). */
function entityType(env: HostEnv, name: string): EntityTypeModel {
  const type = env.runtime.schema.entities.get(name);
  if (!type) {
    if (env.runtime.schema.interfaces.has(name)) throw notAnObjectType(name);
    throw new EntityValidationError(`Entity type \`${name}\` is not defined in the schema`);
  }
  const ds = env.runtime.dataSource;
  if (ds?.file && !ds.mapping.entities.includes(name)) {
    throw new EntityValidationError(
      `entity type \`${name}\` is not on the 'entities' list for data source \`${ds.name}\`. Hint: Add \`${name}\` to the 'entities' list, which currently is: \`${ds.mapping.entities.join(', ')}\`.`,
    );
  }
  return type;
}

/** The key's id in canonical form, and as the store value the `id` field must hold. */
export function parseEntityId(type: EntityTypeModel, id: string): { key: string; value: StoreValue } {
  switch (type.idKind) {
    case 'Bytes': {
      const key = bytesIdKey(type, id);
      return { key, value: { kind: 'Bytes', value: Uint8Array.from(Buffer.from(key.slice(2), 'hex')) } };
    }
    case 'Int8': {
      if (!/^[+-]?[0-9]+$/.test(id))
        throw new EntityValidationError(`Entity ${type.name}: id \`${id}\` is not an Int8`);
      const n = BigInt(id);
      if (n !== BigInt.asIntN(64, n))
        throw new EntityValidationError(`Entity ${type.name}: id \`${id}\` is not an Int8`);
      return { key: n.toString(), value: { kind: 'Int8', value: n } };
    }
    default:
      return { key: id, value: { kind: 'String', value: id } };
  }
}

/**
 * A Bytes id as lowercase 0x hex, the form it is keyed by. Laxer than the store's rule (layout.ts
 * hexToBytes, block-write-buffer.ts): this is what a mapping may pass, and graph-node takes a Bytes
 * id with or without 0x, and refuses any other in these words; past here ids are canonical.
 */
function bytesIdKey(type: EntityTypeModel, id: string): string {
  const hex = id.startsWith('0x') ? id.slice(2) : id;
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new EntityValidationError(
      `Entity ${type.name}: id \`${id}\` is not valid hex for an id of type Bytes`,
    );
  }
  return `0x${hex.toLowerCase()}`;
}

/** Whether the `id` value a mapping set equals the id passed to store.set (`key`, canonical). */
function sameId(type: EntityTypeModel, given: StoreValue, key: string): boolean {
  switch (given.kind) {
    case 'Bytes':
      return type.idKind === 'Bytes' && bytesToHex(given.value) === key;
    case 'String':
      return type.idKind === 'String' && given.value === key;
    case 'Int8':
      return type.idKind === 'Int8' && given.value.toString() === key;
    default:
      return false;
  }
}

/** Runs a store call, marking its failures as store failures rather than mapping errors. */
function access<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw new StoreAccessError(error instanceof Error ? error.message : String(error), { cause: error });
  }
}

function writeKey(type: string, id: string): string {
  return `${type}\u0000${id}`;
}

/** Whether an apiVersion makes setting undefined fields an error, by version text. */
const strictByVersion = new Map<string, boolean>();

/** apiVersion 0.0.8 made setting undefined fields an error; earlier mappings have them dropped. */
function strictFields(env: HostEnv): boolean {
  const version = env.runtime.dataSource?.mapping.apiVersion;
  if (version === undefined) return true;
  let strict = strictByVersion.get(version);
  if (strict === undefined) {
    strict = versionAtLeast(version, '0.0.8');
    strictByVersion.set(version, strict);
  }
  return strict;
}

/**
 * graph-node's id for `store.set(type, "auto", …)`: the block number in the upper 32 bits and the
 * block's next sequence number in the lower ones, as an Int8 or as 8 bytes.
 */
function generatedId(env: HostEnv, type: EntityTypeModel): string {
  if (env.dataSource.file) {
    throw new EntityValidationError('Autogenerated IDs are only supported for onchain data sources');
  }
  const block = env.block.number;
  const sequence = BigInt(env.block.nextIdSequence());
  switch (type.idKind) {
    case 'Int8':
      return ((block << 32n) + sequence).toString();
    case 'Bytes':
      return `0x${block.toString(16).padStart(8, '0')}${sequence.toString(16).padStart(8, '0')}`;
    default:
      throw new EntityValidationError('String does not support generating ids');
  }
}

/** store.set semantics on host values; exported for the host-semantics tests. */
export function storeSet(env: HostEnv, typeName: string, requestedId: string, data: Entity): void {
  const type = entityType(env, typeName);
  let id = requestedId;
  if (id === 'auto') {
    id = generatedId(env, type);
    data.set('id', parseEntityId(type, id).value);
  }
  const given = data.get('id');
  let key: string;
  if (given === undefined) {
    const parsed = parseEntityId(type, id);
    key = parsed.key;
    data.set('id', parsed.value);
  } else {
    key = type.idKind === 'Bytes' ? bytesIdKey(type, id) : parseEntityId(type, id).key;
    if (!sameId(type, given, key)) {
      if (given.kind !== type.idKind) {
        throw new EntityValidationError(
          `Attribute \`${type.name}.id\` has wrong type: expected ${type.idKind} but got ${valueTypeName(given)}`,
        );
      }
      throw new EntityValidationError(
        `Value of ${type.name} attribute 'id' conflicts with ID passed to \`store.set()\`: ${displayValue(given)} != ${key}`,
      );
    }
  }
  if (strictFields(env)) checkUndefinedFields(type, data);
  else for (const name of [...data.keys()]) if (!type.fields.has(name)) data.delete(name);
  const block = env.block;
  const writeKeyOfEntity = writeKey(type.name, key);
  const writtenInBlock = block.wasSet(writeKeyOfEntity);
  if (!writtenInBlock && env.runtime.subgraph.fileEntityTypes.has(type.name)) {
    const holder = access(() => block.tx.otherRegionHolding(type.name, key));
    if (holder !== null) {
      throw new EntityValidationError(
        `Entity ${type.name}[${key}] is held by ${holder === 0 ? 'chain handlers (causality region 0)' : `a file data source (causality region ${holder})`}: an entity belongs to the causality region that created it, and no other may write it`,
      );
    }
  }
  if (type.immutable) {
    // One stored by an earlier block: graph-node's entity cache merges the set into it at the end of
    // the block and writes nothing if no field changed; a change is an update its store refuses
    // (or with skipDuplicates drops).
    const earlier =
      block.earlierImmutables.has(writeKeyOfEntity) ||
      (!writtenInBlock && !block.deferImmutableChecks && access(() => block.tx.has(type.name, key)));
    const stored = earlier ? access(() => block.tx.get(type.name, key)) : null;
    if (stored !== null) {
      // graph-node validates the merged entity all the same
      validateEntity(env.runtime.schema, type, key, mergeInto(stored, data));
      if (type.skipDuplicates) return;
      if (changesEntity(stored, data)) {
        throw new EntityValidationError(
          `Entity ${type.name}[${key}] is immutable and was inserted at an earlier block; it cannot be updated`,
        );
      }
      // unchanged: nothing to write, but the entity counts as set in this block (store.get_in_block)
      block.earlierImmutables.add(writeKeyOfEntity);
      block.noteSet(writeKeyOfEntity, data);
      return;
    }
  }
  const existing = type.immutable && !writtenInBlock ? null : access(() => block.tx.get(type.name, key));
  if (existing === null && type.sharesIdsWith.length > 0) checkIdUnshared(env, type, key);
  // before mergeInto, which may take the null fields out of `data`
  block.noteSet(writeKeyOfEntity, data);
  const merged = mergeInto(existing, data);
  validateEntity(env.runtime.schema, type, key, merged);
  access(() => block.tx.set(type.name, key, merged));
}

/** Whether two store values are equal, as graph-node's derived `Value` equality compares them. */
function sameValue(a: StoreValue, b: StoreValue): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'Null':
      return true;
    case 'Bytes': {
      const other = (b as typeof a).value;
      return a.value.length === other.length && a.value.every((byte, i) => byte === other[i]);
    }
    case 'List': {
      const other = (b as typeof a).value;
      return a.value.length === other.length && a.value.every((item, i) => sameValue(item, other[i]!));
    }
    default:
      return a.value === (b as typeof a).value;
  }
}

/**
 * Whether merging a set's fields into `stored` changes it: graph-node's merge_remove_null_fields
 * result (a null removing a field it holds, or a field it lacks or holds with another value).
 */
function changesEntity(stored: Entity, data: Entity): boolean {
  for (const [field, value] of data) {
    const old = stored.get(field);
    const held = old !== undefined && old.kind !== 'Null';
    if (value.kind === 'Null' ? held : !held || !sameValue(old, value)) return true;
  }
  return false;
}

/**
 * graph-node's merge of a set's fields into the stored entity: a null field removes it. `data` was
 * read from the mapping for this call alone, so with nothing to merge it becomes the entity.
 */
function mergeInto(existing: Entity | null, data: Entity): Entity {
  const merged: Entity = existing ? new Map(existing) : data;
  for (const [field, value] of data) {
    if (value.kind === 'Null') merged.delete(field);
    else if (merged !== data) merged.set(field, value);
  }
  return merged;
}

/**
 * A new entity's id must not be held by an entity of another type sharing an interface with it, as
 * an interface's query finds its entities by id across their tables (graph-node's ConflictingId).
 */
function checkIdUnshared(env: HostEnv, type: EntityTypeModel, key: string): void {
  const tx = env.block.tx;
  const holder = type.sharesIdsWith.find((other) => access(() => tx.has(other, key)));
  if (holder !== undefined) {
    throw new EntityValidationError(
      `tried to set entity of type \`${type.name}\` with ID "${key}" but an entity of type \`${holder}\`, which has an interface in common with \`${type.name}\`, exists with the same ID`,
    );
  }
}

/** store.remove semantics on host values. */
export function storeRemove(env: HostEnv, typeName: string, id: string): void {
  const type = entityType(env, typeName);
  const { key } = parseEntityId(type, id);
  const block = env.block;
  if (type.immutable && access(() => block.tx.has(type.name, key))) {
    if (type.skipDuplicates && block.writes.get(writeKey(type.name, key)) === undefined) return;
    throw new EntityValidationError(`Entity ${type.name}[${key}] is immutable and cannot be removed`);
  }
  access(() => block.tx.remove(type.name, key));
  block.noteRemove(writeKey(type.name, key));
}

/** store.get (scope 'store') or store.get_in_block (scope 'block') on host values. */
export function storeGet(
  env: HostEnv,
  typeName: string,
  id: string,
  scope: 'store' | 'block',
): Entity | null {
  const type = entityType(env, typeName);
  const { key } = parseEntityId(type, id);
  const block = env.block;
  // what the block's sets gave the entity, as graph-node's get_in_block reads its entity cache: not
  // merged into the stored entity (a field the block did not set is not there)
  if (scope === 'block') return block.writes.get(writeKey(type.name, key)) ?? null;
  const entity = access(() => block.tx.get(type.name, key));
  if (type.immutable && entity !== null) {
    // found and not written in this block: an earlier block stored it (store.set compares with it)
    const keyOfEntity = writeKey(type.name, key);
    if (!block.writes.has(keyOfEntity)) block.earlierImmutables.add(keyOfEntity);
  }
  return entity;
}

/**
 * store.loadRelated(entity, id, field) on host values: the entities that the derived `field` of
 * entity `id` lists, i.e. those whose `@derivedFrom(field: ...)` reference holds `id`, with the block's
 * own sets and removals applied, in id order. Errors follow graph-node's get_field_related wording.
 */
function storeLoadRelated(env: HostEnv, typeName: string, id: string, fieldName: string): Entity[] {
  const type = entityType(env, typeName);
  const { key } = parseEntityId(type, id);
  const fieldError = (problem: string) =>
    new EntityValidationError(`Entity ${type.name}[${key}]: ${problem} \`${fieldName}\``);
  const field = type.fields.get(fieldName);
  if (!field) throw fieldError('unknown field');
  if (field.derivedFrom === undefined) throw fieldError('field is not derived');
  if (env.runtime.schema.interfaces.has(field.typeName)) throw notAnObjectType(field.typeName);
  const related = env.runtime.schema.entities.get(field.typeName);
  const reference = related?.fields.get(field.derivedFrom);
  if (!related || !reference) throw fieldError('unknown field');
  if (reference.list) {
    // graph-node compares the reference column with the id, which a list column never equals
    throw new EntityValidationError(
      `Entity ${type.name}[${key}]: field \`${fieldName}\` is derived from the list field \`${related.name}.${reference.name}\`, which store.loadRelated cannot look up`,
    );
  }
  const tx = env.block.tx;
  return access(() => tx.loadRelated(related.name, reference.name, key));
}

export const storeFunctions: HostFunctions = {
  'store.get': (env) => (entityPtr: number, idPtr: number) => {
    const entity = storeGet(env, env.heap.readString(entityPtr), env.heap.readString(idPtr), 'store');
    return entity ? writeEntity(env.heap, entity) : 0;
  },
  'store.get_in_block': (env) => (entityPtr: number, idPtr: number) => {
    const entity = storeGet(env, env.heap.readString(entityPtr), env.heap.readString(idPtr), 'block');
    return entity ? writeEntity(env.heap, entity) : 0;
  },
  'store.set': (env) => (entityPtr: number, idPtr: number, dataPtr: number) => {
    storeSet(env, env.heap.readString(entityPtr), env.heap.readString(idPtr), readEntity(env.heap, dataPtr));
  },
  'store.remove': (env) => (entityPtr: number, idPtr: number) => {
    storeRemove(env, env.heap.readString(entityPtr), env.heap.readString(idPtr));
  },
  'store.loadRelated': (env) => (entityPtr: number, idPtr: number, fieldPtr: number) => {
    const entities = storeLoadRelated(
      env,
      env.heap.readString(entityPtr),
      env.heap.readString(idPtr),
      env.heap.readString(fieldPtr),
    );
    // graph-node allocates the array under graph-ts's ArrayTypedMapStringStoreValue type id
    return env.heap.writeArrayU32(
      'ArrayTypedMapStringStoreValue',
      entities.map((entity) => writeEntity(env.heap, entity)),
    );
  },
};
