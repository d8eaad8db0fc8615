// A lossless JSON text form of an Entity (big integers as decimal strings, bytes as hex), used to
// persist data source contexts, which are entities in graph-ts, next to the dynamic data sources.
import type { Entity, StoreValue } from './entity.ts';

type JsonValue = { kind: string; value?: unknown };

function valueToJson(v: StoreValue): JsonValue {
  switch (v.kind) {
    case 'Null':
      return { kind: 'Null' };
    case 'Int8':
    case 'BigInt':
    case 'Timestamp':
      return { kind: v.kind, value: v.value.toString() };
    case 'Bytes':
      return { kind: 'Bytes', value: Buffer.from(v.value).toString('hex') };
    case 'List':
      return { kind: 'List', value: v.value.map(valueToJson) };
    default:
      return { kind: v.kind, value: v.value };
  }
}

function valueFromJson(j: JsonValue): StoreValue {
  switch (j.kind) {
    case 'Null':
      return { kind: 'Null' };
    case 'Int8':
    case 'BigInt':
    case 'Timestamp':
      return { kind: j.kind, value: BigInt(j.value as string) };
    case 'Bytes':
      return { kind: 'Bytes', value: new Uint8Array(Buffer.from(j.value as string, 'hex')) };
    case 'List':
      return { kind: 'List', value: (j.value as JsonValue[]).map(valueFromJson) };
    case 'String':
    case 'BigDecimal':
      return { kind: j.kind, value: j.value as string };
    case 'Int':
      return { kind: 'Int', value: j.value as number };
    case 'Bool':
      return { kind: 'Bool', value: j.value as boolean };
    default:
      throw new Error(`unknown store value kind ${j.kind}`);
  }
}

export function entityToJson(entity: Entity): string {
  return JSON.stringify([...entity].map(([k, v]) => [k, valueToJson(v)]));
}

export function entityFromJson(text: string): Entity {
  return new Map((JSON.parse(text) as [string, JsonValue][]).map(([k, v]) => [k, valueFromJson(v)]));
}
