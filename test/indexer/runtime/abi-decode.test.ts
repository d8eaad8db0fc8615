// ABI decoding with graph-node's rules (indexer/runtime/abi-decode.ts). graph-node decodes with
// alloy, whose sol_data::String::detokenize is String::from_utf8_lossy of the string's bytes: no
// byte-order mark dropped, no NUL trimmed, each maximal invalid UTF-8 sequence one U+FFFD; and
// which checks no word (alloy-dyn-abi's DynSolType::detokenize): an intN is its whole word read as
// an int256, a uintN its whole word, a bool any nonzero word. The expected values below are those
// rules applied to the bytes encoded; addresses, bytes and 256-bit integers decode exactly as viem
// decodes them.
import { decodeAbiParameters, encodeAbiParameters, parseAbiParameters, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { abiDecoder, decodeAbi, utf8Lossy } from '../../../indexer/runtime/abi-decode.ts';

/** ABI data of one `string` whose bytes are `bytes` (a string and a bytes value encode alike). */
const stringOfBytes = (bytes: number[]): Hex =>
  encodeAbiParameters([{ type: 'bytes' }], [`0x${Buffer.from(bytes).toString('hex')}`]);

const oneString = parseAbiParameters('string');

/** ABI data of the 32-byte words given as hex numbers. */
const words = (...values: bigint[]): Hex =>
  `0x${values.map((v) => v.toString(16).padStart(64, '0')).join('')}`;

describe('ABI strings as graph-node decodes them', () => {
  it('keeps a leading byte-order mark', () => {
    const data = encodeAbiParameters(oneString, ['\uFEFFipfs://x']);
    expect(decodeAbi(oneString, data)).toEqual(['\uFEFFipfs://x']);
  });

  it('keeps NUL bytes at the start, inside and at the end of a string', () => {
    const data = stringOfBytes([0, 0, 0x6c, 0x61, 0x74, 0x65, 0, 0x21, 0]);
    expect(decodeAbi(oneString, data)).toEqual(['\0\0late\0!\0']);
  });

  it('reads each maximal invalid UTF-8 sequence as one U+FFFD, as from_utf8_lossy does', () => {
    // 0xff is never valid; 0xe2 0x82 starts a 3-byte sequence cut short by 'a'; 0xc3 ends the data
    const data = stringOfBytes([0xff, 0x68, 0xe2, 0x82, 0x61, 0xc3]);
    expect(decodeAbi(oneString, data)).toEqual(['\uFFFDh\uFFFDa\uFFFD']);
  });

  it('reads strings inside arrays and tuples the same way, in the shapes viem gives them', () => {
    const params = parseAbiParameters(
      'string[] list, string[2] pair, (string name, uint8 n)[] named, (string, bytes) unnamed',
    );
    const data = encodeAbiParameters(params, [
      ['\0a', '\uFEFF'],
      ['b\0', ''],
      [{ name: '\uFEFF\0c', n: 7 }],
      ['\0d', '0x00ff'],
    ]);
    expect(decodeAbi(params, data)).toEqual([
      ['\0a', '\uFEFF'],
      ['b\0', ''],
      [{ name: '\uFEFF\0c', n: 7n }],
      ['\0d', '0x00ff'],
    ]);
  });

  it('decodes addresses, bytes and 256-bit integers exactly as viem does', () => {
    const params = parseAbiParameters('uint256 a, bytes b, (address c, int256[] d) e');
    const data = encodeAbiParameters(params, [
      5n,
      '0x0000ef',
      { c: '0x00000000000000000000000000000000000000aa', d: [-1n, 2n] },
    ]);
    expect(abiDecoder(params)(data)).toEqual(decodeAbiParameters(params, data));
  });

  it('throws on a string longer than the data holding it', () => {
    // offset 0x20, then a length of 0x40 bytes with only 0x20 of them present
    const data =
      `0x${(0x20).toString(16).padStart(64, '0')}${(0x40).toString(16).padStart(64, '0')}${'61'.repeat(32)}` as Hex;
    expect(() => decodeAbi(oneString, data)).toThrow();
  });
});

describe('ABI words as graph-node decodes them', () => {
  it('reads an intN as its whole word, an int256: 0x…80 is 128 as an int8 and all ones is -1', () => {
    expect(decodeAbi(parseAbiParameters('int8 a, int8 b'), words(0x80n, 2n ** 256n - 1n))).toEqual([
      128n,
      -1n,
    ]);
  });

  it('reads a narrow uintN as its whole word, exact beyond 2^53 where viem would give a lossy Number', () => {
    expect(decodeAbi(parseAbiParameters('uint8'), words(2n ** 60n + 1n))).toEqual([2n ** 60n + 1n]);
  });

  it('reads a bool as whether its word is nonzero, where viem throws on a word other than 0 or 1', () => {
    expect(decodeAbi(parseAbiParameters('bool a, bool b, bool c'), words(2n, 0n, 2n ** 255n))).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('applies the same rules inside arrays and tuples, named or not', () => {
    const params = parseAbiParameters('bool[] flags, (int8 small, bool on) named, (uint16, bool)');
    // offset of flags, then named's two words, then the unnamed tuple's, then flags: length 2, 2, 0
    const data = words(0xa0n, 0xffn, 7n, 2n ** 20n, 3n, 2n, 2n, 0n);
    expect(decodeAbi(params, data)).toEqual([[true, false], { small: 255n, on: true }, [2n ** 20n, true]]);
  });
});

describe('lossy UTF-8 of raw bytes', () => {
  it('keeps a leading byte-order mark, which TextDecoder drops by default', () => {
    expect(utf8Lossy(Uint8Array.of(0xef, 0xbb, 0xbf, 0x68))).toBe('\uFEFFh');
  });
});
