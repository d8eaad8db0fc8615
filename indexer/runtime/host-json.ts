// json.* host functions. graph-node parses with serde_json (arbitrary_precision): numbers reach the
// mapping as their original text, objects have their keys sorted (a BTreeMap, last duplicate wins),
// and the grammar is strict JSON. JSON.parse would lose number text, hence this small parser.
import type { AscHeap } from './asc-memory.ts';
import { JsonValueKind } from './asc-types.ts';
import { orNull, writeBigInt, writeResult, writeTypedMap } from './asc-values.ts';
import { parseBigIntDecimal } from './decimal.ts';
import type { HostFunctions } from './host-context.ts';

type JsonNode =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'number'; text: string }
  | { kind: 'string'; value: string }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'object'; entries: [string, JsonNode][] };

const numberPattern = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const escapes: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class JsonParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  private fail(what: string): never {
    throw new Error(`${what} at position ${this.pos}`);
  }

  private skipWhitespace(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos] as string)) this.pos++;
  }

  parseDocument(): JsonNode {
    const value = this.parseValue();
    this.skipWhitespace();
    if (this.pos < this.text.length) this.fail('trailing characters');
    return value;
  }

  private parseValue(): JsonNode {
    this.skipWhitespace();
    const c = this.text[this.pos];
    if (c === '{') return this.parseObject();
    if (c === '[') return this.parseArray();
    if (c === '"') return { kind: 'string', value: this.parseString() };
    if (this.text.startsWith('true', this.pos)) return this.literal(4, { kind: 'bool', value: true });
    if (this.text.startsWith('false', this.pos)) return this.literal(5, { kind: 'bool', value: false });
    if (this.text.startsWith('null', this.pos)) return this.literal(4, { kind: 'null' });
    numberPattern.lastIndex = this.pos;
    const m = numberPattern.exec(this.text);
    if (!m) return this.fail(c === undefined ? 'EOF while parsing a value' : 'expected value');
    this.pos += m[0].length;
    return { kind: 'number', text: m[0] };
  }

  private literal(length: number, node: JsonNode): JsonNode {
    this.pos += length;
    return node;
  }

  private parseString(): string {
    this.pos++; // opening quote
    let out = '';
    for (;;) {
      const c = this.text[this.pos++];
      if (c === undefined) this.fail('EOF while parsing a string');
      if (c === '"') return out;
      if (c === '\\') {
        const e = this.text[this.pos++] as string;
        if (e === 'u') {
          const hex = this.text.slice(this.pos, this.pos + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid escape');
          out += String.fromCharCode(parseInt(hex, 16));
          this.pos += 4;
        } else if (escapes[e] !== undefined) {
          out += escapes[e];
        } else {
          this.fail('invalid escape');
        }
      } else if (c < ' ') {
        this.fail('control character in string');
      } else {
        out += c;
      }
    }
  }

  private parseArray(): JsonNode {
    this.pos++;
    const items: JsonNode[] = [];
    this.skipWhitespace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return { kind: 'array', items };
    }
    for (;;) {
      items.push(this.parseValue());
      this.skipWhitespace();
      const c = this.text[this.pos++];
      if (c === ']') return { kind: 'array', items };
      if (c !== ',') this.fail('expected `,` or `]`');
    }
  }

  private parseObject(): JsonNode {
    this.pos++;
    const map = new Map<string, JsonNode>();
    this.skipWhitespace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return { kind: 'object', entries: [] };
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.pos] !== '"') this.fail('key must be a string');
      const key = this.parseString();
      this.skipWhitespace();
      if (this.text[this.pos++] !== ':') this.fail('expected `:`');
      map.set(key, this.parseValue());
      this.skipWhitespace();
      const c = this.text[this.pos++];
      if (c === '}') break;
      if (c !== ',') this.fail('expected `,` or `}`');
    }
    const entries = [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return { kind: 'object', entries };
  }
}

/** Strict UTF-8 that keeps a leading byte-order mark, which serde_json's from_slice refuses as a value. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function parseJson(bytes: Uint8Array): JsonNode {
  if (bytes.length > 10_000_000) throw new Error('JSON size exceeds max size of 10000000');
  const text = utf8.decode(bytes);
  return new JsonParser(text).parseDocument();
}

function writeJsonValue(heap: AscHeap, node: JsonNode): number {
  let kind: number;
  let payload: number;
  switch (node.kind) {
    case 'null':
      kind = JsonValueKind.Null;
      payload = 0;
      break;
    case 'bool':
      kind = JsonValueKind.Bool;
      payload = node.value ? 1 : 0;
      break;
    case 'number':
      kind = JsonValueKind.Number;
      payload = heap.writeString(node.text);
      break;
    case 'string':
      kind = JsonValueKind.String;
      payload = heap.writeString(node.value);
      break;
    case 'array':
      kind = JsonValueKind.Array;
      payload = heap.writeArrayU32(
        'ArrayJsonValue',
        node.items.map((item) => writeJsonValue(heap, item)),
      );
      break;
    case 'object':
      kind = JsonValueKind.Object;
      payload = writeTypedMap(
        heap,
        {
          map: 'TypedMapStringJsonValue',
          array: 'ArrayTypedMapEntryStringJsonValue',
          entry: 'TypedMapEntryStringJsonValue',
        },
        node.entries.map(([key, value]) => [heap.writeString(key), writeJsonValue(heap, value)]),
      );
      break;
  }
  const ptr = heap.newObject('JsonValue', 16);
  heap.setU32(ptr, kind);
  heap.setI64(ptr + 8, BigInt(payload));
  return ptr;
}

function jsonToI64(s: string): bigint {
  const n = /^[+-]?[0-9]+$/.test(s) ? BigInt(s) : null;
  if (n === null || n !== BigInt.asIntN(64, n)) throw new Error(`JSON \`${s}\` cannot be parsed as i64`);
  return n;
}

function jsonToU64(s: string): bigint {
  const n = /^\+?[0-9]+$/.test(s) ? BigInt(s) : null;
  if (n === null || n !== BigInt.asUintN(64, n)) throw new Error(`JSON \`${s}\` cannot be parsed as u64`);
  return n;
}

function jsonToF64(s: string): number {
  if (!/^[+-]?(?:inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)$/i.test(s)) {
    throw new Error(`JSON \`${s}\` cannot be parsed as f64`);
  }
  const body = s.replace(/^[+-]/, '').toLowerCase();
  const sign = s.startsWith('-') ? -1 : 1;
  if (body === 'nan') return NaN;
  if (body === 'inf' || body === 'infinity') return sign * Infinity;
  return Number(s);
}

export const jsonFunctions: HostFunctions = {
  'json.fromBytes': (env) => (ptr: number) => writeJsonValue(env.heap, parseJson(env.heap.readBytes(ptr))),
  'json.try_fromBytes': (env) => (ptr: number) => {
    const node = orNull(() => parseJson(env.heap.readBytes(ptr)));
    return writeResult(
      env.heap,
      'ResultJsonValueBool',
      'WrappedJsonValue',
      node && writeJsonValue(env.heap, node),
    );
  },
  'json.toI64': (env) => (ptr: number) => jsonToI64(env.heap.readString(ptr)),
  'json.toU64': (env) => (ptr: number) => BigInt.asIntN(64, jsonToU64(env.heap.readString(ptr))),
  'json.toF64': (env) => (ptr: number) => jsonToF64(env.heap.readString(ptr)),
  'json.toBigInt': (env) => (ptr: number) => {
    const s = env.heap.readString(ptr);
    const n = parseBigIntDecimal(s);
    if (n === null) throw new Error(`JSON \`${s}\` is not a decimal string`);
    return writeBigInt(env.heap, n);
  },
};
