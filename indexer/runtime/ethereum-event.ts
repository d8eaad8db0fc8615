// Builds the graph-ts `ethereum.Event` a handler receives, in mapping memory, with the layouts
// graph-node uses for apiVersion >= 0.0.7: Event (address, logIndex, transactionLogIndex, logType,
// block, transaction, parameters, receipt), Block of 0.0.6 (with baseFeePerGas), Transaction of
// 0.0.6 (with input and nonce), EventParam (name, ethereum.Value) and, when the handler declared
// `receipt: true`, the TransactionReceipt with its logs. transactionLogIndex carries the log index
// and logType is null, as in graph-node.
import type { Hex, Log, TransactionReceipt } from 'viem';
import type { AscHeap, AscImage } from './asc-memory.ts';
import type { ContractCall } from './ethereum-call.ts';
import { writeBigInt } from './asc-values.ts';
import type { EventParameter } from './event-decoder.ts';
import { valueWriter } from './ethereum-value.ts';

/** The transaction fields graph-ts exposes; the follower supplies them unless told to fetch only logs. */
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
  /** by lowercase transaction hash; without it, event.transaction has only hash and index (others zero) */
  transactions?: ReadonlyMap<Hex, TransactionInfo>;
  /** by transaction hash; required when a handler declares `receipt: true` */
  receipts?: ReadonlyMap<Hex, TransactionReceipt>;
  /** calls to the addresses of data sources that handle calls, in trace order (see traceOrder) */
  calls?: readonly ContractCall[];
  header?: BlockHeaderInfo;
  /** answers to declared eth calls the follower made ahead for this block, by callKey (null: reverted) */
  declaredCalls?: ReadonlyMap<string, Hex | null>;
}

const zero32 = new Uint8Array(32);
const zero20 = new Uint8Array(20);

function writeHex(heap: AscHeap, hex: Hex | undefined, fallback: Uint8Array): number {
  return hex === undefined ? heap.writeBytes(fallback) : heap.writeHexBytes(hex);
}

/** The parameters array of an event. */
export function writeEventParams(heap: AscHeap, params: readonly EventParameter[]): number {
  const ptrs = params.map((p) => {
    const name = heap.writeString(p.name);
    const value = valueWriter(p.param)(heap, p.value);
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
  for (let i = 0; i < fields.length; i++) heap.setPtr(ptr + i * 4, fields[i]!);
  return ptr;
}

export function writeBlock(heap: AscHeap, block: BlockWithLogs): number {
  const h = block.header ?? {};
  return writeObject(heap, 'EthereumBlock', [
    heap.writeHexBytes(block.hash),
    heap.writeHexBytes(block.parentHash),
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

/** Per heap, the image of the last block written, so each event of a block copies it. */
const blockImages = new WeakMap<AscHeap, { block: BlockWithLogs; image: AscImage }>();

/**
 * The block object of a trigger (an event's `block`, a block handler's argument): a fresh copy per
 * trigger, as graph-node gives each trigger its own.
 */
export function writeTriggerBlock(heap: AscHeap, block: BlockWithLogs): number {
  let cached = blockImages.get(heap);
  if (cached?.block !== block) {
    cached = { block, image: heap.recordImage(() => writeBlock(heap, block)) };
    blockImages.set(heap, cached);
  }
  return heap.copyImage(cached.image);
}

export function writeTransaction(
  heap: AscHeap,
  hash: Hex,
  index: bigint,
  tx: TransactionInfo | undefined,
): number {
  return writeObject(heap, 'EthereumTransaction', [
    heap.writeHexBytes(hash),
    writeBigInt(heap, tx?.index ?? index),
    writeHex(heap, tx?.from, zero20),
    tx?.to ? heap.writeHexBytes(tx.to) : 0,
    writeBigInt(heap, tx?.value ?? 0n),
    writeBigInt(heap, tx?.gasLimit ?? 0n),
    writeBigInt(heap, tx?.gasPrice ?? 0n),
    tx ? heap.writeHexBytes(tx.input) : heap.writeBytes(new Uint8Array(0)),
    writeBigInt(heap, tx?.nonce ?? 0n),
  ]);
}

function writeLog(heap: AscHeap, log: Log): number {
  const removed = heap.newObject('WrappedBool', 1);
  heap.setU8(removed, log.removed ? 1 : 0);
  return writeObject(heap, 'Log', [
    heap.writeHexBytes(log.address),
    heap.writeArrayU32(
      'ArrayH256',
      log.topics.map((t) => heap.writeHexBytes(t)),
    ),
    heap.writeHexBytes(log.data),
    log.blockHash ? heap.writeHexBytes(log.blockHash) : 0,
    log.blockNumber === null ? 0 : writeBigInt(heap, log.blockNumber),
    log.transactionHash ? heap.writeHexBytes(log.transactionHash) : 0,
    log.transactionIndex === null ? 0 : writeBigInt(heap, BigInt(log.transactionIndex)),
    log.logIndex === null ? 0 : writeBigInt(heap, BigInt(log.logIndex)),
    0,
    0,
    removed,
  ]);
}

function writeReceipt(heap: AscHeap, receipt: TransactionReceipt): number {
  return writeObject(heap, 'TransactionReceipt', [
    heap.writeHexBytes(receipt.transactionHash),
    writeBigInt(heap, BigInt(receipt.transactionIndex)),
    heap.writeHexBytes(receipt.blockHash),
    writeBigInt(heap, receipt.blockNumber),
    writeBigInt(heap, receipt.cumulativeGasUsed),
    writeBigInt(heap, receipt.gasUsed),
    receipt.contractAddress ? heap.writeHexBytes(receipt.contractAddress) : 0,
    heap.writeArrayU32(
      'ArrayLog',
      receipt.logs.map((l) => writeLog(heap, l)),
    ),
    writeBigInt(heap, receipt.status === 'success' ? 1n : 0n),
    receipt.root ? heap.writeHexBytes(receipt.root) : 0,
    heap.writeHexBytes(receipt.logsBloom),
  ]);
}

interface EventInput {
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
  const address = heap.writeHexBytes(log.address);
  const logIndexPtr = writeBigInt(heap, logIndex);
  const transactionLogIndex = writeBigInt(heap, logIndex);
  const blockPtr = writeTriggerBlock(heap, block);
  const txPtr = writeTransaction(
    heap,
    txHash,
    BigInt(log.transactionIndex ?? 0),
    block.transactions?.get(txHash.toLowerCase() as Hex),
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
