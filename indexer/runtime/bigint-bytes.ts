// graph-ts represents BigInt as a Uint8Array holding the number in two's complement, little-endian,
// in the fewest bytes that keep the sign (num-bigint's to_signed_bytes_le: zero is one 0x00 byte,
// 255 is [0xff, 0x00], -1 is [0xff]). These two functions convert between that and JS bigint.

/** Minimal two's-complement little-endian bytes of `n`. */
export function bigintToSignedLE(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(1);
  if (n >= -0x800000000000n && n < 0x800000000000n) {
    // Fast path: 6 bytes of two's complement hold it; compute with doubles.
    let v = Number(n);
    const out = new Uint8Array(6);
    let len = 0;
    for (;;) {
      const byte = ((v % 256) + 256) % 256;
      out[len++] = byte;
      v = (v - byte) / 256;
      if ((v === 0 && byte < 0x80) || (v === -1 && byte >= 0x80)) return out.subarray(0, len);
    }
  }
  // Through hex: a non-negative m's minimal big-endian bytes, reversed; a negative n is the bitwise
  // complement of m = -n - 1. A sign byte is added when the top bit would say the wrong sign.
  const negative = n < 0n;
  const m = negative ? -n - 1n : n;
  let hex = m.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  const be = Buffer.from(hex, 'hex');
  const signByte = (be[0] as number) >= 0x80;
  const out = new Uint8Array(be.length + (signByte ? 1 : 0));
  for (let i = 0; i < be.length; i++) out[i] = be[be.length - 1 - i] as number;
  if (negative) for (let i = 0; i < out.length; i++) out[i] = ~(out[i] as number) & 0xff;
  return out;
}

/**
 * The value of the two's-complement little-endian bytes at `start` (none means zero), in 48-bit chunks that
 * doubles hold exactly, from the most significant one, which alone carries the sign.
 */
export function signedLEToBigint(bytes: Uint8Array, start = 0, length = bytes.length - start): bigint {
  if (length === 0) return 0n;
  let at = length - (length % 6 || 6);
  let top = 0;
  for (let i = length - 1; i >= at; i--) top = top * 256 + bytes[start + i]!;
  if ((bytes[start + length - 1]! & 0x80) !== 0) top -= 2 ** (8 * (length - at));
  let value = BigInt(top);
  while (at > 0) {
    at -= 6;
    let chunk = 0;
    for (let i = at + 5; i >= at; i--) chunk = chunk * 256 + bytes[start + i]!;
    value = (value << 48n) | BigInt(chunk);
  }
  return value;
}
