// Builds the graph-ts `ethereum.Call` a call handler receives (graph-node's layout for apiVersion
// >= 0.0.6: to, from, block, transaction, inputValues, outputValues), from a call as a trace
// reports it. The function's inputs decode from the call's input after the selector and its
// outputs from what the call returned, as graph-node does: inputs that do not decode skip the
// handler (a call with the same selector but another function), outputs that do not decode fail it.
// Strings decode as graph-node's (alloy's) do, lossy UTF-8 with nothing trimmed (abi-decode.ts).
import type { AbiParameter, Hex } from 'viem';
import { decodeAbi } from './abi-decode.ts';
import type { AscHeap } from './asc-memory.ts';
import type { EventParameter } from './event-decoder.ts';
import {
  writeEventParams,
  writeTransaction,
  writeTriggerBlock,
  type BlockWithLogs,
} from './ethereum-event.ts';
import type { CallHandlerSpec } from './manifest.ts';

/** A call to a contract, as a trace of its transaction reports it (graph-node's EthereumCall). */
export interface ContractCall {
  /** lowercase */
  from: Hex;
  /** lowercase */
  to: Hex;
  value: bigint;
  gasUsed: bigint;
  /** selector and arguments */
  input: Hex;
  output: Hex;
  /** lowercase */
  transactionHash: Hex;
  transactionIndex: number;
  /** the call's place in its transaction's call tree (the trace's traceAddress) */
  traceAddress: readonly number[];
  /** whether its transaction succeeded: call handlers run only then, `call` block handlers anyway */
  transactionSucceeded: boolean;
}

type TracePosition = Pick<ContractCall, 'transactionIndex' | 'traceAddress'>;

/** Orders calls as their traces come: by transaction, then depth-first through the call tree. */
export function traceOrder(a: TracePosition, b: TracePosition): number {
  if (a.transactionIndex !== b.transactionIndex) return a.transactionIndex - b.transactionIndex;
  const depth = Math.min(a.traceAddress.length, b.traceAddress.length);
  for (let i = 0; i < depth; i++) {
    if (a.traceAddress[i] !== b.traceAddress[i]) return a.traceAddress[i]! - b.traceAddress[i]!;
  }
  return a.traceAddress.length - b.traceAddress.length;
}

/** Whether two calls are graph-node's equal triggers (which it runs once): every field alike. */
export function sameCall(a: ContractCall, b: ContractCall): boolean {
  return (
    a.transactionHash === b.transactionHash &&
    a.transactionIndex === b.transactionIndex &&
    a.from === b.from &&
    a.to === b.to &&
    a.value === b.value &&
    a.gasUsed === b.gasUsed &&
    a.input === b.input &&
    a.output === b.output
  );
}

interface DecodedCall {
  inputs: EventParameter[];
  outputs: EventParameter[];
}

const named = (params: readonly AbiParameter[], values: readonly unknown[]): EventParameter[] =>
  params.map((param, i) => ({ name: param.name ?? '', param, value: values[i] }));

/**
 * The call's arguments and results as the function of `spec` reads them; null when the arguments
 * do not decode. Throws when the results do not.
 */
export function decodeCall(spec: CallHandlerSpec, call: ContractCall): DecodedCall | null {
  const fn = spec.abiFunction;
  let inputValues: readonly unknown[];
  try {
    inputValues = decodeAbi(fn.inputs, `0x${call.input.slice(10)}`);
  } catch {
    return null;
  }
  let outputValues: readonly unknown[];
  try {
    outputValues = decodeAbi(fn.outputs, call.output);
  } catch (error) {
    throw new Error(
      `Decoding function outputs for the call ${spec.function} failed, raw output: ${call.output}`,
      { cause: error },
    );
  }
  return {
    inputs: named(fn.inputs, inputValues),
    outputs: named(fn.outputs, outputValues),
  };
}

/** Writes the complete ethereum.Call and returns its pointer. */
export function writeCall(
  heap: AscHeap,
  call: ContractCall,
  block: BlockWithLogs,
  decoded: DecodedCall,
): number {
  const to = heap.writeHexBytes(call.to);
  const from = heap.writeHexBytes(call.from);
  const blockPtr = writeTriggerBlock(heap, block);
  const txPtr = writeTransaction(
    heap,
    call.transactionHash,
    BigInt(call.transactionIndex),
    block.transactions?.get(call.transactionHash),
  );
  const inputs = writeEventParams(heap, decoded.inputs);
  const outputs = writeEventParams(heap, decoded.outputs);
  const ptr = heap.newObject('EthereumCall', 24);
  [to, from, blockPtr, txPtr, inputs, outputs].forEach((field, i) => heap.setPtr(ptr + i * 4, field));
  return ptr;
}
