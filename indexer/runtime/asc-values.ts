// Conversions between graph-ts values in mapping memory and host values: BigInt (two's-complement
// Uint8Array), BigDecimal ({digits, exp}), store Value (kind + u64 payload) and Entity
// (TypedMap<string, Value>), following graph-node's to_from conversions for apiVersion >= 0.0.5.
import type { Entity, StoreValue } from '../store/entity.ts';
import type { AscHeap } from './asc-memory.ts';
import { StoreValueKind, type TypeIdName } from './asc-types.ts';
import { bigIntTooBig } from './bigint-limit.ts';
import {
  checkExponent,
  decimalFromParts,
  decimalFromString,
  decimalToString,
  type Decimal,
} from './decimal.ts';

/** `n`, or graph-node's error when it is past the BigInt limit. */
export function checkBigIntSize(n: bigint): bigint {
  const tooBig = bigIntTooBig(n);
  if (tooBig !== undefined) throw new Error(tooBig);
  return n;
}

export function readBigInt(heap: AscHeap, ptr: number): bigint {
  return checkBigIntSize(heap.readBigInt(ptr));
}

export function writeBigInt(heap: AscHeap, n: bigint): number {
  return heap.writeBigInt(n);
}

/** Reads a graph-ts BigDecimal and normalizes it, rejecting exponents graph-node rejects. */
export function readBigDecimal(heap: AscHeap, ptr: number): Decimal {
  const digits = readBigInt(heap, heap.u32(ptr));
  const exp = readBigInt(heap, heap.u32(ptr + 4));
  const d = decimalFromParts(digits, Number(BigInt.asIntN(64, exp)));
  checkExponent(d);
  return d;
}

export function writeBigDecimal(heap: AscHeap, d: Decimal): number {
  const digits = writeBigInt(heap, d.int);
  const exp = writeBigInt(heap, BigInt(-d.scale));
  const ptr = heap.newObject('BigDecimal', 8);
  heap.setU32(ptr, digits);
  heap.setU32(ptr + 4, exp);
  return ptr;
}

/** Reads a graph-ts store `Value` object. */
export function readStoreValue(heap: AscHeap, ptr: number): StoreValue {
  const kind = heap.u32(ptr);
  // the 64-bit payload: a number for Int8 and Timestamp, else a pointer or a small value in its low word
  const target = heap.u32(ptr + 8);
  switch (kind) {
    case StoreValueKind.String:
      return { kind: 'String', value: heap.readString(target) };
    case StoreValueKind.Int:
      return { kind: 'Int', value: target | 0 };
    case StoreValueKind.Int8:
      return { kind: 'Int8', value: heap.i64(ptr + 8) };
    case StoreValueKind.Timestamp:
      return { kind: 'Timestamp', value: heap.i64(ptr + 8) };
    case StoreValueKind.BigDecimal:
      return { kind: 'BigDecimal', value: decimalToString(readBigDecimal(heap, target)) };
    case StoreValueKind.Bool:
      return { kind: 'Bool', value: target !== 0 || heap.u32(ptr + 12) !== 0 };
    case StoreValueKind.Array:
      return { kind: 'List', value: heap.readArrayU32(target).map((p) => readStoreValue(heap, p)) };
    case StoreValueKind.Null:
      return { kind: 'Null' };
    case StoreValueKind.Bytes:
      return { kind: 'Bytes', value: heap.readBytes(target) };
    case StoreValueKind.BigInt:
      return { kind: 'BigInt', value: readBigInt(heap, target) };
    default:
      throw new Error(`Unknown store value kind ${kind}`);
  }
}

function valuePayload(heap: AscHeap, value: StoreValue): bigint {
  switch (value.kind) {
    case 'String':
      return BigInt(heap.writeString(value.value));
    case 'Int':
      return BigInt(value.value);
    case 'Int8':
    case 'Timestamp':
      return value.value;
    case 'BigDecimal':
      return BigInt(writeBigDecimal(heap, decimalFromString(value.value)));
    case 'Bool':
      return value.value ? 1n : 0n;
    case 'List':
      return BigInt(
        heap.writeArrayU32(
          'ArrayStoreValue',
          value.value.map((v) => writeStoreValue(heap, v)),
        ),
      );
    case 'Null':
      return 0n;
    case 'Bytes':
      return BigInt(heap.writeBytes(value.value));
    case 'BigInt':
      return BigInt(writeBigInt(heap, value.value));
  }
}

const kindTags: Record<StoreValue['kind'], number> = {
  String: StoreValueKind.String,
  Int: StoreValueKind.Int,
  Int8: StoreValueKind.Int8,
  Timestamp: StoreValueKind.Timestamp,
  BigDecimal: StoreValueKind.BigDecimal,
  Bool: StoreValueKind.Bool,
  List: StoreValueKind.Array,
  Null: StoreValueKind.Null,
  Bytes: StoreValueKind.Bytes,
  BigInt: StoreValueKind.BigInt,
};

export function writeStoreValue(heap: AscHeap, value: StoreValue): number {
  const payload = valuePayload(heap, value);
  const ptr = heap.newObject('StoreValue', 16);
  heap.setU32(ptr, kindTags[value.kind]);
  heap.setI64(ptr + 8, BigInt.asIntN(64, payload));
  return ptr;
}

/** Reads a TypedMap<string, Value> (an Entity or a DataSourceContext). */
export function readEntity(heap: AscHeap, ptr: number): Entity {
  const entity: Entity = new Map();
  for (const entry of heap.readArrayU32(heap.u32(ptr))) {
    entity.set(heap.readString(heap.u32(entry)), readStoreValue(heap, heap.u32(entry + 4)));
  }
  return entity;
}

/** A code unit's place in code point order: surrogates (of code points past U+FFFF) after U+FFFF. */
function codePointRank(unit: number): number {
  return unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit;
}

/**
 * Orders strings by their UTF-8 bytes, as Rust orders Strings (graph-node's Entity::sorted,
 * serde_json's BTreeMap keys): that is code point order, which differs from JavaScript's code unit
 * order where a character past U+FFFF meets one from U+E000 to U+FFFF ('😀' after '！').
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Writes an entity as graph-node does: a TypedMap whose entries are sorted by field name. */
export function writeEntity(heap: AscHeap, entity: Entity): number {
  const names = [...entity.keys()].sort(compareUtf8);
  return writeTypedMap(
    heap,
    {
      map: 'TypedMapStringStoreValue',
      array: 'ArrayTypedMapEntryStringStoreValue',
      entry: 'TypedMapEntryStringStoreValue',
    },
    names.map((name) => [heap.writeString(name), writeStoreValue(heap, entity.get(name) as StoreValue)]),
  );
}

/** The classes of one TypedMap<K, V> instantiation: the map, its array of entries, an entry. */
interface TypedMapTypes {
  map: TypeIdName;
  array: TypeIdName;
  entry: TypeIdName;
}

/** Writes a graph-ts TypedMap whose entries hold the given key and value pointers, in order. */
export function writeTypedMap(
  heap: AscHeap,
  types: TypedMapTypes,
  entries: readonly (readonly [key: number, value: number])[],
): number {
  const pointers = entries.map(([key, value]) => {
    const entry = heap.newObject(types.entry, 8);
    heap.setU32(entry, key);
    heap.setU32(entry + 4, value);
    return entry;
  });
  const map = heap.newObject(types.map, 4);
  heap.setU32(map, heap.writeArrayU32(types.array, pointers));
  return map;
}

/** What `parse` returns, or null when it throws: the outcome a `try_` host function reports. */
export function orNull<T>(parse: () => T): T | null {
  try {
    return parse();
  } catch {
    return null;
  }
}

/**
 * A graph-ts `Result<T, bool>` (what `try_` functions return): the value at `valuePtr` wrapped in a
 * `wrapper`, or, when it is null, the error flag set.
 */
export function writeResult(
  heap: AscHeap,
  resultType: TypeIdName,
  wrapperType: TypeIdName,
  valuePtr: number | null,
): number {
  const result = heap.newObject(resultType, 8);
  if (valuePtr !== null) {
    const wrapped = heap.newObject(wrapperType, 4);
    heap.setU32(wrapped, valuePtr);
    heap.setU32(result, wrapped);
  } else {
    const wrapped = heap.newObject('WrappedBool', 1);
    heap.setU8(wrapped, 1);
    heap.setU32(result + 4, wrapped);
  }
  return result;
}
