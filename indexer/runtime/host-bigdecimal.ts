// bigDecimal.* host functions: read both operands from mapping memory (which normalizes them, as
// graph-node's conversion does), apply graph-node's arithmetic from decimal.ts, write the result.
import { readBigDecimal, writeBigDecimal } from './asc-values.ts';
import {
  decimalDividedBy,
  decimalEquals,
  decimalFromString,
  decimalMinus,
  decimalPlus,
  decimalTimes,
  decimalToString,
  type Decimal,
} from './decimal.ts';
import type { HostEnv, HostFunctions } from './host-context.ts';

function binary(op: (x: Decimal, y: Decimal) => Decimal): (env: HostEnv) => (x: number, y: number) => number {
  return (env) => (x, y) =>
    writeBigDecimal(env.heap, op(readBigDecimal(env.heap, x), readBigDecimal(env.heap, y)));
}

export const bigDecimalFunctions: HostFunctions = {
  'bigDecimal.plus': binary(decimalPlus),
  'bigDecimal.minus': binary(decimalMinus),
  'bigDecimal.times': binary(decimalTimes),
  'bigDecimal.dividedBy': binary(decimalDividedBy),
  'bigDecimal.equals': (env) => (x: number, y: number) =>
    decimalEquals(readBigDecimal(env.heap, x), readBigDecimal(env.heap, y)) ? 1 : 0,
  'bigDecimal.toString': (env) => (x: number) =>
    env.heap.writeString(decimalToString(readBigDecimal(env.heap, x))),
  'bigDecimal.fromString': (env) => (s: number) =>
    writeBigDecimal(env.heap, decimalFromString(env.heap.readString(s))),
};
