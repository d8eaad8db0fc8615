// graph-node's BigDecimal arithmetic, reproduced exactly because results are stored and compared
// across indexers. graph-node wraps the Rust crate bigdecimal 0.1.2 and normalizes every value it
// creates: rounded to 34 significant digits by that crate's `with_prec`, then trailing zeros
// stripped. The crate's quirks are part of the contract and kept here on purpose:
// - digit counting of a negative coefficient uses only the bit-length estimate
//   floor(bits / 3.3219280949), which can be one digit short, so some negative values keep
//   35 significant digits;
// - `with_prec` rounds positive coefficients half-up on the first dropped digit but truncates
//   negative ones (its remainder test `p < 10 * r` is never true for a negative remainder);
// - division computes up to 100 digits, rounds half-up on the next digit of the magnitude,
//   applies the sign, then normalizes (so negative quotients end truncated, at 34 or 35 digits);
// - `toString` prints plain notation, never an exponent ("1E+20" prints 21 characters).
import { bitLength } from './bigint-limit.ts';

/** A decimal number: `int * 10^-scale` (bigdecimal's "scale" is the negated exponent). */
export interface Decimal {
  int: bigint;
  scale: number;
}

const MAX_SIGNIFICANT_DIGITS = 34;
/** IEEE-754 decimal128 exponent limits, checked by graph-node on values coming from a mapping. */
const MIN_EXP = -6143;
const MAX_EXP = 6144;

const powersOfTen: bigint[] = [1n];
function tenTo(n: number): bigint {
  while (powersOfTen.length <= n) powersOfTen.push((powersOfTen[powersOfTen.length - 1] as bigint) * 10n);
  return powersOfTen[n] as bigint;
}

/** bigdecimal 0.1.2 `count_decimal_digits`, including its under-count for negative values. */
function countDecimalDigits(int: bigint): number {
  if (int === 0n) return 1;
  let digits = Math.floor(bitLength(int) / 3.3219280949);
  let num = tenTo(digits);
  while (int >= num) {
    num *= 10n;
    digits += 1;
  }
  return digits;
}

/** bigdecimal 0.1.2 `get_rounding_term`: 1 when the leading digit is >= 5 (always 1 for negatives). */
function roundingTerm(num: bigint): bigint {
  if (num === 0n) return 0n;
  let n = tenTo(Math.floor(bitLength(num) / 3.3219280949));
  for (;;) {
    if (num < n) return 1n;
    n *= 5n;
    if (num < n) return 0n;
    n *= 2n;
  }
}

/** bigdecimal 0.1.2 `with_prec`. */
function withPrec(d: Decimal, prec: number): Decimal {
  const digits = countDecimalDigits(d.int);
  if (digits > prec) {
    const diff = digits - prec;
    const p = tenTo(diff);
    let q = d.int / p;
    const r = d.int % p;
    if (p < 10n * r) q += roundingTerm(r);
    return { int: q, scale: d.scale - diff };
  }
  if (digits < prec) {
    const diff = prec - digits;
    return { int: d.int * tenTo(diff), scale: d.scale + diff };
  }
  return d;
}

/** graph-node `BigDecimal::normalized`: 34 significant digits, no trailing zeros, zero is 0e0. */
function normalize(d: Decimal): Decimal {
  if (d.int === 0n) return { int: 0n, scale: 0 };
  const rounded = withPrec(d, MAX_SIGNIFICANT_DIGITS);
  let int = rounded.int;
  let scale = rounded.scale;
  while (int % 10n === 0n) {
    int /= 10n;
    scale -= 1;
  }
  return { int, scale };
}

/** graph-node `BigDecimal::new(digits, exp)`: the value digits * 10^exp, normalized. */
export function decimalFromParts(digits: bigint, exp: number): Decimal {
  return normalize({ int: digits, scale: -exp });
}

function rescale(d: Decimal, scale: number): bigint {
  return d.int * tenTo(scale - d.scale);
}

export function decimalPlus(x: Decimal, y: Decimal): Decimal {
  const scale = Math.max(x.scale, y.scale);
  return normalize({ int: rescale(x, scale) + rescale(y, scale), scale });
}

export function decimalMinus(x: Decimal, y: Decimal): Decimal {
  const scale = Math.max(x.scale, y.scale);
  return normalize({ int: rescale(x, scale) - rescale(y, scale), scale });
}

export function decimalTimes(x: Decimal, y: Decimal): Decimal {
  return normalize({ int: x.int * y.int, scale: x.scale + y.scale });
}

export function decimalEquals(x: Decimal, y: Decimal): boolean {
  const scale = Math.max(x.scale, y.scale);
  return rescale(x, scale) === rescale(y, scale);
}

/** bigdecimal 0.1.2 `impl_division` on coefficients (before graph-node's normalization). */
function divideCoefficients(num: bigint, den: bigint, scale: number, maxPrecision: number): Decimal {
  if (num === 0n) return { int: 0n, scale: 0 };
  if (num < 0n || den < 0n) {
    const positive = divideCoefficients(num < 0n ? -num : num, den < 0n ? -den : den, scale, maxPrecision);
    return num < 0n !== den < 0n ? { int: -positive.int, scale: positive.scale } : positive;
  }
  let n = num;
  let s = scale;
  while (n < den) {
    s += 1;
    n *= 10n;
  }
  let quotient = n / den;
  let remainder = n % den;
  if (remainder === 0n) return { int: quotient, scale: s };
  let precision = countDecimalDigits(quotient);
  remainder *= 10n;
  while (remainder !== 0n && precision < maxPrecision) {
    quotient = quotient * 10n + remainder / den;
    remainder = (remainder % den) * 10n;
    precision += 1;
    s += 1;
  }
  if (remainder !== 0n) quotient += roundingTerm(remainder / den);
  return { int: quotient, scale: s };
}

/** graph-node's bigDecimal.dividedBy (at most 100 digits computed, then normalized). */
export function decimalDividedBy(x: Decimal, y: Decimal): Decimal {
  if (y.int === 0n) throw new Error(`attempted to divide BigDecimal \`${decimalToString(x)}\` by zero`);
  if (x.int === 0n || decimalEquals(y, { int: 1n, scale: 0 })) return normalize(x);
  const scale = x.scale - y.scale;
  if (x.int === y.int) return normalize({ int: 1n, scale });
  return normalize(divideCoefficients(x.int, y.int, scale, 100));
}

/** bigdecimal 0.1.2 Display: plain notation, '-' for negatives, no exponent. */
export function decimalToString(d: Decimal): string {
  const negative = d.int < 0n;
  let digits = (negative ? -d.int : d.int).toString();
  let before: string;
  let after: string;
  if (d.scale >= digits.length) {
    before = '0';
    after = '0'.repeat(d.scale - digits.length) + digits;
  } else {
    const location = digits.length - d.scale;
    if (location > digits.length) {
      digits += '0'.repeat(location - digits.length);
      before = digits;
      after = '';
    } else {
      before = digits.slice(0, location);
      after = digits.slice(location);
    }
  }
  const body = after.length > 0 ? `${before}.${after}` : before;
  return negative ? `-${body}` : body;
}

/** num-bigint 0.2 `BigInt::from_str_radix(s, 10)`: optional sign, digits, '_' separators not leading. */
export function parseBigIntDecimal(s: string): bigint | null {
  let body = s;
  let negative = false;
  if (body.startsWith('-') && !body.startsWith('-+')) {
    negative = true;
    body = body.slice(1);
  }
  if (body.startsWith('+') && !body.startsWith('++')) body = body.slice(1);
  if (body.length === 0 || body.startsWith('_')) return null;
  const clean = body.replaceAll('_', '');
  if (!/^[0-9]*$/.test(clean)) return null;
  const value = clean.length === 0 ? 0n : BigInt(clean);
  return negative ? -value : value;
}

/** bigdecimal 0.1.2 `from_str` followed by graph-node's normalization. */
export function decimalFromString(s: string): Decimal {
  const fail = (): never => {
    throw new Error(`string  is not a BigDecimal: '${s}'`);
  };
  let base = s;
  let exponent = 0n;
  const e = s.search(/[eE]/);
  if (e >= 0) {
    base = s.slice(0, e);
    let expText = s.slice(e + 1);
    if (expText.startsWith('+')) expText = expText.slice(1);
    // Rust's i64::from_str: optional sign then ASCII digits, within i64.
    if (!/^[+-]?[0-9]+$/.test(expText)) fail();
    exponent = BigInt(expText);
    if (BigInt.asIntN(64, exponent) !== exponent) fail();
  }
  if (base === '') fail();
  let digits = base;
  let offset = 0;
  const dot = base.indexOf('.');
  if (dot >= 0) {
    const trail = base.slice(dot + 1);
    digits = base.slice(0, dot) + trail;
    offset = trail.length;
  }
  const int = parseBigIntDecimal(digits);
  if (int === null) return fail();
  // bigdecimal's `decimal_offset - exponent_value`, an i64 subtraction that wraps in graph-node's
  // release build
  return normalize({ int, scale: Number(BigInt.asIntN(64, BigInt(offset) - exponent)) });
}

/** graph-node's exponent check on a BigDecimal read from mapping memory. */
export function checkExponent(d: Decimal): void {
  const exp = -d.scale;
  if (exp < MIN_EXP || exp > MAX_EXP) {
    throw new Error(`big decimal exponent \`${exp}\` is outside the \`${MIN_EXP}\` to \`${MAX_EXP}\` range`);
  }
}
