// The ethereum.* host functions' rules that need no chain: function signatures as graph-node spells
// them, the check of call arguments against the function's types, ABI encoding and decoding of one
// value, and the deterministic errors of a call the mapping got wrong (through the probe wasm, with
// synthetic logs). Reads of a real chain are tested end to end in test/indexer/ethereum-call.test.ts.
import { encodeAbiParameters, parseAbiItem, type AbiFunction } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { EthereumValueKind } from '../../../indexer/runtime/asc-types.ts';
import type { HostEnv } from '../../../indexer/runtime/host-context.ts';
import { tokenToAbiValue, type EthereumToken } from '../../../indexer/runtime/ethereum-value.ts';
import { compatSignature, ethereumFunctions } from '../../../indexer/runtime/host-ethereum.ts';
import type { MappingInstance } from '../../../indexer/runtime/mapping-instance.ts';
import { probeMappingInstance, useProbeHarness } from './runtime-harness.ts';

const fn = (signature: string) => parseAbiItem(signature) as AbiFunction;

describe('function signatures for ethereum.call', () => {
  it('spells inputs, then outputs after a colon, as graph-node’s signature_compat', () => {
    expect(compatSignature(fn('function x()'))).toBe('x()');
    expect(compatSignature(fn('function x(uint256 a, bytes32 b)'))).toBe('x(uint256,bytes32)');
    expect(compatSignature(fn('function x(bool) returns (uint256, string)'))).toBe(
      'x(bool):(uint256,string)',
    );
  });

  it('spells tuples as their component types in parentheses, arrays of them with the suffix', () => {
    expect(
      compatSignature(fn('function x((uint256 a, (address b, bytes c)[] d) p) returns ((int8,string)[2])')),
    ).toBe('x((uint256,(address,bytes)[])):((int8,string)[2])');
  });
});

describe('call arguments against the function’s types', () => {
  const int = (value: bigint): EthereumToken => ({ kind: 'int', value });
  const uint = (value: bigint): EthereumToken => ({ kind: 'uint', value });

  it('accepts integers that fit the declared width, two’s complement for signed ones', () => {
    expect(tokenToAbiValue(int(-32768n), { type: 'int16' })).toBe(-32768n);
    expect(tokenToAbiValue(int(32767n), { type: 'int16' })).toBe(32767n);
    expect(tokenToAbiValue(uint(255n), { type: 'uint8' })).toBe(255n);
    expect(tokenToAbiValue(uint(2n ** 256n - 1n), { type: 'uint256' })).toBe(2n ** 256n - 1n);
  });

  it('refuses integers wider than the declared type, and signed for unsigned', () => {
    expect(() => tokenToAbiValue(int(32768n), { type: 'int16' })).toThrow(
      'type mismatch, decoded value int(32768) is not of kind int16',
    );
    expect(() => tokenToAbiValue(int(-32769n), { type: 'int16' })).toThrow('is not of kind int16');
    expect(() => tokenToAbiValue(uint(256n), { type: 'uint8' })).toThrow('is not of kind uint8');
    expect(() => tokenToAbiValue(int(1n), { type: 'uint8' })).toThrow('is not of kind uint8');
  });

  it('pads fixed bytes narrower than the type on the right and refuses wider ones', () => {
    expect(tokenToAbiValue({ kind: 'fixedBytes', hex: '0xdead' }, { type: 'bytes4' })).toBe('0xdead0000');
    expect(() => tokenToAbiValue({ kind: 'fixedBytes', hex: '0xdeadbeef00' }, { type: 'bytes4' })).toThrow(
      'is not of kind bytes4',
    );
  });

  it('checks arrays item by item and fixed arrays and tuples by length too', () => {
    const items = [uint(1n), uint(2n)];
    expect(tokenToAbiValue({ kind: 'array', items }, { type: 'uint8[]' })).toEqual([1n, 2n]);
    expect(tokenToAbiValue({ kind: 'fixedArray', items }, { type: 'uint8[2]' })).toEqual([1n, 2n]);
    expect(() => tokenToAbiValue({ kind: 'fixedArray', items }, { type: 'uint8[3]' })).toThrow(
      'is not of kind uint8[3]',
    );
    expect(() => tokenToAbiValue({ kind: 'array', items }, { type: 'uint8[2]' })).toThrow('is not of kind');
    const tuple = { type: 'tuple', components: [{ type: 'uint8' }, { type: 'string' }] };
    expect(
      tokenToAbiValue({ kind: 'tuple', items: [uint(1n), { kind: 'string', value: 'a' }] }, tuple),
    ).toEqual([1n, 'a']);
    expect(() => tokenToAbiValue({ kind: 'tuple', items: [uint(1n)] }, tuple)).toThrow(
      'is not of kind tuple',
    );
  });
});

describe('ethereum host functions through the probe wasm, without a chain', () => {
  const harness = useProbeHarness();

  it('encodes a value as abi.encode does and decodes it back; bytes that do not decode give null', () => {
    const amount = 2n ** 200n + 7n;
    const encoded = encodeAbiParameters(
      [{ type: 'tuple', components: [{ type: 'uint256' }, { type: 'string' }] }],
      [[amount, 'héllo']],
    );
    expect(harness().probe(31, `${amount}|héllo`)).toBe(`${encoded}|${amount},héllo|null`);
  });

  it('decodes a string with its byte-order mark, as graph-node’s alloy decoding keeps it', () => {
    const encoded = encodeAbiParameters(
      [{ type: 'tuple', components: [{ type: 'uint256' }, { type: 'string' }] }],
      [[5n, '\uFEFFnote']],
    );
    expect(harness().probe(31, '5|\uFEFFnote')).toBe(`${encoded}|5,\uFEFFnote|null`);
  });

  it('fails the handler naming the function when an argument does not fit its type', () => {
    expect(harness().probeError(32, 'wide').message).toContain(
      'Failed to call function "echo" of contract "ProbeEmitter": type mismatch, decoded value int(70000) is not of kind int16',
    );
  });

  it('fails the handler when the contract’s ABI is not among the mapping’s', () => {
    expect(harness().probeError(32, 'abi').message).toContain(
      `Could not find ABI for contract "Missing", try adding it to the 'abis' section of the subgraph manifest`,
    );
  });

  it('fails the handler when no function of the ABI has the signature', () => {
    expect(harness().probeError(32, 'signature').message).toContain(
      'Unknown function "ProbeEmitter::echo" with signature `echo(int16)` called from WASM runtime',
    );
  });

  it('fails the handler when a call needs the chain and the runtime has none', () => {
    expect(harness().probeError(29, '1|x').message).toContain(
      'ethereum.call reads the chain, and this runtime was started without one',
    );
  });
});

describe('ethereum.decode of words that are not canonical, in a real mapping instance’s memory', () => {
  let instance: MappingInstance;

  beforeAll(async () => {
    instance = await probeMappingInstance();
  }, 180_000);

  /** The kind and payload of the ethereum.Value that ethereum.decode(types, data) returns. */
  function decode(types: string, data: string): { kind: number; payload: bigint } {
    const heap = instance.heap;
    const decodeHost = ethereumFunctions['ethereum.decode']!({ heap } as HostEnv) as (
      t: number,
      d: number,
    ) => number;
    const ptr = decodeHost(heap.writeString(types), heap.writeHexBytes(data));
    expect(ptr).not.toBe(0);
    return { kind: heap.u32(ptr), payload: heap.i64(ptr + 8) };
  }

  it('decodes bool from the word 0x…02 as true, as alloy reads any nonzero word', () => {
    expect(decode('bool', `0x${'2'.padStart(64, '0')}`)).toEqual({
      kind: EthereumValueKind.Bool,
      payload: 1n,
    });
  });

  it('decodes int8 from the word 0x…80 as 128, the whole word read as an int256', () => {
    const { kind, payload } = decode('int8', `0x${'80'.padStart(64, '0')}`);
    expect(kind).toBe(EthereumValueKind.Int);
    expect(instance.heap.readBigInt(Number(payload))).toBe(128n);
  });
});
