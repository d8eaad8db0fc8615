// graph-node's bound on a BigInt (scalar::BigInt::new, graph/src/data/store/scalar/bigint.rs),
// checked wherever one comes in: from a mapping (host functions, values read from its memory) and
// in a query's filter. The bit count is also what BigDecimal arithmetic estimates digits from.

/** graph-node's BigInt::MAX_BITS: 131,072 decimal digits, in bits. */
const MAX_BIGINT_BITS = 435_412;

/** Bounds of the numbers surely within the limit: measuring bits is left to the rare larger ones. */
const SURELY_SMALL = 1n << 4096n;

/** The number of bits of `n`'s magnitude, 0 for zero (num-bigint's `bits()`). */
export function bitLength(n: bigint): number {
  if (n === 0n) return 0;
  const hex = (n < 0n ? -n : n).toString(16);
  return (hex.length - 1) * 4 + (32 - Math.clz32(parseInt(hex[0]!, 16)));
}

/** graph-node's words refusing `n` as a BigInt, or undefined when it is within the limit. */
export function bigIntTooBig(n: bigint): string | undefined {
  if (n < SURELY_SMALL && n > -SURELY_SMALL) return undefined;
  // graph-node counts the sign bit too
  const bits = bitLength(n) + 1;
  return bits > MAX_BIGINT_BITS
    ? `BigInt is too big, total bits ${bits} (max ${MAX_BIGINT_BITS})`
    : undefined;
}
