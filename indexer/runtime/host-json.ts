// json.* host functions. graph-node parses with serde_json (arbitrary_precision): numbers reach the
// mapping as their original text, objects have their keys sorted by their UTF-8 bytes (a BTreeMap
// of Strings, last duplicate wins), and the grammar is strict JSON: arrays and objects nest at most
// 127 levels deep (serde_json's recursion limit), and a \u escape of a UTF-16 surrogate must be a
// high one followed by an escaped low one. JSON.parse would lose number text, hence this small
// parser, whose errors say what serde_json's say, at serde_json's line and column (a column counts
// UTF-8 bytes).
import type { AscHeap } from './asc-memory.ts';
import { JsonValueKind } from './asc-types.ts';
import { compareUtf8, orNull, writeBigInt, writeResult, writeTypedMap } from './asc-values.ts';
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

/** serde_json's recursion limit: its remaining_depth starts at 128 and may not reach 0. */
const MAX_NESTING = 127;

class JsonParser {
  private pos = 0;
  /** arrays and objects open around the value being parsed */
  private depth = 0;
  constructor(private readonly text: string) {}

  /** Fails at the character at `at` (the end of the text at most), placed as serde_json places it. */
  private fail(what: string, at = this.pos): never {
    const end = Math.min(at, this.text.length);
    const lineStart = this.text.lastIndexOf('\n', end - 1) + 1;
    const line = this.text.slice(0, lineStart).split('\n').length;
    const column = Buffer.byteLength(this.text.slice(lineStart, end)) + (at < this.text.length ? 1 : 0);
    throw new Error(`${what} at line ${line} column ${column}`);
  }

  /** Enters an array or object at `pos`, within serde_json's recursion limit. */
  private enter(): void {
    if (++this.depth > MAX_NESTING) this.fail('recursion limit exceeded');
    this.pos++;
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
        const e = this.text[this.pos++];
        if (e === undefined) this.fail('EOF while parsing a string');
        if (e === 'u') {
          out += this.parseUnicodeEscape();
        } else if (escapes[e] !== undefined) {
          out += escapes[e];
        } else {
          this.fail('invalid escape', this.pos - 1);
        }
      } else if (c < ' ') {
        this.fail('control character (\\u0000-\\u001F) found while parsing a string', this.pos - 1);
      } else {
        out += c;
      }
    }
  }

  /** The four hex digits after `\u`, as a UTF-16 code unit. */
  private hexEscape(): number {
    // serde_json counts the four in bytes
    if (Buffer.byteLength(this.text.slice(this.pos, this.pos + 4)) < 4)
      this.fail('EOF while parsing a string', this.text.length);
    for (let i = 0; i < 4; i++) {
      if (!/[0-9a-fA-F]/.test(this.text[this.pos + i] as string)) this.fail('invalid escape', this.pos + i);
    }
    this.pos += 4;
    return parseInt(this.text.slice(this.pos - 4, this.pos), 16);
  }

  /**
   * The character of a `\u` escape, `\u` read: a high surrogate must be followed by the `\u`
   * escape of a low one, and a low surrogate may not come alone (serde_json's parse_escape).
   */
  private parseUnicodeEscape(): string {
    const unit = this.hexEscape();
    if (unit >= 0xdc00 && unit <= 0xdfff) this.fail('lone leading surrogate in hex escape', this.pos - 1);
    if (unit < 0xd800 || unit > 0xdbff) return String.fromCharCode(unit);
    for (const expected of '\\u') {
      const next = this.text[this.pos];
      if (next === undefined) this.fail('EOF while parsing a string');
      if (next !== expected) this.fail('unexpected end of hex escape');
      this.pos++;
    }
    const low = this.hexEscape();
    if (low < 0xdc00 || low > 0xdfff) this.fail('lone leading surrogate in hex escape', this.pos - 1);
    return String.fromCharCode(unit, low);
  }

  private parseArray(): JsonNode {
    this.enter();
    const items: JsonNode[] = [];
    this.skipWhitespace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      this.depth--;
      return { kind: 'array', items };
    }
    for (;;) {
      items.push(this.parseValue());
      this.skipWhitespace();
      const c = this.text[this.pos++];
      if (c === ']') break;
      if (c === undefined) this.fail('EOF while parsing a list');
      if (c !== ',') this.fail('expected `,` or `]`', this.pos - 1);
      this.skipWhitespace();
      if (this.text[this.pos] === ']') this.fail('trailing comma');
    }
    this.depth--;
    return { kind: 'array', items };
  }

  private parseObject(): JsonNode {
    this.enter();
    const map = new Map<string, JsonNode>();
    this.skipWhitespace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      this.depth--;
      return { kind: 'object', entries: [] };
    }
    for (;;) {
      this.skipWhitespace();
      const quote = this.text[this.pos];
      if (quote === undefined) this.fail('EOF while parsing an object');
      if (quote === '}' && map.size > 0) this.fail('trailing comma');
      if (quote !== '"') this.fail('key must be a string');
      const key = this.parseString();
      this.skipWhitespace();
      const colon = this.text[this.pos];
      if (colon === undefined) this.fail('EOF while parsing an object');
      if (colon !== ':') this.fail('expected `:`');
      this.pos++;
      map.set(key, this.parseValue());
      this.skipWhitespace();
      const c = this.text[this.pos++];
      if (c === '}') break;
      if (c === undefined) this.fail('EOF while parsing an object');
      if (c !== ',') this.fail('expected `,` or `}`', this.pos - 1);
    }
    this.depth--;
    const entries = [...map.entries()].sort(([a], [b]) => compareUtf8(a, b));
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
