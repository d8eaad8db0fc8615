// Decodes logs of one ABI by their topic0 with the selectors computed once. viem's
// decodeEventLog re-hashes every event signature of the ABI on each call, which dominates the
// scenario's bookkeeping over tens of thousands of logs. (The indexer's event decoder,
// indexer/runtime/event-decoder.ts, decodes one event into a handler's parameters.)
import { decodeAbiParameters, toEventSelector, type Abi, type AbiEvent, type Hex } from 'viem';

interface DecodedLog {
  eventName: string;
  args: Record<string, unknown>;
}

export type AbiLogDecoder = (log: { topics: readonly Hex[]; data: Hex }) => DecodedLog | null;

export function createAbiLogDecoder(abi: Abi): AbiLogDecoder {
  const events = new Map<string, AbiEvent>();
  for (const item of abi) if (item.type === 'event') events.set(toEventSelector(item), item);
  return (log) => {
    const event = log.topics[0] ? events.get(log.topics[0]) : undefined;
    if (!event) return null;
    const args: Record<string, unknown> = {};
    const indexed = event.inputs.filter((input) => input.indexed);
    indexed.forEach((input, i) => {
      const topic = log.topics[i + 1];
      if (topic === undefined) throw new Error(`${event.name}: missing topic ${i + 1}`);
      [args[input.name ?? String(i)]] = decodeAbiParameters([input], topic);
    });
    const plain = event.inputs.filter((input) => !input.indexed);
    const values = decodeAbiParameters(plain, log.data);
    plain.forEach((input, i) => {
      args[input.name ?? String(i)] = values[i];
    });
    return { eventName: event.name, args };
  };
}
