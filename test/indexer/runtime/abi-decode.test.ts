// ABI decoding with graph-node's strings (indexer/runtime/abi-decode.ts). graph-node decodes with
// alloy, whose sol_data::String::detokenize is String::from_utf8_lossy of the string's bytes: no
// byte-order mark dropped, no NUL trimmed, each maximal invalid UTF-8 sequence one U+FFFD. The
// expected values below are those rules applied to the bytes encoded; what holds no string must
// decode exactly as viem decodes it.
import { decodeAbiParameters, encodeAbiParameters, parseAbiParameters, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { abiDecoder, decodeAbi, utf8Lossy } from '../../../indexer/runtime/abi-decode.ts';

/** ABI data of one `string` whose bytes are `bytes` (a string and a bytes value encode alike). */
const stringOfBytes = (bytes: number[]): Hex =>
  encodeAbiParameters([{ type: 'bytes' }], [`0x${Buffer.from(bytes).toString('hex')}`]);

const oneString = parseAbiParameters('string');

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
      [{ name: '\uFEFF\0c', n: 7 }],
      ['\0d', '0x00ff'],
    ]);
  });

  it('decodes parameters that hold no string exactly as viem does', () => {
    const params = parseAbiParameters('uint256 a, bytes b, (address c, int8[] d) e');
    const data = encodeAbiParameters(params, [
      5n,
      '0x0000ef',
      { c: '0x00000000000000000000000000000000000000aa', d: [-1, 2] },
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

describe('lossy UTF-8 of raw bytes', () => {
  it('keeps a leading byte-order mark, which TextDecoder drops by default', () => {
    expect(utf8Lossy(Uint8Array.of(0xef, 0xbb, 0xbf, 0x68))).toBe('\uFEFFh');
  });
});
