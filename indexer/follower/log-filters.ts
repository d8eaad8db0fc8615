// Log filters as the follower asks eth_getLogs for them, and what is decided on them without a node:
// whether a log matches one, whether a block's log bloom may hold a match (the near-head check), the
// topic0s to ask a block for by hash, and logs put in chain order once each. Kept apart from the
// chain source, which sends the filters, since the follower uses them on logs it already holds.
import { hexToBytes, keccak256, type Hex, type Log } from 'viem';

/** Orders logs as the chain does: by block, then log index. */
const chainOrder = (a: Log, b: Log): number =>
  Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!;

/** eth_getLogs `topics`: for each position, the topics allowed there (null: any). */
export type TopicsFilter = readonly (readonly Hex[] | null)[];

export interface LogFilter {
  /** lowercase addresses; null: any address */
  readonly addresses: readonly Hex[] | null;
  /** topic0 values to match */
  readonly topics: readonly Hex[];
  /**
   * logs asked for besides, from any address, by their topics: those of handlers of data sources
   * without an address that filter by indexed arguments (a wildcard Transfer handler for one
   * recipient must not fetch every Transfer on the chain)
   */
  readonly anyAddressTopics?: readonly TopicsFilter[];
}

/**
 * `logs` in chain order, each (block hash, log index) once. graph-node sorts and de-duplicates a
 * block's triggers (block_stream.rs) since a node may repeat a log in one answer, and the parts of a
 * split filter match the same logs; a log run twice would write its entities twice. Two logs at one
 * position with different block hashes are both kept: one disagrees with its block's header, which
 * makes the follower fetch the range again.
 */
export function inChainOrderOnce(logs: Log[]): Log[] {
  let ordered = true;
  for (let i = 1; i < logs.length && ordered; i++) ordered = chainOrder(logs[i - 1]!, logs[i]!) < 0;
  if (ordered) return logs;
  logs.sort(chainOrder);
  return logs.filter(
    (log, i) => i === 0 || chainOrder(logs[i - 1]!, log) !== 0 || logs[i - 1]!.blockHash !== log.blockHash,
  );
}

/** Bit positions a value sets in a logs bloom, as [byte, mask] × 3, by value (see bloomMayHold). */
const bloomBitsOf = new Map<string, number[]>();
const BLOOM_BITS_KEPT = 100_000;

/** Whether the bloom (256 bytes) holds the three bits of `value` (the yellow paper's M3:2048). */
function bloomHas(bloom: Uint8Array, value: Hex): boolean {
  let bits = bloomBitsOf.get(value);
  if (!bits) {
    const hash = hexToBytes(keccak256(value));
    bits = [];
    for (let i = 0; i < 6; i += 2) {
      const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
      bits.push(255 - (bit >> 3), 1 << (bit & 7));
    }
    if (bloomBitsOf.size >= BLOOM_BITS_KEPT) bloomBitsOf.clear();
    bloomBitsOf.set(value, bits);
  }
  return (
    (bloom[bits[0]!]! & bits[1]!) !== 0 &&
    (bloom[bits[2]!]! & bits[3]!) !== 0 &&
    (bloom[bits[4]!]! & bits[5]!) !== 0
  );
}

/**
 * Whether a block whose header carries `logsBloom` may hold a log `filter` matches (as geth tests
 * a filter against a bloom): an address and a topic0 of the filter are both in it, or every position
 * of one of its anyAddressTopics has a value in it. True when the header carries no bloom.
 */
export function bloomMayHold(logsBloom: Hex | undefined, filter: LogFilter): boolean {
  if (!logsBloom) return true;
  const bloom = hexToBytes(logsBloom);
  const some = (values: readonly Hex[]) =>
    values.some((value) => bloomHas(bloom, value.toLowerCase() as Hex));
  if (
    filter.topics.length > 0 &&
    (filter.addresses === null || some(filter.addresses)) &&
    some(filter.topics)
  )
    return true;
  return (filter.anyAddressTopics ?? []).some((topics) =>
    topics.every((allowed) => allowed === null || some(allowed)),
  );
}

/** The topic0 values a log of one of `filters` may have; null when any may (a position 0 left open). */
export function topic0sOf(filters: readonly LogFilter[]): Hex[] | null {
  const topic0s = new Set<Hex>();
  for (const filter of filters) {
    for (const topic of filter.topics) topic0s.add(topic);
    for (const topics of filter.anyAddressTopics ?? []) {
      const first = topics[0];
      if (!first) return null;
      for (const topic of first) topic0s.add(topic);
    }
  }
  return [...topic0s];
}

/** Whether a log matches `filter`, as a node's eth_getLogs decides it. */
export function logMatcher(filter: LogFilter): (log: Log) => boolean {
  const lower = (values: readonly Hex[]) => new Set(values.map((v) => v.toLowerCase() as Hex));
  const addresses = filter.addresses && lower(filter.addresses);
  const topic0s = lower(filter.topics);
  const anyAddressTopics = (filter.anyAddressTopics ?? []).map((topics) =>
    topics.map((values) => values && lower(values)),
  );
  return (log) => {
    const topics = log.topics.map((topic) => topic?.toLowerCase() as Hex);
    if (topic0s.has(topics[0]!) && (!addresses || addresses.has(log.address.toLowerCase() as Hex)))
      return true;
    return anyAddressTopics.some((allowed) =>
      allowed.every((values, i) => values === null || values.has(topics[i]!)),
    );
  };
}
