// Builds the graph-ts `ethereum.Event` a handler receives, in mapping memory, with the layouts
// graph-node uses for apiVersion >= 0.0.7: Event (address, logIndex, transactionLogIndex, logType,
// block, transaction, parameters, receipt), Block of 0.0.6 (with baseFeePerGas), Transaction of
// 0.0.6 (with input and nonce), EventParam (name, ethereum.Value) and, when the handler declared
// `receipt: true`, the TransactionReceipt with its logs. transactionLogIndex carries the log index
// and logType is null, as in graph-node.
import type { AbiParameter, Hex, Log, TransactionReceipt } from 'viem';
import type { AscHeap } from './asc-memory.ts';
import { EthereumValueKind } from './asc-types.ts';
import { writeBigInt } from './asc-values.ts';
import type { EventParameter } from './event-decoder.ts';

/** The transaction fields graph-ts exposes; the follower supplies them when it fetched transactions. */
export interface TransactionInfo {
  from: Hex;
  to: Hex | null;
  value: bigint;
  gasLimit: bigint;
  gasPrice: bigint;
  nonce: bigint;
  input: Hex;
  index: bigint;
}

/** Header fields beyond number/hash/parentHash/timestamp; zero when the follower did not fetch them. */
export interface BlockHeaderInfo {
  unclesHash?: Hex;
  author?: Hex;
  stateRoot?: Hex;
  transactionsRoot?: Hex;
  receiptsRoot?: Hex;
  gasUsed?: bigint;
  gasLimit?: bigint;
  difficulty?: bigint;
  totalDifficulty?: bigint;
  size?: bigint;
  baseFeePerGas?: bigint;
}

/** A block and the logs to process, as the chain follower hands it to the runtime. */
export interface BlockWithLogs {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  timestamp: bigint;
  logs: Log[];
  /** by transaction hash; without it, event.transaction has only hash and index (others zero) */
  transactions?: ReadonlyMap<Hex, TransactionInfo>;
  /** by transaction hash; required when a handler declares `receipt: true` */
  receipts?: ReadonlyMap<Hex, TransactionReceipt>;
  header?: BlockHeaderInfo;
}

const zero32 = new Uint8Array(32);
const zero20 = new Uint8Array(20);

function hexBytes(hex: string): Uint8Array {
  return Buffer.from(hex.startsWith('0x') ? hex.slice(2) : hex, 'hex');
}

function writeHex(heap: AscHeap, hex: Hex | undefined, fallback: Uint8Array): number {
  return heap.writeBytes(hex === undefined ? fallback : hexBytes(hex));
}

/** 20 address bytes from viem's hex or from the uint160 the event decoder reads addresses as. */
function addressBytes(value: unknown): Uint8Array {
  if (typeof value === 'bigint') return hexBytes(value.toString(16).padStart(40, '0'));
  return hexBytes(value as string);
}

function writeValue(heap: AscHeap, kind: number, payload: number): number {
  const ptr = heap.newObject('EthereumValue', 16);
  heap.setU32(ptr, kind);
  heap.setI64(ptr + 8, BigInt(payload));
  return ptr;
}

/** An ethereum.Value for an ABI-decoded value (viem's decoded representation). */
export function writeEthereumValue(heap: AscHeap, param: AbiParameter, value: unknown): number {
  const type = param.type;
  const array = /^(.*)\[(\d*)\]$/.exec(type);
  if (array) {
    const elementParam = { ...param, type: array[1] as string } as AbiParameter;
    const elements = (value as unknown[]).map((v) => writeEthereumValue(heap, elementParam, v));
    const kind = array[2] === '' ? EthereumValueKind.Array : EthereumValueKind.FixedArray;
    return writeValue(heap, kind, heap.writeArrayU32('ArrayEthereumValue', elements));
  }
  if (type === 'tuple') {
    const components = 'components' in param ? param.components : [];
    const values = components.map((c, i) => {
      const v = Array.isArray(value) ? value[i] : (value as Record<string, unknown>)[c.name ?? String(i)];
      return writeEthereumValue(heap, c, v);
    });
    return writeValue(heap, EthereumValueKind.Tuple, heap.writeArrayU32('ArrayEthereumValue', values));
  }
  if (type === 'address')
    return writeValue(heap, EthereumValueKind.Address, heap.writeBytes(addressBytes(value)));
  if (type === 'bool') return writeValue(heap, EthereumValueKind.Bool, value ? 1 : 0);
  if (type === 'string') return writeValue(heap, EthereumValueKind.String, heap.writeString(value as string));
  if (type === 'bytes')
    return writeValue(heap, EthereumValueKind.Bytes, heap.writeBytes(hexBytes(value as string)));
  if (type.startsWith('bytes')) {
    return writeValue(heap, EthereumValueKind.FixedBytes, heap.writeBytes(hexBytes(value as string)));
  }
  if (type.startsWith('uint') || type.startsWith('int')) {
    const kind = type.startsWith('uint') ? EthereumValueKind.Uint : EthereumValueKind.Int;
    return writeValue(heap, kind, writeBigInt(heap, BigInt(value as bigint | number)));
  }
  throw new Error(`ABI type ${type} is not supported`);
}

/** The parameters array of an event. */
export function writeEventParams(heap: AscHeap, params: readonly EventParameter[]): number {
  const ptrs = params.map((p) => {
    const name = heap.writeString(p.name);
    const value = writeEthereumValue(heap, p.param, p.value);
    const ptr = heap.newObject('EventParam', 8);
    heap.setU32(ptr, name);
    heap.setU32(ptr + 4, value);
    return ptr;
  });
  return heap.writeArrayU32('ArrayEventParam', ptrs);
}

function writeObject(
  heap: AscHeap,
  type: Parameters<AscHeap['newObject']>[0],
  fields: readonly number[],
): number {
  const ptr = heap.newObject(type, fields.length * 4);
  fields.forEach((f, i) => heap.setU32(ptr + i * 4, f));
  return ptr;
}

export function writeBlock(heap: AscHeap, block: BlockWithLogs): number {
  const h = block.header ?? {};
  return writeObject(heap, 'EthereumBlock', [
    heap.writeBytes(hexBytes(block.hash)),
    heap.writeBytes(hexBytes(block.parentHash)),
    writeHex(heap, h.unclesHash, zero32),
    writeHex(heap, h.author, zero20),
    writeHex(heap, h.stateRoot, zero32),
    writeHex(heap, h.transactionsRoot, zero32),
    writeHex(heap, h.receiptsRoot, zero32),
    writeBigInt(heap, block.number),
    writeBigInt(heap, h.gasUsed ?? 0n),
    writeBigInt(heap, h.gasLimit ?? 0n),
    writeBigInt(heap, block.timestamp),
    writeBigInt(heap, h.difficulty ?? 0n),
    writeBigInt(heap, h.totalDifficulty ?? 0n),
    h.size === undefined ? 0 : writeBigInt(heap, h.size),
    h.baseFeePerGas === undefined ? 0 : writeBigInt(heap, h.baseFeePerGas),
  ]);
}

export function writeTransaction(
  heap: AscHeap,
  hash: Hex,
  index: bigint,
  tx: TransactionInfo | undefined,
): number {
  return writeObject(heap, 'EthereumTransaction', [
    heap.writeBytes(hexBytes(hash)),
    writeBigInt(heap, tx?.index ?? index),
    writeHex(heap, tx?.from, zero20),
    tx?.to ? heap.writeBytes(hexBytes(tx.to)) : 0,
    writeBigInt(heap, tx?.value ?? 0n),
    writeBigInt(heap, tx?.gasLimit ?? 0n),
    writeBigInt(heap, tx?.gasPrice ?? 0n),
    heap.writeBytes(tx ? hexBytes(tx.input) : new Uint8Array(0)),
    writeBigInt(heap, tx?.nonce ?? 0n),
  ]);
}

function writeLog(heap: AscHeap, log: Log): number {
  const removed = heap.newObject('WrappedBool', 1);
  heap.setU8(removed, log.removed ? 1 : 0);
  return writeObject(heap, 'Log', [
    heap.writeBytes(hexBytes(log.address)),
    heap.writeArrayU32(
      'ArrayH256',
      log.topics.map((t) => heap.writeBytes(hexBytes(t))),
    ),
    heap.writeBytes(hexBytes(log.data)),
    log.blockHash ? heap.writeBytes(hexBytes(log.blockHash)) : 0,
    log.blockNumber === null ? 0 : writeBigInt(heap, log.blockNumber),
    log.transactionHash ? heap.writeBytes(hexBytes(log.transactionHash)) : 0,
    log.transactionIndex === null ? 0 : writeBigInt(heap, BigInt(log.transactionIndex)),
    log.logIndex === null ? 0 : writeBigInt(heap, BigInt(log.logIndex)),
    0,
    0,
    removed,
  ]);
}

export function writeReceipt(heap: AscHeap, receipt: TransactionReceipt): number {
  return writeObject(heap, 'TransactionReceipt', [
    heap.writeBytes(hexBytes(receipt.transactionHash)),
    writeBigInt(heap, BigInt(receipt.transactionIndex)),
    heap.writeBytes(hexBytes(receipt.blockHash)),
    writeBigInt(heap, receipt.blockNumber),
    writeBigInt(heap, receipt.cumulativeGasUsed),
    writeBigInt(heap, receipt.gasUsed),
    receipt.contractAddress ? heap.writeBytes(hexBytes(receipt.contractAddress)) : 0,
    heap.writeArrayU32(
      'ArrayLog',
      receipt.logs.map((l) => writeLog(heap, l)),
    ),
    writeBigInt(heap, receipt.status === 'success' ? 1n : 0n),
    receipt.root ? heap.writeBytes(hexBytes(receipt.root)) : 0,
    heap.writeBytes(hexBytes(receipt.logsBloom)),
  ]);
}

export interface EventInput {
  log: Log;
  block: BlockWithLogs;
  params: readonly EventParameter[];
  receipt: TransactionReceipt | null;
}

/** Writes the complete ethereum.Event and returns its pointer. */
export function writeEvent(heap: AscHeap, input: EventInput): number {
  const { log, block } = input;
  const logIndex = BigInt(log.logIndex ?? 0);
  const txHash = log.transactionHash ?? (`0x${'00'.repeat(32)}` as Hex);
  const address = heap.writeBytes(hexBytes(log.address));
  const logIndexPtr = writeBigInt(heap, logIndex);
  const transactionLogIndex = writeBigInt(heap, logIndex);
  const blockPtr = writeBlock(heap, block);
  const txPtr = writeTransaction(
    heap,
    txHash,
    BigInt(log.transactionIndex ?? 0),
    block.transactions?.get(txHash),
  );
  const params = writeEventParams(heap, input.params);
  const receipt = input.receipt ? writeReceipt(heap, input.receipt) : 0;
  return writeObject(heap, 'EthereumEvent', [
    address,
    logIndexPtr,
    transactionLogIndex,
    0,
    blockPtr,
    txPtr,
    params,
    receipt,
  ]);
}
