// bigInt.* and the BigInt type conversions, with graph-node's results and error messages:
// division truncates toward zero, `mod` takes the dividend's sign, shifts are arithmetic
// (rounding toward negative infinity), `pow` is limited by graph-node's BigInt size cap, and
// bigIntToHex prints the magnitude only ("0x0" for zero), as graph-node does.
import { checkBigIntSize, readBigDecimal, readBigInt, writeBigDecimal, writeBigInt } from './asc-values.ts';
import { decimalDividedBy, decimalFromParts, parseBigIntDecimal } from './decimal.ts';
import type { HostEnv, HostFunctions } from './host-context.ts';

export function bigIntDividedBy(x: bigint, y: bigint): bigint {
  if (y === 0n) throw new Error(`attempted to divide BigInt \`${x}\` by zero`);
  return x / y;
}

export function bigIntMod(x: bigint, y: bigint): bigint {
  if (y === 0n) throw new Error(`attempted to calculate the remainder of \`${x}\` with a divisor of zero`);
  return x % y;
}

function bigIntPow(x: bigint, exp: number): bigint {
  return checkBigIntSize(x ** BigInt(exp & 0xff));
}

function bigIntFromString(s: string): bigint {
  const n = parseBigIntDecimal(s);
  if (n === null) throw new Error(`string is not a BigInt: \`${s}\``);
  return n;
}

/** graph-node bigIntToHex: the magnitude's big-endian hex without leading zeros. */
export function bigIntToHex(n: bigint): string {
  if (n === 0n) return '0x0';
  return `0x${(n < 0n ? -n : n).toString(16)}`;
}

type Binary = (x: bigint, y: bigint) => bigint;

function binary(op: Binary): (env: HostEnv) => (x: number, y: number) => number {
  return (env) => (x, y) => writeBigInt(env.heap, op(readBigInt(env.heap, x), readBigInt(env.heap, y)));
}

function shift(
  op: (x: bigint, bits: bigint) => bigint,
): (env: HostEnv) => (x: number, bits: number) => number {
  return (env) => (x, bits) => writeBigInt(env.heap, op(readBigInt(env.heap, x), BigInt(bits & 0xff)));
}

export const bigIntFunctions: HostFunctions = {
  'bigInt.plus': binary((x, y) => x + y),
  'bigInt.minus': binary((x, y) => x - y),
  'bigInt.times': binary((x, y) => x * y),
  'bigInt.dividedBy': binary(bigIntDividedBy),
  'bigInt.mod': binary(bigIntMod),
  'bigInt.bitOr': binary((x, y) => x | y),
  'bigInt.bitAnd': binary((x, y) => x & y),
  'bigInt.leftShift': shift((x, bits) => x << bits),
  'bigInt.rightShift': shift((x, bits) => x >> bits),
  'bigInt.pow': (env) => (x: number, exp: number) =>
    writeBigInt(env.heap, bigIntPow(readBigInt(env.heap, x), exp)),
  'bigInt.fromString': (env) => (s: number) =>
    writeBigInt(env.heap, bigIntFromString(env.heap.readString(s))),
  'bigInt.dividedByDecimal': (env) => (x: number, y: number) => {
    const dividend = decimalFromParts(readBigInt(env.heap, x), 0);
    return writeBigDecimal(env.heap, decimalDividedBy(dividend, readBigDecimal(env.heap, y)));
  },
  'typeConversion.bigIntToString': (env) => (n: number) =>
    env.heap.writeString(readBigInt(env.heap, n).toString()),
  'typeConversion.bigIntToHex': (env) => (n: number) =>
    env.heap.writeString(bigIntToHex(readBigInt(env.heap, n))),
};
