// A static data source's `context` in subgraph.yaml: the entity `dataSource.context()` returns to
// its handlers, written as graph-node deserializes it, each entry a `{ type, data }` value (its
// `Value` enum, tagged by `type` with the content in `data`). Every value is checked here, so a
// manifest graph-node would refuse does not start, and each error names the entry to fix.
import { decimalFromString, decimalToString, parseBigIntDecimal } from './decimal.ts';
import type { Entity, StoreValue } from '../store/entity.ts';

const INT_RANGE = [-(2n ** 31n), 2n ** 31n - 1n] as const;
const INT8_RANGE = [-(2n ** 63n), 2n ** 63n - 1n] as const;

/** `2024-01-02T03:04:05.123456Z` or with an offset: what chrono's serde reads as a DateTime. */
const RFC3339 = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An integer from the manifest's YAML (read with integers as bigint) within `range`, or null. */
function integerIn(data: unknown, [min, max]: readonly [bigint, bigint]): bigint | null {
  const value =
    typeof data === 'bigint'
      ? data
      : typeof data === 'number' && Number.isInteger(data)
        ? BigInt(data)
        : null;
  return value !== null && value >= min && value <= max ? value : null;
}

function timestampMicros(text: string): bigint | null {
  const match = RFC3339.exec(text);
  if (!match) return null;
  const [, dateTime, fraction = '', zone] = match;
  const millis = Date.parse(`${dateTime!.replace(/[t ]/, 'T')}${zone!.toUpperCase()}`);
  if (Number.isNaN(millis)) return null;
  // Timestamps are microseconds: finer digits are dropped, as graph-node's timestamp_micros() does
  return BigInt(millis) * 1000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
}

function contextValue(raw: unknown, where: string): StoreValue {
  const fail = (what: string): never => {
    throw new Error(`${where}: ${what}`);
  };
  if (!isRecord(raw) || typeof raw.type !== 'string')
    return fail(
      'must be a value written as { type, data }, with type one of String, Int, Int8, BigInt, BigDecimal, Bool, Bytes, Timestamp, List, Null',
    );
  const { type, data } = raw;
  switch (type) {
    case 'Null':
      return { kind: 'Null' };
    case 'String':
      return typeof data === 'string'
        ? { kind: 'String', value: data }
        : fail('data of a String must be a string');
    case 'Bool':
      return typeof data === 'boolean'
        ? { kind: 'Bool', value: data }
        : fail('data of a Bool must be true or false');
    case 'Int': {
      const value = integerIn(data, INT_RANGE);
      return value === null
        ? fail('data of an Int must be an integer from -2^31 to 2^31-1')
        : { kind: 'Int', value: Number(value) };
    }
    case 'Int8': {
      const value = integerIn(data, INT8_RANGE);
      return value === null
        ? fail('data of an Int8 must be an integer from -2^63 to 2^63-1')
        : { kind: 'Int8', value };
    }
    case 'BigInt': {
      const value = typeof data === 'string' ? parseBigIntDecimal(data) : null;
      return value === null
        ? fail('data of a BigInt must be a string of decimal digits, such as "-12"')
        : { kind: 'BigInt', value };
    }
    case 'BigDecimal': {
      const text =
        typeof data === 'string'
          ? data
          : typeof data === 'number' || typeof data === 'bigint'
            ? String(data)
            : null;
      if (text === null) return fail('data of a BigDecimal must be a decimal string, such as "1.5"');
      try {
        return { kind: 'BigDecimal', value: decimalToString(decimalFromString(text)) };
      } catch {
        return fail(
          `data of a BigDecimal must be a decimal string, such as "1.5", not ${JSON.stringify(text)}`,
        );
      }
    }
    case 'Bytes': {
      const hex = typeof data === 'string' ? data.replace(/^0x/, '') : null;
      return hex !== null && hex.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(hex)
        ? { kind: 'Bytes', value: new Uint8Array(Buffer.from(hex, 'hex')) }
        : fail('data of Bytes must be a string of hex digit pairs, such as "0x01ab"');
    }
    case 'Timestamp': {
      const value = typeof data === 'string' ? timestampMicros(data) : null;
      return value === null
        ? fail('data of a Timestamp must be an RFC 3339 date-time, such as "2024-01-02T03:04:05Z"')
        : { kind: 'Timestamp', value };
    }
    case 'List':
      return Array.isArray(data)
        ? { kind: 'List', value: data.map((item, i) => contextValue(item, `${where}[${i}]`)) }
        : fail('data of a List must be a list of { type, data } values');
    default:
      return fail(
        `unknown type ${JSON.stringify(type)}: one of String, Int, Int8, BigInt, BigDecimal, Bool, Bytes, Timestamp, List, Null`,
      );
  }
}

/**
 * The context entity of data source `name` from its manifest `context` (integers read as bigint, so
 * Int8 values keep every digit), or null when it has none.
 */
export function contextFromManifest(raw: unknown, name: string): Entity | null {
  if (raw === undefined || raw === null) return null;
  if (!isRecord(raw))
    throw new Error(`data source ${name}: context must be a map from names to { type, data } values`);
  return new Map(
    Object.entries(raw).map(([key, value]) => [
      key,
      contextValue(value, `data source ${name}: context.${key}`),
    ]),
  );
}
