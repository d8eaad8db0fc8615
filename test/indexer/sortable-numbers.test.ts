// The byte keys that make BigInt and BigDecimal columns compare exactly in SQLite: their memcmp
// order must be the numeric order for any sign and magnitude, and BigInt keys must round-trip. A
// filter's number too large to store compares with stored keys as the numbers would.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  bigIntBoundKey,
  decodeBigIntKey,
  encodeBigDecimalKey,
  encodeBigIntKey,
} from '../../indexer/store/sortable-numbers.ts';

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

/** Exact comparison of two decimal strings as rationals: a = ai / 10^af. */
function compareDecimals(a: string, b: string): number {
  const parse = (s: string) => {
    const [int, frac = ''] = s.split('.');
    return { n: BigInt((int ?? '0') + frac), scale: frac.length };
  };
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const xn = x.n * 10n ** BigInt(scale - x.scale);
  const yn = y.n * 10n ** BigInt(scale - y.scale);
  return xn < yn ? -1 : xn > yn ? 1 : 0;
}

const bigints = fc.oneof(
  fc.bigInt({ min: -(2n ** 256n), max: 2n ** 256n }),
  fc.bigInt({ min: -300n, max: 300n }),
  fc.constantFrom(0n, 1n, -1n, 255n, 256n, -255n, -256n, 2n ** 255n - 1n, -(2n ** 255n), 2n ** 256n - 1n),
);

const decimals = fc
  .tuple(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.integer({ min: 0, max: 30 }))
  .map(([n, scale]) => {
    const negative = n < 0n;
    const digits = (negative ? -n : n).toString().padStart(scale + 1, '0');
    const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
    return (negative ? '-' : '') + text;
  });

describe('sortable number keys', () => {
  it('round-trips BigInt values through their key', () => {
    fc.assert(fc.property(bigints, (n) => decodeBigIntKey(encodeBigIntKey(n)) === n));
  });

  it('orders BigInt keys bytewise exactly as the numbers', () => {
    fc.assert(
      fc.property(bigints, bigints, (a, b) => {
        const expected = a < b ? -1 : a > b ? 1 : 0;
        return sign(Buffer.compare(encodeBigIntKey(a), encodeBigIntKey(b))) === expected;
      }),
    );
  });

  it('compares a number of any size with stored keys as the numbers compare, equal to none it is not', () => {
    // the store holds magnitudes of up to 127 bytes: below 2^1016
    const storable = fc.bigInt({ min: -(2n ** 1016n) + 1n, max: 2n ** 1016n - 1n });
    const beyond = fc.bigInt({ min: 2n ** 1016n, max: 2n ** 1100n });
    const any = fc.oneof(
      bigints,
      storable,
      beyond,
      beyond.map((n) => -n),
    );
    fc.assert(
      fc.property(fc.oneof(bigints, storable), any, (stored, n) => {
        const expected = stored < n ? -1 : stored > n ? 1 : 0;
        return sign(Buffer.compare(encodeBigIntKey(stored), bigIntBoundKey(n))) === expected;
      }),
      { numRuns: 2000 },
    );
  });

  it('orders BigDecimal keys bytewise exactly as the numbers', () => {
    fc.assert(
      fc.property(decimals, decimals, (a, b) => {
        return sign(Buffer.compare(encodeBigDecimalKey(a), encodeBigDecimalKey(b))) === compareDecimals(a, b);
      }),
      { numRuns: 2000 },
    );
  });

  it('gives equal BigDecimal values equal keys whatever their spelling', () => {
    expect(encodeBigDecimalKey('1.500')).toEqual(encodeBigDecimalKey('1.5'));
    expect(encodeBigDecimalKey('-0.0')).toEqual(encodeBigDecimalKey('0'));
    expect(encodeBigDecimalKey('15e-1')).toEqual(encodeBigDecimalKey('1.5'));
    expect(encodeBigDecimalKey('00120')).toEqual(encodeBigDecimalKey('1.2e2'));
  });
});
