// yaml.* host functions. graph-node parses with serde_yaml 0.9 into its Value, and this follows
// that crate's rules on top of the `yaml` package's parser (which reads every scalar as text here):
// - a plain scalar is null (empty, `~`, null/Null/NULL), a bool (true/True/TRUE, false/...), an
//   integer (decimal without leading zeros, 0x/0o/0b, signed), a float (Rust's grammar, .inf/.nan)
//   or else a string; quoted and block scalars are strings;
// - an integer beyond 64 bits fails the parse (serde_yaml's Value cannot hold it), a number reaches
//   the mapping as serde_yaml prints it (floats in ryu's shortest form: 1.0, 1e16, 0.0001);
// - `!!bool`, `!!int`, `!!float` and `!!null` demand their type, other `!!` tags leave text;
// - a local tag (`!name`) makes a tagged value around the node read as if untagged;
// - keys may be any value and must be unique; `<<` is an ordinary key; aliases are copies; one
//   document at most (none is null), 10,000,000 bytes at most.
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  type Document,
  type Node as YamlAstNode,
} from 'yaml';
import type { AscHeap } from './asc-memory.ts';
import { orNull, writeResult, writeTypedMap } from './asc-values.ts';
import type { HostFunctions } from './host-context.ts';

type YamlNode =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'number'; text: string }
  | { kind: 'string'; value: string }
  | { kind: 'array'; items: YamlNode[] }
  | { kind: 'object'; entries: [YamlNode, YamlNode][] }
  | { kind: 'tagged'; tag: string; value: YamlNode };

/** graph-ts `YAMLValueKind`. */
const YamlValueKind = { null: 0, bool: 1, number: 2, string: 3, array: 4, object: 5, tagged: 6 } as const;

const YAML_MAX_SIZE_BYTES = 10_000_000;
/** serde_yaml's recursion limit */
const MAX_DEPTH = 128;

const CORE = 'tag:yaml.org,2002:';

/** Rust's `from_str_radix` for an integer type of `bits` bits: an optional sign (`-` if signed), digits. */
function fromStrRadix(text: string, radix: 2 | 8 | 10 | 16, bits: number, signed: boolean): bigint | null {
  const digits = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[radix];
  const negative = signed && text.startsWith('-');
  const body = text.startsWith('+') || negative ? text.slice(1) : text;
  if (!digits.test(body)) return null;
  const prefix = { 2: '0b', 8: '0o', 10: '', 16: '0x' }[radix];
  const magnitude = BigInt(`${prefix}${body}`);
  const value = negative ? -magnitude : magnitude;
  const min = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  return value >= min && value <= max ? value : null;
}

/** Leading zeros followed by digits: a string in YAML 1.2. */
function digitsButNotNumber(scalar: string): boolean {
  const body = /^[+-]/.test(scalar) ? scalar.slice(1) : scalar;
  return body.length > 1 && body.startsWith('0') && /^[0-9]+$/.test(body.slice(1));
}

const radixPrefixes = [
  ['0x', 16],
  ['0o', 8],
  ['0b', 2],
] as const;

/** serde_yaml's parse_unsigned_int. */
function parseUnsignedInt(scalar: string, bits: number): bigint | null {
  const unpositive = scalar.startsWith('+') ? scalar.slice(1) : scalar;
  for (const [prefix, radix] of radixPrefixes) {
    if (!unpositive.startsWith(prefix)) continue;
    const rest = unpositive.slice(2);
    if (/^[+-]/.test(rest)) return null;
    const value = fromStrRadix(rest, radix, bits, false);
    if (value !== null) return value;
  }
  if (/^[+-]/.test(unpositive) || digitsButNotNumber(scalar)) return null;
  return fromStrRadix(unpositive, 10, bits, false);
}

/** serde_yaml's parse_negative_int. */
function parseNegativeInt(scalar: string, bits: number): bigint | null {
  for (const [prefix, radix] of radixPrefixes) {
    if (!scalar.startsWith(`-${prefix}`)) continue;
    const value = fromStrRadix(`-${scalar.slice(3)}`, radix, bits, true);
    if (value !== null) return value;
  }
  if (digitsButNotNumber(scalar)) return null;
  return fromStrRadix(scalar, 10, bits, true);
}

/** serde_yaml's visit_int: a 64-bit integer, or null; one that needs 128 bits fails the parse. */
function parseInt64(scalar: string): bigint | null {
  const value = parseUnsignedInt(scalar, 64) ?? parseNegativeInt(scalar, 64);
  if (value !== null) return value;
  if (parseUnsignedInt(scalar, 128) !== null || parseNegativeInt(scalar, 128) !== null)
    throw new Error(`invalid type: integer \`${scalar}\` as a 128-bit integer, expected any YAML value`);
  return null;
}

/** Rust's f64 grammar (`str::parse::<f64>`), finite values only. */
const rustFloat = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/** serde_yaml's parse_f64. */
function parseFloat64(scalar: string): number | null {
  let unpositive = scalar;
  if (scalar.startsWith('+')) {
    unpositive = scalar.slice(1);
    if (/^[+-]/.test(unpositive)) return null;
  }
  if (['.inf', '.Inf', '.INF'].includes(unpositive)) return Infinity;
  if (['-.inf', '-.Inf', '-.INF'].includes(scalar)) return -Infinity;
  if (['.nan', '.NaN', '.NAN'].includes(scalar)) return NaN;
  if (!rustFloat.test(unpositive)) return null;
  const value = Number(unpositive);
  return Number.isFinite(value) ? value : null;
}

/** A float as serde_yaml prints it: .nan, .inf, -.inf, or ryu's shortest form. */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return '.nan';
  if (!Number.isFinite(value)) return value < 0 ? '-.inf' : '.inf';
  const sign = value < 0 || Object.is(value, -0) ? '-' : '';
  if (value === 0) return `${sign}0.0`;
  // shortest round-trip digits and the power of ten of the first one
  const [mantissa, exponent] = Math.abs(value).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const point = Number(exponent) + 1; // digits before the decimal point
  const length = digits.length;
  let text: string;
  if (point >= length && point <= 16) text = `${digits}${'0'.repeat(point - length)}.0`;
  else if (point > 0 && point <= 16) text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  else if (point > -5 && point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
  else if (length === 1) text = `${digits}e${point - 1}`;
  else text = `${digits[0]}.${digits.slice(1)}e${point - 1}`;
  return sign + text;
}

const numberNode = (text: string): YamlNode => ({ kind: 'number', text });

/** serde_yaml's parse_bool and parse_null. */
function parseBool(text: string): boolean | null {
  if (['true', 'True', 'TRUE'].includes(text)) return true;
  if (['false', 'False', 'FALSE'].includes(text)) return false;
  return null;
}
const isNull = (text: string) => ['null', 'Null', 'NULL', '~'].includes(text);

/** serde_yaml's visit_untagged_scalar, for a plain scalar's text. */
function plainScalar(text: string): YamlNode {
  if (text === '' || isNull(text)) return { kind: 'null' };
  const bool = parseBool(text);
  if (bool !== null) return { kind: 'bool', value: bool };
  const int = parseInt64(text);
  if (int !== null) return numberNode(int.toString());
  if (!digitsButNotNumber(text)) {
    const float = parseFloat64(text);
    if (float !== null) return numberNode(formatFloat(float));
  }
  return { kind: 'string', value: text };
}

/** A scalar with a core-schema tag that demands a type (serde_yaml's visit_scalar). */
function typedScalar(tag: string, text: string): YamlNode {
  const demand = <T>(value: T | null, what: string): T => {
    if (value === null) throw new Error(`invalid value: string ${JSON.stringify(text)}, expected ${what}`);
    return value;
  };
  switch (tag) {
    case `${CORE}bool`:
      return { kind: 'bool', value: demand(parseBool(text), 'a boolean') };
    case `${CORE}int`:
      return numberNode(demand(parseInt64(text), 'an integer').toString());
    case `${CORE}float`:
      return numberNode(formatFloat(demand(parseFloat64(text), 'a float')));
    default:
      demand(isNull(text) ? true : null, 'null');
      return { kind: 'null' };
  }
}

/** Whether two values are equal keys, as serde_yaml's Value compares them. */
const keyOf = (node: YamlNode): string => JSON.stringify(node);

class YamlConverter {
  private aliasesFollowed = 0;
  constructor(
    private readonly document: Document,
    private readonly maxAliases: number,
  ) {}

  convert(node: YamlAstNode | null | undefined, depth: number, taggedAlready = false): YamlNode {
    if (depth > MAX_DEPTH) throw new Error('recursion limit exceeded');
    if (!node) return { kind: 'null' };
    if (isAlias(node)) {
      if (++this.aliasesFollowed > this.maxAliases) throw new Error('repetition limit exceeded');
      return this.convert(node.resolve(this.document) as YamlAstNode | undefined, depth + 1);
    }
    const tag = taggedAlready ? undefined : node.tag;
    if (tag?.startsWith('!')) return { kind: 'tagged', tag, value: this.convert(node, depth + 1, true) };
    if (isScalar(node)) {
      const text = node.value === null || node.value === undefined ? '' : String(node.value);
      const plain = node.type === 'PLAIN' || node.type === undefined;
      if (tag && ['bool', 'int', 'float', 'null'].some((t) => tag === `${CORE}${t}`))
        return typedScalar(tag, text);
      return plain && !tag ? plainScalar(text) : { kind: 'string', value: text };
    }
    if (isSeq(node))
      return { kind: 'array', items: node.items.map((item) => this.convert(item as YamlAstNode, depth + 1)) };
    if (isMap(node)) {
      const entries: [YamlNode, YamlNode][] = [];
      const keys = new Set<string>();
      for (const pair of node.items) {
        const key = this.convert(pair.key as YamlAstNode, depth + 1);
        const id = keyOf(key);
        if (keys.has(id)) throw new Error(`duplicate entry with key ${describeKey(key)}`);
        keys.add(id);
        entries.push([key, this.convert(pair.value as YamlAstNode, depth + 1)]);
      }
      return { kind: 'object', entries };
    }
    throw new Error('unsupported YAML node');
  }
}

/** How many events libyaml's parser emits for `node` (a start and an end per collection). */
function parserEvents(node: YamlAstNode | null): number {
  if (isSeq(node))
    return 2 + node.items.reduce<number>((n, item) => n + parserEvents(item as YamlAstNode), 0);
  if (isMap(node))
    return (
      2 +
      node.items.reduce<number>(
        (n, pair) => n + parserEvents(pair.key as YamlAstNode) + parserEvents(pair.value as YamlAstNode),
        0,
      )
    );
  return 1;
}

function describeKey(key: YamlNode): string {
  if (key.kind === 'string') return JSON.stringify(key.value);
  if (key.kind === 'number') return key.text;
  if (key.kind === 'bool') return String(key.value);
  return key.kind;
}

/** Parses a YAML document as graph-node's yaml.fromBytes does (see the header); throws when it cannot. */
function parseYaml(bytes: Uint8Array): YamlNode {
  if (bytes.length > YAML_MAX_SIZE_BYTES)
    throw new Error(`YAML size exceeds max size of ${YAML_MAX_SIZE_BYTES} bytes`);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  const documents = parseAllDocuments(text, { schema: 'failsafe', uniqueKeys: false, merge: false });
  if (documents.length > 1)
    throw new Error('deserializing from YAML containing more than one document is not supported');
  const document = documents[0];
  if (!document) return { kind: 'null' };
  const error = document.errors[0];
  if (error) throw new Error(error.message.split('\n')[0]);
  // serde_yaml follows aliases at most 100 times per parser event of the document
  const events = 4 + parserEvents(document.contents as YamlAstNode | null);
  return new YamlConverter(document, 100 * events).convert(document.contents as YamlAstNode, 0);
}

function writeYamlValue(heap: AscHeap, node: YamlNode): number {
  let payload: number;
  switch (node.kind) {
    case 'null':
      payload = 0;
      break;
    case 'bool':
      payload = node.value ? 1 : 0;
      break;
    case 'number':
      payload = heap.writeString(node.text);
      break;
    case 'string':
      payload = heap.writeString(node.value);
      break;
    case 'array':
      payload = heap.writeArrayU32(
        'YamlArrayValue',
        node.items.map((item) => writeYamlValue(heap, item)),
      );
      break;
    case 'object':
      payload = writeTypedMap(
        heap,
        {
          map: 'YamlTypedMapValueValue',
          array: 'YamlArrayTypedMapEntryValueValue',
          entry: 'YamlTypedMapEntryValueValue',
        },
        node.entries.map(([key, value]) => [writeYamlValue(heap, key), writeYamlValue(heap, value)]),
      );
      break;
    case 'tagged': {
      const tag = heap.writeString(node.tag);
      const value = writeYamlValue(heap, node.value);
      payload = heap.newObject('YamlTaggedValue', 8);
      heap.setU32(payload, tag);
      heap.setU32(payload + 4, value);
      break;
    }
  }
  const ptr = heap.newObject('YamlValue', 16);
  heap.setU32(ptr, YamlValueKind[node.kind]);
  heap.setI64(ptr + 8, BigInt(payload));
  return ptr;
}

export const yamlFunctions: HostFunctions = {
  'yaml.fromBytes': (env) => (ptr: number) => {
    let node: YamlNode;
    try {
      node = parseYaml(env.heap.readBytes(ptr));
    } catch (error) {
      throw new Error(`failed to parse YAML from bytes: ${(error as Error).message}`, { cause: error });
    }
    return writeYamlValue(env.heap, node);
  },
  'yaml.try_fromBytes': (env) => (ptr: number) => {
    const node = orNull(() => parseYaml(env.heap.readBytes(ptr)));
    return writeResult(
      env.heap,
      'YamlResultValueBool',
      'YamlWrappedValue',
      node && writeYamlValue(env.heap, node),
    );
  },
};
