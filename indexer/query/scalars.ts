// The scalars graph-node adds to GraphQL (BigInt, BigDecimal, Bytes, Int8, Timestamp), with its
// wire formats: big numbers travel as strings, bytes as 0x-prefixed hex. Inputs are read as leniently
// as graph-node coerces them (graph/src/data/value.rs coerce_scalar): a BigDecimal may be a number
// literal, bytes may lack the 0x. Inputs that do not parse are rejected while validating the query,
// before anything is read.
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { decimalFromString, decimalToString } from '../runtime/decimal.ts';
import { encodeBigDecimalKey } from '../store/sortable-numbers.ts';

function literalText(node: ValueNode, scalar: string, allowInt: boolean): string {
  if (node.kind === Kind.STRING) return node.value;
  if (allowInt && node.kind === Kind.INT) return node.value;
  throw new GraphQLError(`${scalar} must be given as a string`, { nodes: node });
}

function integerText(value: unknown, scalar: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new GraphQLError(`invalid ${scalar}: ${String(value)}`);
}

/**
 * A BigDecimal input as graph-node reads it (bigdecimal's from_str, then normalized to 34 significant
 * digits), in the canonical text stored values have: `2.0` and `2` are one value, as graph-node
 * compares them as numerics, in lists too.
 */
function bigDecimalText(value: unknown): string {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string') throw new GraphQLError(`invalid BigDecimal: ${String(value)}`);
  try {
    const canonical = decimalToString(decimalFromString(text));
    encodeBigDecimalKey(canonical);
    return canonical;
  } catch {
    throw new GraphQLError(`invalid BigDecimal: ${text}`);
  }
}

/**
 * Bytes as graph-node reads them from a query (scalar::Bytes::from_str): hex digits in either case
 * after any number of leading `0x`; null when the text is not that.
 */
export function queryBytes(text: string): Buffer | null {
  const hex = text.replace(/^(0x)+/, '');
  return /^([0-9a-fA-F]{2})*$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}

function bytesValue(value: unknown): Buffer {
  const bytes = typeof value === 'string' ? queryBytes(value) : null;
  if (bytes) return bytes;
  throw new GraphQLError(`invalid Bytes: ${String(value)} (expected hex with an even number of digits)`);
}

function integerScalar(name: string, description: string): GraphQLScalarType<bigint, string> {
  return new GraphQLScalarType<bigint, string>({
    name,
    description,
    serialize: (v) => String(v),
    parseValue: (v) => integerText(v, name),
    parseLiteral: (node) => integerText(literalText(node, name, true), name),
  });
}

export const BigIntScalar = integerScalar('BigInt', 'Arbitrary-precision integer, as a decimal string');
export const Int8Scalar = integerScalar('Int8', '8 bytes signed integer');
export const TimestampScalar = integerScalar(
  'Timestamp',
  'A string representation of microseconds UNIX timestamp (16 digits)',
);

export const BigDecimalScalar = new GraphQLScalarType<string, string>({
  name: 'BigDecimal',
  serialize: (v) => String(v),
  parseValue: bigDecimalText,
  // graph-node reads a float literal as an f64, keeping the digits an f64 holds
  parseLiteral: (node) =>
    bigDecimalText(
      node.kind === Kind.FLOAT ? String(Number(node.value)) : literalText(node, 'BigDecimal', true),
    ),
});

export const BytesScalar = new GraphQLScalarType<Buffer, string>({
  name: 'Bytes',
  serialize: (v) => String(v),
  parseValue: bytesValue,
  parseLiteral: (node) => bytesValue(literalText(node, 'Bytes', false)),
});
