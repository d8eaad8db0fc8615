// Decodes a log's parameters for one event handler, built once per handler. viem's decodeEventLog
// hashes the event signature and checksums every address on each call; at indexing rates that
// hashing dominates, so this decoder does the same work with viem's decodeAbiParameters on a copy
// of the ABI where addresses read as uint160 (the same 32-byte word) and skips the selector lookup
// (the caller already matched topic0); events of single-word parameters only, the common case, are
// read straight from the hex text, addresses as hex. Like graph-node, indexed parameters of dynamic types
// (string, bytes, arrays, tuples) yield their topic, a 32-byte hash. Words and strings, in the data
// and in topics, are read as graph-node (alloy) reads them, on both paths (abi-decode.ts): an intN
// is its whole word as an int256, a bool any nonzero word, a string lossy UTF-8 with nothing trimmed.
import type { AbiEvent, AbiParameter, Hex, Log } from 'viem';
import { abiDecoder } from './abi-decode.ts';

/** A decoded event parameter: the ABI parameter it was decoded as, and its value as abiDecoder gives it. */
export interface EventParameter {
  name: string;
  param: AbiParameter;
  value: unknown;
}

export type EventDecoder = (log: Log) => EventParameter[] | null;

const dynamicType = /^(string|bytes|tuple)$|\[\d*\]$/;

/** The parameter with every `address` (nested ones included) read as `uint160`. */
function addressesAsUint(param: AbiParameter): AbiParameter {
  const type = param.type.replace(/^address(?=$|\[)/, 'uint160');
  if ('components' in param && param.components) {
    return { ...param, type, components: param.components.map(addressesAsUint) } as AbiParameter;
  }
  return { ...param, type };
}

const staticWord = /^(address|bool|u?int(\d*)|bytes([1-9]|[12]\d|3[0-2]))$/;

/**
 * Reads one 32-byte word (64 hex digits) as abiDecoder decodes a static parameter of `type`, but an
 * address as the unchecksummed hex of its last 20 bytes.
 */
function readWord(type: string, word: string): unknown {
  if (type === 'address') return `0x${word.slice(24)}`;
  if (type === 'bool') return BigInt(`0x${word}`) !== 0n;
  if (type.startsWith('bytes')) return `0x${word.slice(0, 2 * Number(type.slice(5)))}`;
  const value = BigInt(`0x${word}`);
  if (type.startsWith('uint')) return value;
  return BigInt.asIntN(256, value);
}

/**
 * The common case, events whose parameters are all single-word static types, decoded straight from
 * the hex text; null when some parameter needs viem's general decoder.
 */
function createStaticDecoder(event: AbiEvent, indexedCount: number): EventDecoder | null {
  if (!event.inputs.every((i) => staticWord.test(i.type))) return null;
  const dataWords = event.inputs.length - indexedCount;
  return (log) => {
    if (log.topics.length !== 1 + indexedCount) return null;
    if (log.data.length < 2 + 64 * dataWords) return null;
    let topic = 1;
    let offset = 2;
    return event.inputs.map((input) => {
      let word: string;
      if (input.indexed) {
        word = (log.topics[topic++] as string).slice(2);
      } else {
        word = log.data.slice(offset, offset + 64);
        offset += 64;
      }
      return { name: input.name ?? '', param: input, value: readWord(input.type, word) };
    });
  };
}

/** The event's parameters as a handler gets them: an indexed one of a dynamic type is its topic, a bytes32. */
export function handlerParameters(event: AbiEvent): AbiParameter[] {
  return event.inputs.map((input) =>
    input.indexed === true && dynamicType.test(input.type)
      ? ({ ...input, type: 'bytes32' } as AbiParameter)
      : input,
  );
}

export function createEventDecoder(event: AbiEvent): EventDecoder {
  const inputs = event.inputs;
  const indexedCount = inputs.filter((i) => i.indexed).length;
  const fast = createStaticDecoder(event, indexedCount);
  if (fast) return fast;
  const dataParams = inputs.filter((i) => !i.indexed).map(addressesAsUint);
  const decodeData = abiDecoder(dataParams);
  // For each input: where its value comes from and the ABI parameter the mapping sees.
  const params = handlerParameters(event);
  const plan = inputs.map((input, i) => {
    const param = params[i]!;
    return {
      name: input.name ?? '',
      indexed: input.indexed === true,
      param,
      decodeTopic: abiDecoder([
        param === input ? addressesAsUint(input) : ({ type: 'bytes32' } as AbiParameter),
      ]),
    };
  });
  return (log) => {
    if (log.topics.length !== 1 + indexedCount) return null;
    try {
      const data = dataParams.length > 0 ? decodeData(log.data) : [];
      let topic = 1;
      let dataIndex = 0;
      return plan.map((p) => ({
        name: p.name,
        param: p.param,
        value: p.indexed ? p.decodeTopic(log.topics[topic++] as Hex)[0] : data[dataIndex++],
      }));
    } catch {
      return null;
    }
  };
}
