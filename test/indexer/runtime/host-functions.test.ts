// BigInt encoding and arithmetic edge cases, and the other host functions (json, crypto, log,
// abort, unimplemented imports) as the probe subgraph's wasm calls them. Expected values follow
// graph-node: num-bigint's minimal two's-complement little-endian bytes, truncating division,
// dividend-signed remainder, floor right shift, bigIntToHex of the magnitude; strings as graph-node
// decodes them (lossy UTF-8, a byte-order mark kept) and reads them back (NULs dropped).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keccak256, toBytes, type Hex, type TransactionReceipt } from 'viem';
import { bigintToSignedLE, signedLEToBigint } from '../../../indexer/runtime/bigint-bytes.ts';
import { bigIntDividedBy, bigIntMod, bigIntToHex } from '../../../indexer/runtime/host-bigint.ts';
import type { HostEnv } from '../../../indexer/runtime/host-context.ts';
import { bytesToString } from '../../../indexer/runtime/host-conversion.ts';
import { linkImports, UnimplementedHostFunctionError } from '../../../indexer/runtime/host-imports.ts';
import { parseJson } from '../../../indexer/runtime/host-json.ts';
import { blockHash, makeLog, probeAbi, probeAddress, txHash, useProbeHarness } from './runtime-harness.ts';

const max256 = 2n ** 256n - 1n;

describe('BigInt byte encoding', () => {
  const cases: [bigint, number[]][] = [
    [0n, [0x00]],
    [1n, [0x01]],
    [127n, [0x7f]],
    [128n, [0x80, 0x00]],
    [255n, [0xff, 0x00]],
    [-1n, [0xff]],
    [-128n, [0x80]],
    [-129n, [0x7f, 0xff]],
    [-256n, [0x00, 0xff]],
  ];
  for (const [value, bytes] of cases) {
    it(`encodes ${value} as [${bytes.map((b) => b.toString(16)).join(' ')}] and back`, () => {
      expect([...bigintToSignedLE(value)]).toEqual(bytes);
      expect(signedLEToBigint(Uint8Array.from(bytes))).toBe(value);
    });
  }

  it('encodes 2^256-1 in 33 bytes: 32 x 0xff and a 0x00 sign byte', () => {
    const bytes = bigintToSignedLE(max256);
    expect(bytes.length).toBe(33);
    expect([...bytes.subarray(0, 32)].every((b) => b === 0xff)).toBe(true);
    expect(bytes[32]).toBe(0);
    expect(signedLEToBigint(bytes)).toBe(max256);
  });

  it('encodes -2^255 in 32 bytes with only the top bit of the last byte set', () => {
    const bytes = bigintToSignedLE(-(2n ** 255n));
    expect(bytes.length).toBe(32);
    expect(bytes[31]).toBe(0x80);
    expect(signedLEToBigint(bytes)).toBe(-(2n ** 255n));
  });

  it('round-trips any integer up to 300 bits in the fewest bytes that keep its sign', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }), (n) => {
        const bytes = bigintToSignedLE(n);
        expect(signedLEToBigint(bytes)).toBe(n);
        // Minimal: without its last byte the value (or its sign) would change.
        if (bytes.length > 1) expect(signedLEToBigint(bytes.subarray(0, bytes.length - 1))).not.toBe(n);
      }),
      { numRuns: 500 },
    );
  });

  it('reads an empty byte array as zero', () => {
    expect(signedLEToBigint(new Uint8Array(0))).toBe(0n);
  });
});

describe('BigInt arithmetic rules', () => {
  it('truncates division toward zero and gives the remainder the dividend sign', () => {
    expect(bigIntDividedBy(-7n, 2n)).toBe(-3n);
    expect(bigIntMod(-7n, 2n)).toBe(-1n);
    expect(bigIntMod(7n, -2n)).toBe(1n);
  });

  it('rejects division and remainder by zero with graph-node wording', () => {
    expect(() => bigIntDividedBy(5n, 0n)).toThrow('attempted to divide BigInt `5` by zero');
    expect(() => bigIntMod(-5n, 0n)).toThrow(
      'attempted to calculate the remainder of `-5` with a divisor of zero',
    );
  });

  it('prints the magnitude in hex, 0x0 for zero', () => {
    expect(bigIntToHex(0n)).toBe('0x0');
    expect(bigIntToHex(255n)).toBe('0xff');
    expect(bigIntToHex(-255n)).toBe('0xff');
    expect(bigIntToHex(max256)).toBe(`0x${'f'.repeat(64)}`);
  });
});

describe('typeConversion.bytesToString', () => {
  // graph-node's bytes_to_string: String::from_utf8_lossy, then trim_end_matches('\u{0000}')
  it('keeps a leading byte-order mark', () => {
    expect(bytesToString(Uint8Array.of(0xef, 0xbb, 0xbf, 0x68, 0x69))).toBe('\uFEFFhi');
  });

  it('trims trailing NULs and keeps leading and inner ones', () => {
    expect(bytesToString(Uint8Array.of(0, 0, 0x68, 0, 0x69, 0, 0))).toBe('\0\0h\0i');
  });

  it('reads invalid UTF-8 as U+FFFD', () => {
    expect(bytesToString(Uint8Array.of(0x68, 0xff, 0x69))).toBe('h\uFFFDi');
  });
});

describe('json.fromBytes parsing', () => {
  it('refuses a leading byte-order mark, as serde_json::from_slice does', () => {
    expect(() => parseJson(Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d))).toThrow(
      'expected value at line 1 column 1',
    );
  });

  const json = (text: string) => parseJson(Buffer.from(text, 'utf8'));
  const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  it('parses arrays and objects nested 127 levels deep, the most serde_json allows', () => {
    expect(json(nested(127)).kind).toBe('array');
    expect(json('{"a":'.repeat(127) + '1' + '}'.repeat(127)).kind).toBe('object');
  });

  it("refuses a 128th level with serde_json's error, at the bracket that opens it", () => {
    expect(() => json(nested(128))).toThrow('recursion limit exceeded at line 1 column 128');
    expect(() => json('{"a":'.repeat(128) + '1' + '}'.repeat(128))).toThrow(
      'recursion limit exceeded at line 1 column 636',
    );
  });

  it('refuses 5000 levels with the same error, not a JavaScript stack overflow', () => {
    expect(() => json(nested(5000))).toThrow('recursion limit exceeded at line 1 column 128');
  });

  it('reads an escaped surrogate pair as the one character it encodes', () => {
    expect(json('"\\ud83d\\ude00"')).toEqual({ kind: 'string', value: '😀' });
  });

  it('refuses lone surrogate escapes as serde_json does', () => {
    expect(() => json('"\\ud800"')).toThrow('unexpected end of hex escape at line 1 column 8');
    expect(() => json('"\\ud800\\n"')).toThrow('unexpected end of hex escape at line 1 column 9');
    expect(() => json('"\\ud800\\u0041"')).toThrow(
      'lone leading surrogate in hex escape at line 1 column 13',
    );
    expect(() => json('"\\udc00"')).toThrow('lone leading surrogate in hex escape at line 1 column 7');
    expect(() => json('"\\ud800')).toThrow('EOF while parsing a string at line 1 column 7');
  });

  it("places other errors at serde_json's line and column, the column in UTF-8 bytes", () => {
    expect(() => json('{"é":1,}')).toThrow('trailing comma at line 1 column 9');
    expect(() => json('[1,\n ]')).toThrow('trailing comma at line 2 column 2');
    expect(() => json('[1 2]')).toThrow('expected `,` or `]` at line 1 column 4');
    expect(() => json('[1')).toThrow('EOF while parsing a list at line 1 column 2');
    expect(() => json('"a\u0001"')).toThrow(
      'control character (\\u0000-\\u001F) found while parsing a string at line 1 column 3',
    );
  });
});

describe('host functions through the probe wasm', () => {
  const harness = useProbeHarness();

  it('adds and multiplies 256-bit and negative BigInts', () => {
    expect(harness().probe(6, `${max256}|1`)).toBe((max256 + 1n).toString());
    expect(harness().probe(6, `-5|3`)).toBe('-2');
    expect(harness().probe(7, `${max256}|-${max256}`)).toBe((-max256 * max256).toString());
  });

  it('divides, takes remainders, powers and shifts as graph-node', () => {
    expect(harness().probe(8, '-7|2')).toBe('-3');
    expect(harness().probe(9, '-7|2')).toBe('-1');
    expect(harness().probe(18, '2|255')).toBe((2n ** 255n).toString());
    expect(harness().probe(19, '-5|1')).toBe('-3');
  });

  it('prints BigInt hex of the magnitude', () => {
    expect(harness().probe(10, `${max256}`)).toBe(`0x${'f'.repeat(64)}`);
    expect(harness().probe(10, '-255')).toBe('0xff');
    expect(harness().probe(10, '0')).toBe('0x0');
  });

  it('fails the handler on BigInt division by zero', () => {
    expect(harness().probeError(8, '5|0').message).toContain('attempted to divide BigInt `5` by zero');
  });

  it('fails the handler on a string that is not a BigInt', () => {
    expect(harness().probeError(6, '12a|1').message).toContain('string is not a BigInt: `12a`');
  });

  it('parses JSON keeping number text and sorting object keys', () => {
    expect(harness().probe(12, '{"b":[1,true,null],"a":"x","n":123456789012345678901234567890}')).toBe(
      '{a=s:x,b=[n:1,true,null],n=n:123456789012345678901234567890}',
    );
  });

  it("sorts object keys by their UTF-8 bytes, as serde_json's BTreeMap of Strings: a, ！, 😀", () => {
    // '😀' (U+1F600) sorts before '！' (U+FF01) by UTF-16 code units, after it by UTF-8 bytes
    expect(harness().probe(12, '{"！":1,"😀":2,"a":3}')).toBe('{a=n:3,！=n:1,😀=n:2}');
  });

  it('reports invalid JSON through json.try_fromBytes without failing', () => {
    expect(harness().probe(13, '{"a":1,}')).toBe('error');
    expect(harness().probe(13, '[1, 2]')).toBe('ok');
  });

  it('hashes with keccak256', () => {
    expect(harness().probe(14, 'hello')).toBe(keccak256(toBytes('hello')));
  });

  it('refuses JSON that starts with a byte-order mark, in json.fromBytes and json.try_fromBytes', () => {
    expect(harness().probe(13, '\uFEFF{}')).toBe('error');
    expect(harness().probeError(12, '\uFEFF{}').message).toContain('expected value at line 1 column 1');
  });

  it('refuses JSON nested 128 levels deep in json.fromBytes and json.try_fromBytes', () => {
    const nested = '['.repeat(128) + ']'.repeat(128);
    expect(harness().probe(13, nested)).toBe('error');
    expect(harness().probe(13, nested.slice(1, -1))).toBe('ok');
    expect(harness().probeError(12, nested).message).toContain(
      'recursion limit exceeded at line 1 column 128',
    );
  });

  it("hands the mapping an event string's leading NULs, as graph-node's alloy decoding keeps them", () => {
    // the mapping hashes the UTF-8 of the string it was given
    expect(harness().probe(14, '\0\0late\0')).toBe(keccak256(toBytes('\0\0late\0')));
  });

  it('drops the NULs of a string the mapping hands back to the store, as graph-node reads strings', () => {
    harness().probe(14, '\0\0late\0');
    const stored = harness().store.getCurrent('ProbeResult', `${txHash(harness().lastBlock)}-0`);
    expect(stored?.get('input')).toEqual({ kind: 'String', value: 'late' });
  });

  it("keeps an event string's byte-order mark through the mapping into the store", () => {
    expect(harness().probe(14, '\uFEFFipfs://x')).toBe(keccak256(toBytes('\uFEFFipfs://x')));
    const stored = harness().store.getCurrent('ProbeResult', `${txHash(harness().lastBlock)}-0`);
    expect(stored?.get('input')).toEqual({ kind: 'String', value: '\uFEFFipfs://x' });
  });

  it("refuses ipfs.cat in graph-node's words, naming file data sources as the way to read IPFS", () => {
    const error = harness().probeError(15, 'QmHash');
    expect(error.message).toContain(
      '`ipfs.cat` is deprecated. Improved support for IPFS will be added in the future (graph-node runs it only with GRAPH_ALLOW_NON_DETERMINISTIC_IPFS set; the embedded indexer never does: read IPFS files with a file data source, a template of kind file/ipfs)',
    );
    expect(error.dataSource).toBe('ProbeEmitter');
    expect(error.handler).toBe('handleProbe');
  });

  it('links an import it does not know to a function that fails naming it', () => {
    // a module whose only import is env."future.thing": () -> ()
    const name = [...Buffer.from('future.thing')];
    const module = new WebAssembly.Module(
      Uint8Array.from([
        ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
        ...[0x01, 0x04, 0x01, 0x60, 0x00, 0x00],
        ...[0x02, 6 + name.length + 2, 0x01, 0x03, ...Buffer.from('env'), name.length, ...name, 0x00, 0x00],
      ]),
    );
    const imports = linkImports(module, {} as HostEnv, new WebAssembly.Memory({ initial: 1 }));
    const future = imports.env!['future.thing'] as () => void;
    expect(future).toThrow(UnimplementedHostFunctionError);
    expect(future).toThrow('host function `future.thing` is not implemented by the embedded indexer');
  });

  it('fails the handler on log.critical and keeps the other levels as log lines', () => {
    const error = harness().probeError(16, 'disk on fire');
    expect(error.message).toContain(
      'Critical error logged in mapping with log message: probe failed: disk on fire',
    );
    expect(harness().logged).toContainEqual({
      level: 'critical',
      message: 'probe failed: disk on fire',
      dataSource: 'ProbeEmitter',
    });
  });

  it('decodes abort into message, file, line and column', () => {
    const error = harness().probeError(17, 'assertion text');
    expect(error.message).toMatch(
      /Mapping aborted at src\/probe\.ts, line \d+, column \d+, with message: assertion text/,
    );
  });

  it('passes a null receipt and a null logType to handlers without receipt: true', () => {
    expect(harness().probe(20, '')).toBe('receipt:null;logType:null');
  });

  it('fills event.transaction from the block’s transactions and event.receipt for receipt: true handlers', () => {
    const block = harness().lastBlock + 1;
    const log = makeLog(probeAbi, 'ProbeReceipt', { tag: 1 }, { address: probeAddress, block, logIndex: 2 });
    const hash = txHash(block);
    const from = `0x${'5a'.repeat(20)}` as Hex;
    const receipt: TransactionReceipt = {
      blockHash: blockHash(block),
      blockNumber: BigInt(block),
      contractAddress: null,
      cumulativeGasUsed: 90_000n,
      effectiveGasPrice: 7n,
      from,
      gasUsed: 45_000n,
      logs: [log],
      logsBloom: `0x${'00'.repeat(256)}`,
      status: 'success',
      to: probeAddress,
      transactionHash: hash,
      transactionIndex: 0,
      type: 'eip1559',
    };
    harness().runBlock(block, [log], {
      transactions: new Map([
        [
          hash,
          {
            from,
            to: probeAddress,
            value: 10n ** 18n,
            gasLimit: 100_000n,
            gasPrice: 7n,
            nonce: 42n,
            input: '0xabcd',
            index: 0n,
          },
        ],
      ]),
      receipts: new Map([[hash, receipt]]),
    });
    const output = harness().store.getCurrent('ProbeResult', `${hash}-2`)?.get('output');
    expect(output).toEqual({
      kind: 'String',
      value:
        `tx:${from},${probeAddress},1000000000000000000,42,0,0xabcd;` +
        `block:${block},${1_700_000_000 + block * 12},${blockHash(block - 1)};` +
        `receipt:45000,1,1,${probeAddress},1,2`,
    });
  });

  it('fails a receipt: true handler when the receipt was not fetched', () => {
    const block = harness().lastBlock + 1;
    const log = makeLog(probeAbi, 'ProbeReceipt', { tag: 1 }, { address: probeAddress, block, logIndex: 0 });
    expect(() => harness().runBlock(block, [log])).toThrow(
      'handler declares receipt: true but the receipt of',
    );
  });

  it('answers dataSource.network, address and context for the running data source', () => {
    expect(harness().probe(21, '')).toBe(`devnet,${probeAddress},0`);
  });

  it('fails dataSource.create for a template the manifest does not define', () => {
    expect(harness().probeError(22, 'Missing').message).toContain(
      'Failed to create data source from name `Missing`: No template with this name in parent data source `ProbeEmitter`',
    );
  });

  it('converts strings and bytes as graph-node does', () => {
    expect(harness().probe(23, '0x' + '5A'.repeat(20))).toBe('0x' + '5a'.repeat(20));
    expect(harness().probeError(23, '0x12').message).toContain("Failed to convert string to Address: '0x12'");
    expect(harness().probe(24, '0x68656c6c6f0000')).toBe('hello');
    expect(harness().probe(24, '0xefbbbf68690000')).toBe('\uFEFFhi');
    expect(harness().probe(25, '0x000068656c6c6f20776f726c64')).toBe('11StV1DL6CwTryKyV');
  });

  it('converts JSON numbers with json.toI64, toU64 and toF64', () => {
    expect(harness().probe(26, '42')).toBe('42,42,42.0');
    expect(harness().probeError(26, '-5').message).toContain('JSON `-5` cannot be parsed as u64');
  });

  it('accepts the immutable ProbeResult `fixed` set again unchanged by a later block, writing nothing', () => {
    // graph-node's entity cache merges the set into the entity it inserted and finds nothing changed
    harness().probe(28, 'same');
    const inserted = harness().lastBlock;
    expect(harness().probe(28, 'same')).toBe('wrote fixed');
    expect(harness().lastBlock).toBe(inserted + 1);
    expect(harness().store.getCurrent('ProbeResult', 'fixed')?.get('input')).toEqual({
      kind: 'String',
      value: 'same',
    });
  });

  it('rolls back a failed block so the store keeps only committed results', () => {
    const before = harness().store.checkpoint().number;
    harness().probeError(8, '1|0');
    expect(harness().store.checkpoint().number).toBe(before);
    expect(harness().store.getCurrent('ProbeResult', `${txHash(harness().lastBlock)}-0`)).toBeNull();
  });
});
