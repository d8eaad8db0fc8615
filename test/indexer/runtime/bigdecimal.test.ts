// BigDecimal host functions against golden values worked out by hand from graph-node's rules
// (graph/src/data/store/scalar/bigdecimal.rs over the bigdecimal 0.1.2 crate):
//  N  normalization: with_prec(34) then trailing zeros stripped; zero is 0e0.
//  R+ positive coefficients: cut to 34 digits, +1 when the remainder has as many digits as were cut
//     and its leading digit is >= 5 (half-up on the first dropped digit).
//  R- negative coefficients: never rounded (the remainder test `p < 10 * r` fails for r < 0), and the
//     digit count is the bit-length estimate floor(bits / 3.3219280949), which can be one short, so
//     such values may keep 35 significant digits.
//  D  division: quotient of the magnitudes to 100 digits, +1 if the next digit is >= 5, sign applied,
//     then N (so negative quotients are truncated, with the R- digit count).
//  S  toString: plain notation, '-' prefix, no exponent, no trailing zeros after N.
// Each value is checked on the TypeScript implementation and again through the probe subgraph's
// wasm, where graph-ts calls bigDecimal.* with operands and results crossing mapping memory.
import { describe, expect, it } from 'vitest';
import {
  decimalDividedBy,
  decimalEquals,
  decimalFromString,
  decimalMinus,
  decimalPlus,
  decimalTimes,
  decimalToString,
} from '../../../indexer/runtime/decimal.ts';
import { HandlerError } from '../../../indexer/runtime/handler-error.ts';
import { useProbeHarness } from './runtime-harness.ts';

type Op = 'plus' | 'minus' | 'times' | 'div' | 'equals' | 'toString';
const probeKind: Record<Op, number> = { plus: 0, minus: 1, times: 2, div: 3, equals: 4, toString: 5 };

interface Golden {
  op: Op;
  a: string;
  b?: string;
  expected: string;
  why: string;
}

const zeros = (n: number): string => '0'.repeat(n);

const golden: Golden[] = [
  { op: 'plus', a: '0.1', b: '0.2', expected: '0.3', why: 'exact sum 3e-1; N leaves it' },
  {
    op: 'plus',
    a: '1',
    b: `0.${zeros(33)}5`,
    expected: `1.${zeros(32)}1`,
    why: 'sum 1(33 zeros)5 has 35 digits; R+ cuts 1 digit, remainder 5 >= 5 rounds up to 1(32 zeros)1 at scale 33',
  },
  {
    op: 'plus',
    a: '1',
    b: `0.${zeros(33)}4`,
    expected: '1',
    why: 'as above with remainder 4: no rounding, then trailing zeros stripped',
  },
  {
    op: 'plus',
    a: '1',
    b: `0.${zeros(34)}5`,
    expected: '1',
    why: 'sum has 36 digits; the 2 cut digits are "05", fewer digits than cut (leading zero), so no rounding',
  },
  {
    op: 'minus',
    a: '-1',
    b: `0.${zeros(33)}5`,
    expected: `-1.${zeros(33)}5`,
    why: 'R-: |coefficient| 10^34+5 has 113 bits, floor(113/3.3219) = 34 digits counted, so nothing is cut (35 digits kept)',
  },
  {
    op: 'minus',
    a: '1.5',
    b: '1.5',
    expected: '0',
    why: 'zero normalizes to 0e0 and prints "0", never "-0" or "0.0"',
  },
  {
    op: 'times',
    a: '100000000000000000001',
    b: '100000000000000000001',
    expected: `1${zeros(19)}2${zeros(20)}`,
    why: 'exact 10^40 + 2*10^20 + 1 (41 digits); R+ cuts 7 digits "0000001" (leading zero: no rounding); printed without exponent',
  },
  { op: 'times', a: '-1', b: '0', expected: '0', why: 'negative zero does not exist: coefficient 0' },
  { op: 'times', a: '0.1', b: '0.1', expected: '0.01', why: 'coefficients 1*1, scales 1+1' },
  {
    op: 'div',
    a: '2',
    b: '3',
    expected: `0.${'6'.repeat(33)}7`,
    why: 'D: 100 sixes, next digit 6 rounds to ...67; R+ cuts 66 digits (leading 6 >= 5) giving 33 sixes and a 7',
  },
  {
    op: 'div',
    a: '-2',
    b: '3',
    expected: `-0.${'6'.repeat(35)}`,
    why: 'D then R-: the 100-digit coefficient counts as 99 digits (331.6 bits -> 332/3.3219 = 99), 65 are cut by truncation: 35 sixes',
  },
  {
    op: 'div',
    a: '1',
    b: '3',
    expected: `0.${'3'.repeat(34)}`,
    why: 'D: 100 threes (next digit 3); R+ cuts 66 digits led by 3: no rounding',
  },
  {
    op: 'div',
    a: '-1',
    b: '3',
    expected: `-0.${'3'.repeat(35)}`,
    why: 'R-: 331 bits -> 99 digits counted, 65 cut, 35 threes kept',
  },
  { op: 'div', a: '1', b: '8', expected: '0.125', why: 'D terminates exactly after 3 digits' },
  {
    op: 'div',
    a: '5',
    b: '0.5',
    expected: '10',
    why: 'equal coefficients 5 and 5: quotient 1 at scale 0-1 = -1',
  },
  { op: 'div', a: '7', b: '1', expected: '7', why: 'division by one returns the dividend' },
  {
    op: 'equals',
    a: '1',
    b: `1.${zeros(33)}1`,
    expected: 'true',
    why: 'N of 1(33 zeros)1 (35 digits) drops the last digit (remainder 1 has a leading zero): equals 1',
  },
  { op: 'equals', a: '1.0', b: '1', expected: 'true', why: 'compared by value after N' },
  { op: 'equals', a: '0.3', b: '0.30000000001', expected: 'false', why: 'different values' },
  {
    op: 'toString',
    a: '123456789012345678901234567890123456789',
    expected: '123456789012345678901234567890123500000',
    why: 'parsing normalizes: R+ cuts 5 digits "56789" (leading 5 rounds up) to ...1235 at exponent 5',
  },
  {
    op: 'toString',
    a: '-123456789012345678901234567890123456789',
    expected: '-123456789012345678901234567890123450000',
    why: 'R-: 127 bits -> 38 digits counted, 4 cut by truncation, 35 significant digits kept',
  },
  { op: 'toString', a: '1e20', expected: `1${zeros(20)}`, why: 'S: positive exponent printed as zeros' },
  { op: 'toString', a: '1E+3', expected: '1000', why: "exponent sign '+' accepted" },
  { op: 'toString', a: '1.5e-7', expected: '0.00000015', why: 'S: leading zeros after the point' },
  { op: 'toString', a: '-0.000', expected: '0', why: 'negative zero prints 0' },
  {
    op: 'toString',
    a: '100.00',
    expected: '100',
    why: 'trailing zeros stripped by N, exponent 2 printed as zeros',
  },
  { op: 'toString', a: '-.5', expected: '-0.5', why: 'empty integer part is accepted' },
  { op: 'toString', a: '1_000', expected: '1000', why: "num-bigint accepts '_' separators that do not lead" },
];

function evaluate(g: Golden): string {
  const a = decimalFromString(g.a);
  const b = g.b === undefined ? a : decimalFromString(g.b);
  switch (g.op) {
    case 'plus':
      return decimalToString(decimalPlus(a, b));
    case 'minus':
      return decimalToString(decimalMinus(a, b));
    case 'times':
      return decimalToString(decimalTimes(a, b));
    case 'div':
      return decimalToString(decimalDividedBy(a, b));
    case 'equals':
      return String(decimalEquals(a, b));
    case 'toString':
      return decimalToString(a);
  }
}

describe('BigDecimal arithmetic (TypeScript implementation)', () => {
  for (const g of golden) {
    it(`${g.op}(${g.a}${g.b === undefined ? '' : `, ${g.b}`}) is ${g.expected}: ${g.why}`, () => {
      expect(evaluate(g)).toBe(g.expected);
    });
  }

  it('rejects strings that are not decimals with graph-node wording', () => {
    for (const bad of ['abc', '', '1e', '1.2.3', '--1', '1 ', '_1', '.', '-']) {
      expect(() => decimalFromString(bad)).toThrow(`string  is not a BigDecimal: '${bad}'`);
    }
  });

  it("rejects an exponent outside i64, as bigdecimal's i64::from_str does", () => {
    for (const bad of ['1e18446744073709551616', '1e9223372036854775808', '1E-9223372036854775809']) {
      expect(() => decimalFromString(bad)).toThrow(`string  is not a BigDecimal: '${bad}'`);
    }
  });

  it('accepts exponents up to the ends of i64', () => {
    expect(decimalFromString('1e9223372036854775807').int).toBe(1n);
    expect(decimalFromString('1e-9223372036854775807').int).toBe(1n);
    expect(decimalFromString('1e-9223372036854775807').scale).toBeGreaterThan(0);
  });

  it('rejects division by zero naming the dividend', () => {
    expect(() => decimalDividedBy(decimalFromString('1.5'), decimalFromString('0'))).toThrow(
      'attempted to divide BigDecimal `1.5` by zero',
    );
  });
});

describe('BigDecimal host functions through the probe wasm', () => {
  const harness = useProbeHarness();

  it('returns every golden value from bigDecimal.* called by the mapping', () => {
    for (const g of golden) {
      const input = g.b === undefined ? g.a : `${g.a}|${g.b}`;
      expect(harness().probe(probeKind[g.op], input), `${g.op}(${input})`).toBe(g.expected);
    }
  });

  it('fails the handler when the mapping divides a BigDecimal by zero', () => {
    expect(() => harness().probe(probeKind.div, '2.5|0')).toThrow(HandlerError);
    expect(() => harness().probe(probeKind.div, '2.5|0')).toThrow(
      'attempted to divide BigDecimal `2.5` by zero',
    );
  });

  it('rejects a BigDecimal read from the mapping with an exponent outside decimal128 range', () => {
    expect(harness().probe(probeKind.toString, '1e6144')).toBe(`1${zeros(6144)}`);
    expect(() => harness().probe(probeKind.toString, '1e-6144')).toThrow(
      'big decimal exponent `-6144` is outside the `-6143` to `6144` range',
    );
  });

  it('fails the handler on BigDecimal.fromString of an exponent past i64, where it gave 1', () => {
    expect(() => harness().probe(probeKind.toString, '1e18446744073709551616')).toThrow(
      "string  is not a BigDecimal: '1e18446744073709551616'",
    );
  });

  it('divides a BigInt by a BigDecimal (bigInt.dividedByDecimal)', () => {
    expect(harness().probe(11, '10|4')).toBe('2.5');
    expect(harness().probe(11, '-2|3')).toBe(`-0.${'6'.repeat(35)}`);
  });
});
