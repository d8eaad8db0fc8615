// Byte encodings of arbitrary-precision numbers whose memcmp order (SQLite's BLOB order) is their
// numeric order. BigInt and BigDecimal columns need exact comparison and ordering in SQL, which
// neither SQLite's 64-bit integers nor its doubles give; these keys make `<`, `=`, `IN` and
// `ORDER BY` exact for any magnitude and sign.

const ZERO = 0x80;
/** Past this many bytes of magnitude a BigInt has no key: the store cannot hold it. */
const MAX_KEY_MAGNITUDE_BYTES = 127;

function magnitudeBytes(n: bigint): Uint8Array {
  let hex = n.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  return Buffer.from(hex, 'hex');
}

/**
 * BigInt key: zero is [0x80]; a positive number is [0x80 + L, magnitude (L bytes, big-endian)];
 * a negative number is [0x80 - L, bitwise complement of the magnitude]. A longer magnitude sorts
 * further from zero, and complementing reverses the order among negatives of equal length.
 */
export function encodeBigIntKey(n: bigint): Buffer {
  if (n === 0n) return Buffer.from([ZERO]);
  if (n > 0n && n <= 0xffffffffffffn) {
    // fast path for the common small positive values (block numbers, timestamps, amounts): 1-6 bytes
    let v = Number(n);
    let length = 0;
    for (let t = v; t > 0; t = Math.floor(t / 256)) length++;
    const out = Buffer.allocUnsafe(length + 1);
    out[0] = ZERO + length;
    for (let i = length; i >= 1; i--) {
      out[i] = v % 256;
      v = Math.floor(v / 256);
    }
    return out;
  }
  const negative = n < 0n;
  const mag = magnitudeBytes(negative ? -n : n);
  if (mag.length > MAX_KEY_MAGNITUDE_BYTES)
    throw new Error(`BigInt of ${mag.length} bytes is too large to store`);
  const out = Buffer.allocUnsafe(mag.length + 1);
  out[0] = negative ? ZERO - mag.length : ZERO + mag.length;
  for (let i = 0; i < mag.length; i++) out[i + 1] = negative ? 0xff - mag[i]! : mag[i]!;
  return out;
}

/**
 * A key that compares with every key encodeBigIntKey makes as `n` compares with its number: `n`'s
 * own key, or, for a number too large to have one (so no stored value equals it), a key sorting
 * after (n > 0) or before (n < 0) them all. For filters: `x > n` with such an `n` matches nothing
 * and `x < n` every value, as graph-node's numeric comparisons have it.
 */
export function bigIntBoundKey(n: bigint): Buffer {
  const magnitude = n < 0n ? -n : n;
  if (magnitude >> BigInt(MAX_KEY_MAGNITUDE_BYTES * 8) === 0n) return encodeBigIntKey(n);
  // every key's head is 0x80 ± 1..127: [0x00] sorts first; [0xff, 0xff x 128] is longer than any
  // key beginning 0xff (127 magnitude bytes) while equal to the longest of them as far as it goes
  return n < 0n ? Buffer.from([0x00]) : Buffer.alloc(MAX_KEY_MAGNITUDE_BYTES + 2, 0xff);
}

export function decodeBigIntKey(key: Uint8Array): bigint {
  const head = key[0]!;
  if (head === ZERO) return 0n;
  const negative = head < ZERO;
  let hex = '';
  for (let i = 1; i < key.length; i++) {
    const b = negative ? 0xff - key[i]! : key[i]!;
    hex += b.toString(16).padStart(2, '0');
  }
  const mag = BigInt('0x' + hex);
  return negative ? -mag : mag;
}

const decimalPattern = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * BigDecimal key. The value is normalised to 0.d1d2..dn x 10^E (d1 != 0, dn != 0).
 * Zero is [0x80]. Positive: [0x81, E + 0x8000 as u16, digit bytes]; a shorter digit string is a
 * prefix and so sorts first, which is right (0.12 < 0.123). Negative: [0x7f, 0x7fff - E as u16,
 * complemented digit bytes, 0xff]; the terminator makes a shorter digit string sort after its
 * extensions (-0.12 > -0.123).
 */
export function encodeBigDecimalKey(text: string): Buffer {
  const m = decimalPattern.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new Error(`invalid BigDecimal: ${text}`);
  const negative = m[1] === '-';
  const intPart = m[2] ?? '';
  const fracPart = m[3] ?? '';
  const exp10 = Number(m[4] ?? '0');
  let digits = intPart + fracPart;
  // value = 0.digits x 10^(intPart.length + exp10), before stripping zeros
  let exponent = intPart.length + exp10;
  const lead = digits.length - digits.replace(/^0+/, '').length;
  digits = digits.slice(lead).replace(/0+$/, '');
  exponent -= lead;
  if (digits === '') return Buffer.from([ZERO]);
  if (exponent < -0x7fff || exponent > 0x7fff) throw new Error(`BigDecimal exponent out of range: ${text}`);
  const out = Buffer.allocUnsafe(3 + digits.length + (negative ? 1 : 0));
  const biased = exponent + 0x8000;
  if (negative) {
    out[0] = 0x7f;
    out.writeUInt16BE(0xffff - biased, 1);
    for (let i = 0; i < digits.length; i++) out[3 + i] = 0xff - digits.charCodeAt(i);
    out[out.length - 1] = 0xff;
  } else {
    out[0] = 0x81;
    out.writeUInt16BE(biased, 1);
    for (let i = 0; i < digits.length; i++) out[3 + i] = digits.charCodeAt(i);
  }
  return out;
}
