// The scalars graph-node adds to GraphQL (BigInt, BigDecimal, Bytes, Int8, Timestamp), with its
// wire formats: big numbers travel as strings, bytes as 0x-prefixed hex. Inputs that do not parse
// are rejected while validating the query, before anything is read.
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

function bytesValue(value: unknown): Buffer {
  if (typeof value === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(value))
    return Buffer.from(value.slice(2), 'hex');
  throw new GraphQLError(
    `invalid Bytes: ${String(value)} (expected 0x-prefixed hex with an even number of digits)`,
  );
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
  parseLiteral: (node) => bigDecimalText(literalText(node, 'BigDecimal', true)),
});

export const BytesScalar = new GraphQLScalarType<Buffer, string>({
  name: 'Bytes',
  serialize: (v) => String(v),
  parseValue: bytesValue,
  parseLiteral: (node) => bytesValue(literalText(node, 'Bytes', false)),
});
