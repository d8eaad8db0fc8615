// graph-ts's ethereum.Value in both directions. Writing: ABI-decoded values (viem's representation)
// of a parameter become ethereum.Values, for event parameters and call results. Reading: an
// ethereum.Value a mapping built (call arguments, ethereum.encode) is read as a token and then
// checked against the ABI type it is meant for with graph-node's rules (abi/value_ext.rs type_check:
// integers and fixed bytes may be narrower than the declared type, never wider).
import type { AbiParameter, Hex } from 'viem';
import type { AscHeap } from './asc-memory.ts';
import { EthereumValueKind } from './asc-types.ts';

function writeValue(heap: AscHeap, kind: number, payload: number): number {
  const ptr = heap.newObject('EthereumValue', 16);
  heap.setU32(ptr, kind);
  heap.setI64(ptr + 8, BigInt(payload));
  return ptr;
}

type ValueWriter = (heap: AscHeap, value: unknown) => number;

/** Writers by ABI parameter: the parameter's type is parsed once, not on every event. */
const valueWriters = new WeakMap<AbiParameter, ValueWriter>();

/** The writer of ethereum.Values for ABI-decoded values (viem's decoded representation) of `param`. */
export function valueWriter(param: AbiParameter): ValueWriter {
  let writer = valueWriters.get(param);
  if (!writer) {
    writer = createValueWriter(param);
    valueWriters.set(param, writer);
  }
  return writer;
}

function createValueWriter(param: AbiParameter): ValueWriter {
  const type = param.type;
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    const element = createValueWriter({ ...param, type: array[1] as string } as AbiParameter);
    const kind = array[2] === '' ? EthereumValueKind.Array : EthereumValueKind.FixedArray;
    return (heap, value) =>
      writeValue(
        heap,
        kind,
        heap.writeArrayU32(
          'ArrayEthereumValue',
          (value as unknown[]).map((v) => element(heap, v)),
        ),
      );
  }
  if (type === 'tuple') {
    const components = ('components' in param ? param.components : []).map((c, i) => ({
      key: c.name ?? String(i),
      write: createValueWriter(c),
    }));
    return (heap, value) => {
      const values = components.map((c, i) =>
        c.write(heap, Array.isArray(value) ? value[i] : (value as Record<string, unknown>)[c.key]),
      );
      return writeValue(heap, EthereumValueKind.Tuple, heap.writeArrayU32('ArrayEthereumValue', values));
    };
  }
  if (type === 'address') {
    // the event decoder reads addresses as the uint160 of their word; viem's decoder gives hex
    return (heap, value) =>
      writeValue(
        heap,
        EthereumValueKind.Address,
        heap.writeHexBytes(
          typeof value === 'bigint' ? value.toString(16).padStart(40, '0') : (value as string),
        ),
      );
  }
  if (type === 'bool') return (heap, value) => writeValue(heap, EthereumValueKind.Bool, value ? 1 : 0);
  if (type === 'string')
    return (heap, value) => writeValue(heap, EthereumValueKind.String, heap.writeString(value as string));
  if (type === 'bytes')
    return (heap, value) => writeValue(heap, EthereumValueKind.Bytes, heap.writeHexBytes(value as string));
  if (type.startsWith('bytes'))
    return (heap, value) =>
      writeValue(heap, EthereumValueKind.FixedBytes, heap.writeHexBytes(value as string));
  if (type.startsWith('uint') || type.startsWith('int')) {
    const kind = type.startsWith('uint') ? EthereumValueKind.Uint : EthereumValueKind.Int;
    return (heap, value) =>
      writeValue(heap, kind, heap.writeBigInt(typeof value === 'bigint' ? value : BigInt(value as number)));
  }
  throw new Error(`ABI type ${type} is not supported`);
}

/** An ethereum.Value as the mapping built it, before it meets an ABI type. */
export type EthereumToken =
  | { kind: 'address' | 'fixedBytes' | 'bytes'; hex: Hex }
  | { kind: 'int' | 'uint'; value: bigint }
  | { kind: 'bool'; value: boolean }
  | { kind: 'string'; value: string }
  | { kind: 'fixedArray' | 'array' | 'tuple'; items: EthereumToken[] };

/** graph-node's bound on nested values read from mapping memory */
const MAX_DEPTH = 128;
const UINT256_LIMIT = 1n << 256n;

/** Reads the ethereum.Value at `ptr` (graph-node's FromAscObj for ethereum values). */
export function readEthereumValue(heap: AscHeap, ptr: number, depth = 0): EthereumToken {
  if (depth > MAX_DEPTH) throw new Error(`ethereum.Value nested deeper than ${MAX_DEPTH} levels`);
  const kind = heap.u32(ptr);
  const payload = Number(BigInt.asUintN(32, heap.i64(ptr + 8)));
  const items = () => heap.readArrayU32(payload).map((p) => readEthereumValue(heap, p, depth + 1));
  switch (kind) {
    case EthereumValueKind.Address: {
      const hex = heap.readHex(payload) as Hex;
      if (hex.length !== 42)
        throw new Error(`an ethereum.Value address must be 20 bytes, got ${(hex.length - 2) / 2}`);
      return { kind: 'address', hex };
    }
    case EthereumValueKind.FixedBytes: {
      const hex = heap.readHex(payload) as Hex;
      if (hex.length > 66)
        throw new Error(`input slice must contain a maximum of 32 bytes, got ${(hex.length - 2) / 2}`);
      return { kind: 'fixedBytes', hex };
    }
    case EthereumValueKind.Bytes:
      return { kind: 'bytes', hex: heap.readHex(payload) as Hex };
    case EthereumValueKind.Int: {
      const value = heap.readBigInt(payload);
      if (value >= UINT256_LIMIT / 2n || value < -UINT256_LIMIT / 2n)
        throw new Error(`BigInt ${value} does not fit in int256`);
      return { kind: 'int', value };
    }
    case EthereumValueKind.Uint: {
      const value = heap.readBigInt(payload);
      if (value < 0n || value >= UINT256_LIMIT) throw new Error(`BigInt ${value} does not fit in uint256`);
      return { kind: 'uint', value };
    }
    case EthereumValueKind.Bool:
      return { kind: 'bool', value: payload !== 0 };
    case EthereumValueKind.String:
      return { kind: 'string', value: heap.readString(payload) };
    case EthereumValueKind.FixedArray:
      return { kind: 'fixedArray', items: items() };
    case EthereumValueKind.Array:
      return { kind: 'array', items: items() };
    case EthereumValueKind.Tuple:
      return { kind: 'tuple', items: items() };
    default:
      throw new Error(`unknown ethereum.Value kind ${kind}`);
  }
}

/** A token as error messages show it. */
function describeToken(token: EthereumToken): string {
  switch (token.kind) {
    case 'address':
    case 'fixedBytes':
    case 'bytes':
      return `${token.kind}(${token.hex})`;
    case 'int':
    case 'uint':
    case 'bool':
      return `${token.kind}(${token.value})`;
    case 'string':
      return `string(${JSON.stringify(token.value)})`;
    default:
      return `${token.kind}(${token.items.map(describeToken).join(', ')})`;
  }
}

/** Thrown when a token does not fit the ABI type it is used as. */
class TokenTypeMismatch extends Error {
  constructor(token: EthereumToken, type: string) {
    super(`type mismatch, decoded value ${describeToken(token)} is not of kind ${type}`);
  }
}

/** Bits of `n` in two's complement, sign bit included. */
function signedBits(n: bigint): number {
  return (n < 0n ? -n - 1n : n).toString(2).length + 1;
}

/**
 * The token as the value viem encodes for `param`, or TokenTypeMismatch. Integers and fixed bytes
 * must fit the declared width (fixed bytes narrower than it are padded on the right, as Solidity's
 * bytesN are); arrays, fixed arrays and tuples must match in shape.
 */
export function tokenToAbiValue(token: EthereumToken, param: AbiParameter): unknown {
  const type = param.type;
  const mismatch = () => new TokenTypeMismatch(token, type);
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    const element = { ...param, type: array[1]! } as AbiParameter;
    const fixed = array[2] !== '';
    if (token.kind !== (fixed ? 'fixedArray' : 'array')) throw mismatch();
    if (fixed && token.items.length !== Number(array[2])) throw mismatch();
    return token.items.map((item) => tokenToAbiValue(item, element));
  }
  if (type === 'tuple') {
    const components = 'components' in param ? param.components : [];
    if (token.kind !== 'tuple' || token.items.length !== components.length) throw mismatch();
    return token.items.map((item, i) => tokenToAbiValue(item, components[i]!));
  }
  switch (token.kind) {
    case 'address':
    case 'bytes':
      if (type !== token.kind) throw mismatch();
      return token.hex;
    case 'bool':
    case 'string':
      if (type !== token.kind) throw mismatch();
      return token.value;
    case 'fixedBytes': {
      const size = /^bytes(\d+)$/.exec(type)?.[1];
      if (size === undefined || Number(size) < (token.hex.length - 2) / 2) throw mismatch();
      return token.hex.padEnd(2 + 2 * Number(size), '0');
    }
    case 'uint': {
      const bits = /^uint(\d*)$/.exec(type)?.[1];
      if (bits === undefined || token.value.toString(2).length > Number(bits || 256)) throw mismatch();
      return token.value;
    }
    case 'int': {
      const bits = /^int(\d*)$/.exec(type)?.[1];
      if (bits === undefined || signedBits(token.value) > Number(bits || 256)) throw mismatch();
      return token.value;
    }
    default:
      throw mismatch();
  }
}

/**
 * The ABI parameter a token encodes as on its own (ethereum.encode): integers as 256-bit words,
 * fixed bytes at their length, arrays by their first item (all items must agree).
 */
export function tokenAbiParameter(token: EthereumToken): AbiParameter {
  switch (token.kind) {
    case 'int':
      return { type: 'int256' };
    case 'uint':
      return { type: 'uint256' };
    case 'fixedBytes':
      return { type: `bytes${Math.max(1, (token.hex.length - 2) / 2)}` };
    case 'tuple':
      return { type: 'tuple', components: token.items.map(tokenAbiParameter) };
    case 'array':
    case 'fixedArray': {
      const params = token.items.map(tokenAbiParameter);
      const first = params[0] ?? { type: 'uint256' };
      const shape = (p: AbiParameter) => JSON.stringify(p);
      if (params.some((p) => shape(p) !== shape(first)))
        throw new Error(`the items of ${describeToken(token)} are not all of one type`);
      const suffix = token.kind === 'array' ? '[]' : `[${token.items.length}]`;
      return { ...first, type: `${first.type}${suffix}` };
    }
    default:
      return { type: token.kind };
  }
}
