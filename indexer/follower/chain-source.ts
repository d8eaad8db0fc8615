// The follower's view of the chain over JSON-RPC (viem): the head, block headers (batched, with
// the blocks' transactions where handlers need them), calls to given addresses from trace_filter
// (for call handlers), and eth_getLogs over block ranges that adapt
// to the log density and to what the node accepts: the span is scaled toward a target number of
// logs per range (growing at most twofold per range) and halves when the node refuses a range as
// too large or too many results. A refusal that states a limit on the block span (hosted providers
// cap it) caps the span there for good, so that ranges stop being refused every time the span
// grows back; one about the number of logs lowers the target below the number it states (or halves
// it) for good, for the same reason. Transient RPC failures are retried with exponential backoff (a
// rate limit as long as its Retry-After says); the caller never sees them unless it stops.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  TimeoutError,
  createPublicClient,
  formatLog,
  formatTransactionReceipt,
  hexToBytes,
  http,
  keccak256,
  numberToHex,
  type Hex,
  type Log,
  type RpcLog,
  type RpcTransactionReceipt,
  type TransactionReceipt,
} from 'viem';
import { callKey } from '../runtime/declared-calls.ts';
import { traceOrder, type ContractCall } from '../runtime/ethereum-call.ts';
import type { BlockHeaderInfo, TransactionInfo } from '../runtime/ethereum-event.ts';
import type { BlockHeader } from '../store/sqlite-store.ts';
import { ETH_CALL_GAS, isRevert } from './chain-reader.ts';
import { backoffMs, type Backoff } from '../../common/backoff.ts';
import { rpcEndpoint } from '../../common/url.ts';
import { rpcFetch } from './rpc-fetch.ts';

interface ChainSourceOptions {
  rpcUrl: string;
  /** first span of eth_getLogs ranges, in blocks (default 16; it then follows the log density, see targetLogsPerRange) */
  initialRange?: number;
  /** upper bound of the span (default 10,000); lowered to the limit a node states when it refuses a range */
  maxRange?: number;
  /**
   * logs per range to aim for (default 5,000): after each range the span is scaled to the density
   * just seen so that the next range holds about this many (shrinking at once, growing at most
   * twofold); this bounds the memory one range takes, while ranges as large as that keep a distant
   * node's round trips per range from setting the pace
   */
  targetLogsPerRange?: number;
  /**
   * most addresses one eth_getLogs names (default 2,000, graph-node's GRAPH_ETH_GET_LOGS_MAX_CONTRACTS):
   * a filter naming more (a factory's thousands of instances) goes out as several requests in one
   * batch, since providers refuse long address lists (Infura takes at most 5,000 parameters)
   */
  maxAddressesPerRequest?: number;
  /**
   * first retry delay (default 250 ms), doubled per failure up to MAX_RETRY_DELAY_MS; a rate limit's
   * Retry-After (HTTP 429) is waited instead, up to a minute
   */
  retryDelayMs?: number;
  /** called on each retried failure, for logs */
  onRetry?: (what: string, error: unknown, delayMs: number) => void;
  /** called when a refusal lowers the span's upper bound, with the node's words */
  onRangeLimit?: (blocks: number, reason: string) => void;
  /**
   * called when the node first refuses a JSON-RPC batch, with the calls per batch from then on (0:
   * calls go out one by one; lowered again, silently, while the node refuses those) and its words
   */
  onBatchLimit?: (limit: number, words: string) => void;
  /** called when a refusal of an answer's size lowers the logs ranges aim at, with the node's words */
  onLogLimit?: (logs: number, reason: string) => void;
  /** aborts waits, retries and the requests under way (they then throw StoppedError) */
  signal?: AbortSignal;
}

/** Orders logs as the chain does: by block, then log index. */
const chainOrder = (a: Log, b: Log): number =>
  Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!;

/** eth_getLogs `topics`: for each position, the topics allowed there (null: any). */
type TopicsFilter = readonly (readonly Hex[] | null)[];

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

/** A call as a trace reports it, with its block (whether its transaction succeeded is not known). */
export interface TracedCall extends Omit<ContractCall, 'transactionSucceeded'> {
  blockNumber: number;
  /** lowercase */
  blockHash: Hex;
}

/** One trace of trace_filter's answer (OpenEthereum's format: erigon, reth and anvil serve it). */
interface RpcTrace {
  type: string;
  action: { from?: Hex; to?: Hex; input?: Hex; value?: Hex };
  result?: { output?: Hex; gasUsed?: Hex } | null;
  error?: string;
  blockHash: Hex;
  blockNumber: number;
  transactionHash?: Hex | null;
  transactionPosition?: number | null;
  traceAddress: number[];
}

/** What the retries of trace_filter are logged as: a node that does not serve it cannot be used. */
const TRACE_FILTER =
  'trace_filter (call handlers need a node that serves it: erigon, reth, Nethermind, anvil)';

/**
 * The call a trace reports, as graph-node takes it (EthereumCall::try_from_trace): a call (not a
 * creation, reward or self-destruct) that did not fail, carrying at least a selector (a plain value
 * transfer has none), made in a transaction; null for any other trace.
 */
function callFromTrace(trace: RpcTrace): TracedCall | null {
  const { action, result } = trace;
  if (trace.type !== 'call' || trace.error !== undefined || !result) return null;
  if (!action.input || action.input.length < 10 || !action.from || !action.to) return null;
  if (trace.transactionPosition == null || !trace.transactionHash) return null;
  return {
    from: action.from.toLowerCase() as Hex,
    to: action.to.toLowerCase() as Hex,
    value: BigInt(action.value ?? 0),
    gasUsed: BigInt(result.gasUsed ?? 0),
    input: action.input,
    output: result.output ?? '0x',
    transactionHash: trace.transactionHash.toLowerCase() as Hex,
    transactionIndex: trace.transactionPosition,
    traceAddress: trace.traceAddress,
    blockNumber: trace.blockNumber,
    blockHash: trace.blockHash.toLowerCase() as Hex,
  };
}

interface RpcBlock {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  sha3Uncles?: Hex;
  miner?: Hex;
  stateRoot?: Hex;
  transactionsRoot?: Hex;
  receiptsRoot?: Hex;
  gasUsed?: Hex;
  gasLimit?: Hex;
  difficulty?: Hex;
  totalDifficulty?: Hex;
  size?: Hex;
  baseFeePerGas?: Hex;
  logsBloom?: Hex;
  /** hashes, or whole transactions when asked for */
  transactions?: (Hex | RpcTransaction)[];
}

/** A transaction of a block as eth_getBlockByNumber(n, true) gives it (the fields graph-ts exposes). */
interface RpcTransaction {
  hash: Hex;
  from: Hex;
  to: Hex | null;
  value: Hex;
  gas: Hex;
  gasPrice?: Hex;
  maxFeePerGas?: Hex;
  maxPriorityFeePerGas?: Hex;
  nonce: Hex;
  input: Hex;
  transactionIndex: Hex;
  /** in eth_getTransactionByHash answers */
  blockHash?: Hex;
}

/** A header as the node gave it: what the store keeps, and the fields handlers see in ethereum.Block. */
export interface ChainHeader extends BlockHeader {
  info: BlockHeaderInfo;
  /** the bloom of the block's logs, when the node gives it (see bloomMayHold) */
  logsBloom?: Hex;
  /** the block's transactions by (lowercase) hash, when they were fetched with it */
  transactions?: Map<Hex, TransactionInfo>;
}

/** What a node answers when a getLogs range holds too much (geth, erigon, alchemy, infura, quicknode...). */
const rangeTooLarge =
  /too many|more than \d+|limit exceeded|exceed|response size|range|query timeout|-32005|block range|10000 results|blocks distance/i;

/**
 * What a node behind the head answers for a range past its own head (geth and reth: "block range
 * extends beyond current head block"; Avalanche: "… after last accepted block …"): a load-balanced
 * provider's lagging node, not a limit on the span, so the range is asked for again after a wait.
 */
const behindTheHead = /beyond current head|after last accepted block/i;

/**
 * The block span a refused range's error states as the node's limit, worded as hosted providers
 * word it: "range 1000000 exceeds limit of 10000" (Infura), "eth_getLogs is limited to a 10,000
 * range" (QuickNode), "up to a 2K block range" (Alchemy), "exceed maximum block range: 5000" (geth
 * forks), "max block range = 5000", "max range: 5000", "range limit 2000", "maximum is set to 2048"
 * (Avalanche, Flare), "ranges over 10000 blocks are not supported" (dRPC), "maximum [from, to] blocks
 * distance: 2000" (Cronos, Kava); null when it states none.
 */
export function statedBlockLimit(reason: string): number | null {
  const stated =
    /(?:limit of|limited to an?|up to an?|max(?:imum)?(?: block)? range\s*[:=]?|range limit|maximum is set to|ranges over|blocks distance\s*:)\s*(\d[\d,]*)\s*(k?)\b/i.exec(
      reason,
    );
  if (!stated) return null;
  const blocks = Number(stated[1]!.replace(/,/g, '')) * (stated[2] ? 1000 : 1);
  return Number.isSafeInteger(blocks) && blocks > 0 ? blocks : null;
}

/**
 * The most logs a refused range's error states the node answers with, worded as providers word it:
 * "query returned more than 10000 results" (Infura, geth), "a cap of 10K logs in the response"
 * (Alchemy), "exceeds max results 1000"; null when it states none.
 */
export function statedResultLimit(reason: string): number | null {
  const stated =
    /(\d[\d,]*)\s*(k?)\s+(?:results|logs)\b|\b(?:results|logs)\s*(?:limit|cap)?\s*(?:of|is|=|:)?\s*(\d[\d,]*)\s*(k?)\b/i.exec(
      reason,
    );
  if (!stated) return null;
  const logs = Number((stated[1] ?? stated[3])!.replace(/,/g, '')) * (stated[2] || stated[4] ? 1000 : 1);
  return Number.isSafeInteger(logs) && logs > 0 ? logs : null;
}

/**
 * Ranges aim at this share of a result limit a node states, since the span is sized by the density
 * of the range before, which the next one may exceed.
 */
const STATED_RESULT_LIMIT_SHARE = 0.8;
/** Refusals of an answer's size that state no limit halve the logs ranges aim at, down to this. */
const MIN_TARGET_LOGS = 500;

/** A refusal about the block span itself, not about how many logs the answer holds. */
const blockSpanRefusal = /block range|range (?:is )?too (?:wide|large|high)|range is (?:bigger|larger)/i;
// whole words: "eth_getLogs", which many refusals name, is not about the number of logs
const answerSizeRefusal = /\bresults\b|\blogs\b|response size/i;

/**
 * The upper bound a refusal of `width` blocks sets on the span: the limit it states, or half the
 * refused width when it is about the span but states no number; null when it is about the answer's
 * size (the density, which the span follows anyway).
 */
function refusedSpanLimit(reason: string, width: number): number | null {
  const stated = statedBlockLimit(reason);
  if (stated !== null && stated < width) return stated;
  if (blockSpanRefusal.test(reason) && !answerSizeRefusal.test(reason)) return Math.max(1, width >> 1);
  return null;
}

/**
 * What the node said of a failed request: its message and any data it attached (Tenderly, for one,
 * answers "invalid params" and gives the reason in the data), from viem's chain of errors.
 */
function nodeWords(error: unknown): string {
  const words: string[] = [];
  let cause = error as { details?: unknown; data?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; cause && typeof cause === 'object' && depth < 4; depth++) {
    if (typeof cause.details === 'string' && !words.includes(cause.details)) words.push(cause.details);
    if (cause.data !== undefined)
      words.push(typeof cause.data === 'string' ? cause.data : JSON.stringify(cause.data));
    cause = cause.cause as typeof cause;
  }
  return words.join('; ') || String((error as Error)?.message ?? error);
}

/** The node's words when `error` refuses a request as too large (see rangeTooLarge); else null. */
function refusalAsTooLarge(error: unknown): string | null {
  // a rate limit ("project ID request rate exceeded") or a proxy's HTML page (Cloudflare's 524
  // "… exceeds its limit …") says nothing of the range: a smaller one would not help, and the
  // span and the logs aimed at would stay lowered for good
  if (rateLimit(error) !== null || errorChain(error).some((e) => isHtml(e.details))) return null;
  // viem's message also holds the request; the node's own words are its details and data
  const reason = nodeWords(error);
  return rangeTooLarge.test(String((error as Error)?.message ?? error)) || rangeTooLarge.test(reason)
    ? reason
    : null;
}

/**
 * What providers answer when asked too often: HTTP 429 (nginx's HTML page, "Too Many Requests"),
 * Infura's -32005 "project ID request rate exceeded", Alchemy's "exceeded its compute units per
 * second capacity".
 */
const rateLimitWords = /too many requests|rate limit|request rate|rate exceeded|compute units|throughput/i;

/** Retry-After is honoured up to this long; a longer one is waited this long, then asked again. */
const MAX_RETRY_AFTER_MS = 60_000;
/** The longest wait between retries of a failed request, however many failures in a row. */
const MAX_RETRY_DELAY_MS = 15_000;

/** What viem's errors (an HttpRequestError and its causes) may carry. */
interface ChainedError {
  code?: unknown;
  status?: unknown;
  details?: unknown;
  headers?: unknown;
  cause?: unknown;
}

/** `error` and its causes, outermost first. */
function errorChain(error: unknown): ChainedError[] {
  const chain: ChainedError[] = [];
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    chain.push(e as ChainedError);
    e = (e as ChainedError).cause;
  }
  return chain;
}

const isHtml = (words: unknown): boolean =>
  typeof words === 'string' && /^\s*(?:"\s*)?<(?:!doctype|html|head|body)/i.test(words);

/**
 * Whether `error` is a provider's rate limit: null when it is not, else how long its Retry-After
 * header says to wait (seconds or an HTTP date, at most MAX_RETRY_AFTER_MS; null when it says none).
 */
export function rateLimit(error: unknown): { retryAfterMs: number | null } | null {
  const chain = errorChain(error);
  if (!chain.some((e) => e.status === 429) && !rateLimitWords.test(nodeWords(error))) return null;
  for (const { headers } of chain) {
    const value = headers instanceof Headers ? headers.get('retry-after') : null;
    if (value === null) continue;
    const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
    if (Number.isFinite(ms)) return { retryAfterMs: Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) };
  }
  return { retryAfterMs: null };
}

/**
 * Whether `error` is the node's refusal of the request (a JSON-RPC error) that is no rate limit:
 * one the chain source does not read as a range too large is retried as it stands.
 */
export function isNodeRefusal(error: unknown): boolean {
  return errorChain(error).some((e) => typeof e.code === 'number') && rateLimit(error) === null;
}

/** Which blocks one eth_getLogs asks for: those numbered [from, to], or one by its hash. */
type LogBlocks = { from: number; to: number } | { blockHash: Hex };

/** An answer no node should give (not a list of logs, a log not asked for): retried, never a refusal. */
class NodeAnswerError extends Error {}

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

export class StoppedError extends Error {
  constructor() {
    super('stopped');
  }
}

const optionalBigInt = (hex: Hex | undefined) => (hex === undefined ? undefined : BigInt(hex));

/**
 * The price per gas a transaction paid, as graph-node gives handlers (`effective_gas_price`): the
 * gas price of legacy and access-list transactions; for fee-market ones the base fee plus the
 * priority fee, capped by the fee cap (the fee cap alone when the block has no base fee).
 */
export function effectiveGasPrice(
  tx: Pick<RpcTransaction, 'gasPrice' | 'maxFeePerGas' | 'maxPriorityFeePerGas'>,
  baseFeePerGas: bigint | undefined,
): bigint {
  if (tx.maxFeePerGas === undefined) return BigInt(tx.gasPrice ?? 0);
  const cap = BigInt(tx.maxFeePerGas);
  if (baseFeePerGas === undefined) return cap;
  const priority = BigInt(tx.maxPriorityFeePerGas ?? 0);
  return cap - baseFeePerGas > priority ? baseFeePerGas + priority : cap;
}

function transactionFromRpc(tx: RpcTransaction, baseFeePerGas: bigint | undefined): TransactionInfo {
  return {
    from: tx.from.toLowerCase() as Hex,
    to: tx.to ? (tx.to.toLowerCase() as Hex) : null, // a contract creation's is null (or absent)
    value: BigInt(tx.value),
    gasLimit: BigInt(tx.gas),
    gasPrice: effectiveGasPrice(tx, baseFeePerGas),
    nonce: BigInt(tx.nonce),
    input: tx.input,
    index: BigInt(tx.transactionIndex),
  };
}

/** The header of `block`, with those of its transactions whose (lowercase) hashes are in `keep`. */
function headerFromRpc(block: RpcBlock, keep?: ReadonlySet<Hex>): ChainHeader {
  const header: ChainHeader = {
    number: Number(BigInt(block.number)),
    hash: block.hash.toLowerCase(),
    parentHash: block.parentHash.toLowerCase(),
    timestamp: Number(BigInt(block.timestamp)),
    info: {
      unclesHash: block.sha3Uncles,
      author: block.miner,
      stateRoot: block.stateRoot,
      transactionsRoot: block.transactionsRoot,
      receiptsRoot: block.receiptsRoot,
      gasUsed: optionalBigInt(block.gasUsed),
      gasLimit: optionalBigInt(block.gasLimit),
      difficulty: optionalBigInt(block.difficulty),
      totalDifficulty: optionalBigInt(block.totalDifficulty),
      size: optionalBigInt(block.size),
      baseFeePerGas: optionalBigInt(block.baseFeePerGas),
    },
    logsBloom: block.logsBloom,
  };
  if (keep) {
    // a node that gave hashes where whole ones were asked for gives none
    const whole = (block.transactions ?? []).filter((tx): tx is RpcTransaction => typeof tx === 'object');
    header.transactions = transactionsByHash(whole, header.info.baseFeePerGas, keep);
  }
  return header;
}

/** Those of `txs` whose (lowercase) hashes are in `keep`, by hash, as handlers get them. */
function transactionsByHash(
  txs: readonly RpcTransaction[],
  baseFeePerGas: bigint | undefined,
  keep: ReadonlySet<Hex>,
): Map<Hex, TransactionInfo> {
  const kept = new Map<Hex, TransactionInfo>();
  for (const tx of txs) {
    const hash = tx.hash.toLowerCase() as Hex;
    if (keep.has(hash)) kept.set(hash, transactionFromRpc(tx, baseFeePerGas));
  }
  return kept;
}

/**
 * Blocks asked for with their transactions per JSON-RPC batch (HTTP request), and such batches under
 * way at once: a whole mainnet block is 100-200 kB of JSON, so a range's worth asked at once could
 * take hundreds of megabytes before the transactions no handler gets are dropped.
 */
const FULL_BLOCKS_PER_BATCH = 20;
const FULL_BLOCK_BATCHES_IN_FLIGHT = 4;
/**
 * A block from which at most this many transactions are wanted has them fetched one by one
 * (eth_getTransactionByHash, a kilobyte each) beside its header rather than whole: where logs are
 * sparse, as for most contracts on a public chain, that is a hundredth of the bytes.
 */
const TRANSACTIONS_BY_HASH_MAX = 4;

/** Declared eth calls made at once: 8 batches of the client's 100 (see ChainSource.ethCalls). */
const ETH_CALLS_IN_FLIGHT = 800;

/**
 * An RPC failure in one line: viem's short message, then what it says went wrong (an HTTP status
 * and body, a JSON-RPC error) and the innermost cause (e.g. `ECONNREFUSED`), which its own message
 * (`HTTP request failed.`) leaves out.
 */
export function describeRpcError(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const { shortMessage, message, status, code, details } = e as Record<string, unknown>;
    const text = String(shortMessage ?? message ?? e)
      .split('\n')[0]!
      .replace(/\.$/, '');
    const said = [
      typeof status === 'number' ? `HTTP ${status}` : '',
      typeof code === 'string' ? code : '',
      typeof details === 'string' && details !== text ? inBrief(details) : '',
    ].filter((part) => part && !parts.some((seen) => seen.includes(part)));
    if (!parts.some((seen) => seen.includes(text))) parts.push(text);
    parts.push(...said);
  }
  return parts.join(': ');
}

/** The most characters of a node's or a proxy's words a log line quotes. */
const WORDS_QUOTED = 200;

/**
 * `words` short enough for a log line: an HTML page (a proxy's error page) as its title or text,
 * anything longer than WORDS_QUOTED cut there.
 */
function inBrief(words: string): string {
  const text = isHtml(words)
    ? (/<title[^>]*>([^<]*)</i.exec(words)?.[1] ?? words.replace(/<[^>]*>/g, ' '))
    : words;
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > WORDS_QUOTED ? `${flat.slice(0, WORDS_QUOTED)}…` : flat;
}

/** how many times chainId() asks before it gives up */
const CHAIN_ID_ATTEMPTS = 5;
/** the waits between chainId()'s tries: 250 ms, doubling (the four of them 3.75 s) */
const CHAIN_ID_RETRY: Backoff = { minMs: 250, maxMs: 2_000 };
/**
 * How long chainId() waits for each answer: a node that accepts connections but never answers
 * would otherwise hold the start for five times viem's 60 s before the refusal.
 */
const CHAIN_ID_TIMEOUT_MS = 3_000;

export class ChainSource {
  private readonly client;
  /** the same node, batching fewer requests per HTTP request: for whole blocks */
  private readonly fullBlockClient;
  /** the same node, waiting CHAIN_ID_TIMEOUT_MS for an answer: for the start's chain id */
  private readonly startUpClient;
  private span: number;
  private maxRange: number;
  /**
   * logs per range aimed at: targetLogsPerRange, lowered for good by refusals of answers that large
   * (else the span would grow back after each refusal and be refused again, every other range)
   */
  private targetLogs: number;
  /** logs in the latest range fetched */
  private lastLogs = 0;
  /** the waits between retries of a failed request (see retryDelayMs) */
  private readonly retryBackoff: Backoff;

  constructor(private readonly options: ChainSourceOptions) {
    const { url, headers } = rpcEndpoint(options.rpcUrl);
    // one for every client: a batch limit the node states holds for them all
    const fetchFn = rpcFetch((limit, words) => options.onBatchLimit?.(limit, words), options.signal);
    const client = (batchSize: number, timeout = 60_000) =>
      createPublicClient({
        transport: http(url, {
          batch: { batchSize, wait: 0 },
          retryCount: 0,
          timeout,
          fetchOptions: { headers },
          fetchFn,
        }),
      });
    this.client = client(100);
    this.fullBlockClient = client(FULL_BLOCKS_PER_BATCH);
    this.startUpClient = client(1, CHAIN_ID_TIMEOUT_MS);
    this.span = Math.min(options.initialRange ?? 16, options.maxRange ?? 10_000);
    this.maxRange = options.maxRange ?? 10_000;
    this.targetLogs = options.targetLogsPerRange ?? 5_000;
    this.retryBackoff = { minMs: options.retryDelayMs ?? 250, maxMs: MAX_RETRY_DELAY_MS };
  }

  /** The current getLogs span (blocks per range). */
  get range(): number {
    return this.span;
  }

  /**
   * How many ranges may be fetched at once, up to `max`: one while ranges hold logs near the target
   * (each may hold that many in memory), `max` once the span is at its bound and ranges hold so few
   * logs that `max` of them stay within one range's target; there a node's round trips, not the
   * handlers, set the pace. A sparse stretch met on the way up to the bound (the span still growing)
   * keeps one: the density of the blocks past it is not known yet.
   */
  concurrentRanges(max: number): number {
    return this.span >= this.maxRange && this.lastLogs * max <= this.targetLogs ? max : 1;
  }

  /**
   * Runs `call` until it succeeds, backing off exponentially between failures (see retryDelayMs),
   * or as long as a rate limit's Retry-After says (bounded by MAX_RETRY_AFTER_MS). A failure that
   * is an answer (a refusal of a range as too large) is for `call` to return.
   */
  async retry<T>(what: string, call: () => Promise<T>): Promise<T> {
    for (let failures = 0; ; failures++) {
      if (this.options.signal?.aborted) throw new StoppedError();
      try {
        return await call();
      } catch (error) {
        this.throwIfStopped(error);
        const wait = rateLimit(error)?.retryAfterMs ?? backoffMs(failures, this.retryBackoff);
        this.options.onRetry?.(what, error, wait);
        await this.pause(wait);
      }
    }
  }

  /** Throws a StoppedError if `error` is one, or the stop aborted the request that failed with it. */
  private throwIfStopped(error: unknown): void {
    if (error instanceof StoppedError) throw error;
    if (this.options.signal?.aborted) throw new StoppedError();
  }

  /** Waits `ms`; a stop ends the wait with a StoppedError. */
  private async pause(ms: number): Promise<void> {
    try {
      await sleep(ms, undefined, { signal: this.options.signal });
    } catch {
      throw new StoppedError();
    }
  }

  /**
   * The node's chain id, asked a few times over about 4 s (a flaky node answers within them), each
   * time waiting at most CHAIN_ID_TIMEOUT_MS: a node that cannot answer it at start-up is a
   * misconfiguration to report, not an outage to wait out. The last failure is thrown (a timeout
   * naming how long each try waited).
   */
  async chainId(): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.startUpClient.getChainId();
      } catch (error) {
        if (attempt === CHAIN_ID_ATTEMPTS - 1 && error instanceof TimeoutError)
          throw new Error(`no answer within ${CHAIN_ID_TIMEOUT_MS / 1000} s, ${CHAIN_ID_ATTEMPTS} times`, {
            cause: error,
          });
        if (attempt === CHAIN_ID_ATTEMPTS - 1) throw error;
        await this.pause(backoffMs(attempt, CHAIN_ID_RETRY));
      }
    }
  }

  async headNumber(): Promise<number> {
    return this.retry('eth_blockNumber', async () =>
      Number(await this.client.getBlockNumber({ cacheTime: 0 })),
    );
  }

  /**
   * `method` called once for each distinct key (one JSON-RPC batch, retried whole), answers by key;
   * a null answer (a block past the head, an unknown transaction) stays null.
   */
  private async each<K, Raw, T>(
    method: 'eth_getBlockByNumber' | 'eth_getTransactionByHash' | 'eth_getTransactionReceipt',
    keys: readonly K[],
    params: (key: K) => unknown[],
    format: (raw: Raw) => T,
    client = this.client,
  ): Promise<Map<K, T | null>> {
    const unique = [...new Set(keys)];
    return this.retry(method, async () => {
      const answers = (await Promise.all(
        // params fit `method` by construction; viem types each method's params apart
        unique.map((key) => client.request({ method, params: params(key) } as never)),
      )) as (Raw | null)[];
      return new Map(unique.map((key, i) => [key, answers[i] ? format(answers[i]!) : null]));
    });
  }

  /**
   * Headers by number; a number past the node's head maps to null. The blocks in `transactionsOf`
   * come with those of their transactions it lists (by lowercase hash; a hash the block lacks is
   * absent from the header's transactions): read with the whole block, or one by one where few are
   * wanted from it (see TRANSACTIONS_BY_HASH_MAX).
   */
  async headers(
    numbers: readonly number[],
    transactionsOf?: ReadonlyMap<number, ReadonlySet<Hex>>,
  ): Promise<Map<number, ChainHeader | null>> {
    const unique = [...new Set(numbers)];
    const wanted = (n: number) => transactionsOf?.get(n)?.size ?? 0;
    const light = unique.filter((n) => wanted(n) <= TRANSACTIONS_BY_HASH_MAX);
    const full = unique.filter((n) => wanted(n) > TRANSACTIONS_BY_HASH_MAX);
    const byHash = light.filter((n) => transactionsOf?.has(n));
    const transactions = new Map<Hex, RpcTransaction | null>();
    const fetchTransactions = async () => {
      const hashes = byHash.flatMap((n) => [...transactionsOf!.get(n)!]);
      const answers = await this.each(
        'eth_getTransactionByHash',
        hashes,
        (hash) => [hash],
        (tx: RpcTransaction) => tx,
      );
      for (const [hash, tx] of answers) transactions.set(hash, tx);
    };
    const fullBatches: number[][] = [];
    for (let i = 0; i < full.length; i += FULL_BLOCKS_PER_BATCH)
      fullBatches.push(full.slice(i, i + FULL_BLOCKS_PER_BATCH));
    const result = new Map<number, ChainHeader | null>();
    const fetchInto = async (batch: number[], withTransactions: boolean) => {
      const answers = await this.each(
        'eth_getBlockByNumber',
        batch,
        (n) => [numberToHex(n), withTransactions],
        (block: RpcBlock) =>
          headerFromRpc(block, withTransactions ? transactionsOf?.get(Number(block.number)) : undefined),
        withTransactions ? this.fullBlockClient : this.client,
      );
      for (const [n, header] of answers) result.set(n, header);
    };
    const fetchFullBatches = async () => {
      for (let batch = fullBatches.shift(); batch; batch = fullBatches.shift()) await fetchInto(batch, true);
    };
    const fullInFlight = Math.min(FULL_BLOCK_BATCHES_IN_FLIGHT, fullBatches.length);
    await Promise.all([
      fetchInto(light, false),
      fetchTransactions(),
      ...Array.from({ length: fullInFlight }, fetchFullBatches),
    ]);
    for (const n of byHash) {
      const header = result.get(n);
      if (!header) continue;
      // a transaction read by hash counts only if it is in this block (the chain may have moved)
      const inBlock = [...transactionsOf!.get(n)!]
        .map((hash) => transactions.get(hash))
        .filter((tx): tx is RpcTransaction => tx?.blockHash?.toLowerCase() === header.hash);
      header.transactions = transactionsByHash(inBlock, header.info.baseFeePerGas, transactionsOf!.get(n)!);
    }
    return result;
  }

  /** Receipts by transaction hash; a transaction the node does not know maps to null. */
  receipts(hashes: readonly Hex[]): Promise<Map<Hex, TransactionReceipt | null>> {
    return this.each(
      'eth_getTransactionReceipt',
      hashes,
      (hash) => [hash],
      (raw: RpcTransactionReceipt) => formatTransactionReceipt(raw),
    );
  }

  /**
   * The answers to eth_calls at their blocks (declared calls made ahead), by block hash and then
   * callKey; null where the call reverted. Made once each, in batches (as every request is), a few
   * at once, never retried: a call the node failed is missing, and is made when its block runs.
   */
  async ethCalls(
    calls: readonly { to: Hex; data: Hex; blockHash: Hex }[],
  ): Promise<Map<Hex, Map<string, Hex | null>>> {
    const byBlock = new Map<Hex, Map<string, { to: Hex; data: Hex }>>();
    for (const { to, data, blockHash } of calls) {
      const hash = blockHash.toLowerCase() as Hex;
      const block = byBlock.get(hash) ?? new Map<string, { to: Hex; data: Hex }>();
      block.set(callKey(to, data), { to, data });
      byBlock.set(hash, block);
    }
    const answers = new Map<Hex, Map<string, Hex | null>>();
    const requests: (() => Promise<void>)[] = [];
    for (const [blockHash, block] of byBlock) {
      const known = new Map<string, Hex | null>();
      answers.set(blockHash, known);
      for (const [key, { to, data }] of block) {
        const params = [{ to, data, gas: ETH_CALL_GAS }, { blockHash }];
        requests.push(() =>
          this.client.request({ method: 'eth_call', params: params as never }).then(
            (answer) => void known.set(key, answer),
            (error: unknown) => {
              const code = (error as { code?: number }).code;
              if (isRevert({ code, message: nodeWords(error) })) known.set(key, null);
            },
          ),
        );
      }
    }
    // a few batches at a time: a dense range's thousands of calls at once would flood the node
    for (let i = 0; i < requests.length; i += ETH_CALLS_IN_FLIGHT)
      await Promise.all(requests.slice(i, i + ETH_CALLS_IN_FLIGHT).map((request) => request()));
    return answers;
  }

  async header(number: number): Promise<ChainHeader | null> {
    return (await this.headers([number])).get(number) ?? null;
  }

  /**
   * The logs of `filter` in [from, to]: one eth_getLogs per part of its address list, and one per
   * entry of its anyAddressTopics, in one batch, no retries; in chain order, each log once. An
   * answer that is not a list of logs, or holds a log outside [from, to], is thrown as a
   * NodeAnswerError.
   */
  getLogs(filter: LogFilter, from: number, to: number): Promise<Log[]> {
    return this.matchingLogs(filter, { from, to });
  }

  /**
   * The logs of the block `blockHash` whose topic0 is among `topic0s` (null: all its logs), from any
   * address, in one eth_getLogs by block hash (EIP-234: a node that does not have the block refuses
   * it instead of answering no logs, as it does for a range past its head), no retries: a hash a
   * reorg dropped stays unknown, so the caller decides whether to fetch its range again. Any address,
   * so that a filter naming thousands (a factory's instances) is one request, not one per part of
   * its address list; the caller keeps those its filter matches (see logMatcher).
   */
  async blockLogs(blockHash: Hex, topic0s: readonly Hex[] | null): Promise<Log[]> {
    // (a node reads an empty list at a position as any value there)
    if (topic0s?.length === 0) return [];
    const anyLog: TopicsFilter = [];
    return this.matchingLogs(
      { addresses: null, topics: [], anyAddressTopics: [topic0s === null ? anyLog : [topic0s]] },
      { blockHash },
    );
  }

  private async matchingLogs(filter: LogFilter, blocks: LogBlocks): Promise<Log[]> {
    const asked =
      'blockHash' in blocks
        ? { blockHash: blocks.blockHash }
        : { fromBlock: numberToHex(blocks.from), toBlock: numberToHex(blocks.to) };
    const request = async (address: readonly Hex[] | null, topics: TopicsFilter) => {
      const answer: unknown = await this.client.request({
        method: 'eth_getLogs',
        params: [{ ...asked, ...(address ? { address } : {}), topics }],
      } as never);
      if (!Array.isArray(answer))
        throw new NodeAnswerError(`the node answered eth_getLogs with ${String(answer)}, not a list of logs`);
      return answer as RpcLog[];
    };
    const requests: Promise<RpcLog[][]>[] = [];
    const topics = [filter.topics];
    if (filter.topics.length > 0 && filter.addresses === null)
      requests.push(request(null, topics).then((l) => [l]));
    else if (filter.topics.length > 0 && filter.addresses!.length > 0)
      requests.push(this.inParts(filter.addresses!, (part) => request(part, topics)));
    for (const narrowed of filter.anyAddressTopics ?? [])
      requests.push(request(null, narrowed).then((l) => [l]));
    const logs = (await Promise.all(requests)).flat(2).map((l) => formatLog(l));
    // graph-node refuses such an answer too ("block … returned by the Ethereum node is before …",
    // ethereum_adapter.rs): a log of another block would run a block again, or one not yet reached
    const stray = logs.find((log) =>
      'blockHash' in blocks
        ? log.blockHash?.toLowerCase() !== blocks.blockHash.toLowerCase()
        : !(Number(log.blockNumber) >= blocks.from && Number(log.blockNumber) <= blocks.to),
    );
    if (stray)
      throw new NodeAnswerError(
        `the node answered eth_getLogs of ${'blockHash' in blocks ? `block ${blocks.blockHash}` : `blocks ${blocks.from} to ${blocks.to}`} with a log of block ${stray.blockNumber} (${stray.blockHash}), which it was not asked for`,
      );
    return inChainOrderOnce(logs);
  }

  /**
   * `request` for each part of `addresses` of at most maxAddressesPerRequest, all at once (one
   * batch): providers refuse long address lists.
   */
  private inParts<T>(addresses: readonly Hex[], request: (part: Hex[]) => Promise<T[]>): Promise<T[][]> {
    const chunk = this.options.maxAddressesPerRequest ?? 2_000;
    const parts: Promise<T[]>[] = [];
    for (let i = 0; i < addresses.length; i += chunk) parts.push(request(addresses.slice(i, i + chunk)));
    return Promise.all(parts);
  }

  /**
   * Logs of [from, to], or 'too-large' when the node refused the range as too big; the span is then
   * halved. After a range with more logs than targeted it shrinks in proportion; after a full-span
   * range with fewer it grows in proportion, at most twofold (a sparse stretch says little about the
   * next one). Other failures are retried with backoff.
   */
  async logsInRange(filter: LogFilter, from: number, to: number): Promise<Log[] | 'too-large'> {
    const logs = await this.requestLogs(filter, from, to);
    if (logs !== 'too-large') this.fitSpan(to - from + 1, logs.length);
    return logs;
  }

  /**
   * Sizes the span by a range of `width` blocks found to hold `logs` logs under the filter in use
   * (as logsInRange does; the follower also calls it when new data sources added logs to a range
   * fetched before them, whose first count said nothing of the filter now in use).
   */
  fitSpan(width: number, logs: number): void {
    this.lastLogs = logs;
    const target = this.targetLogs;
    if (logs > target) {
      // scale the span to the density just seen, so one dense stretch does not take several halvings
      // (by the range's own width: one fetched ahead, or widened, may be wider than the span now)
      this.span = Math.max(1, Math.floor((width * target) / logs));
    } else if (width >= this.span) {
      // Growing only while ranges held under half the target left dense stretches in ranges of
      // half the target, and twice the ranges: a distant node's round trips then set the pace.
      const fit = Math.floor((width * target) / Math.max(1, logs));
      this.span = Math.min(this.maxRange, this.span * 2, Math.max(this.span, fit));
    }
  }

  /**
   * After a refusal of an answer's size: ranges aim below the limit the node states, or at half as
   * many logs as before when it states none (never below MIN_TARGET_LOGS that way). A stated limit
   * above the target lowers nothing: the range was refused for a denser stretch than the last.
   */
  private lowerTargetLogs(reason: string): void {
    const stated = statedResultLimit(reason);
    const next =
      stated === null
        ? Math.max(MIN_TARGET_LOGS, Math.floor(this.targetLogs / 2))
        : Math.max(1, Math.floor(stated * STATED_RESULT_LIMIT_SHARE));
    if (next >= this.targetLogs) return;
    this.targetLogs = next;
    this.options.onLogLimit?.(next, reason);
  }

  /**
   * One eth_getLogs of [from, to], retried with backoff on failures; 'too-large' (and the span
   * halved, or capped at a limit the refusal states) when the node refused the range as too big.
   */
  private requestLogs(filter: LogFilter, from: number, to: number): Promise<Log[] | 'too-large'> {
    return this.retry('eth_getLogs', async () => {
      try {
        return await this.getLogs(filter, from, to);
      } catch (error) {
        // a stop is not a refusal: the span stays as it is
        this.throwIfStopped(error);
        const reason =
          error instanceof NodeAnswerError || behindTheHead.test(nodeWords(error))
            ? null
            : refusalAsTooLarge(error);
        if (reason === null || to <= from) throw error;
        const width = to - from + 1;
        const limit = refusedSpanLimit(reason, width);
        if (limit !== null && limit < this.maxRange) {
          this.maxRange = limit;
          this.options.onRangeLimit?.(limit, reason);
        }
        if (limit === null) this.lowerTargetLogs(reason);
        this.span = Math.max(1, Math.min(this.span, width >> 1, this.maxRange));
        return 'too-large' as const;
      }
    });
  }

  /**
   * The calls to `addresses` in [from, to] that call handlers may get (see callFromTrace), from
   * trace_filter, in chain order (by block, transaction, then depth-first through each call tree).
   * Long address lists go out in parts, as for eth_getLogs; a range the node refuses as too large
   * is asked for in halves; other failures are retried with backoff.
   */
  async callsInRange(addresses: readonly Hex[], from: number, to: number): Promise<TracedCall[]> {
    if (addresses.length === 0) return [];
    const request = (toAddress: readonly Hex[], start: number, end: number) =>
      this.client.request({
        method: 'trace_filter',
        params: [{ fromBlock: numberToHex(start), toBlock: numberToHex(end), toAddress }],
      } as never) as Promise<RpcTrace[]>;
    const inSpan = async (start: number, end: number): Promise<RpcTrace[]> => {
      const answer = await this.retry(TRACE_FILTER, async () => {
        try {
          return (await this.inParts(addresses, (part) => request(part, start, end))).flat();
        } catch (error) {
          if (end > start && refusalAsTooLarge(error) !== null) return 'too-large' as const;
          throw error;
        }
      });
      if (answer !== 'too-large') return answer;
      const middle = Math.floor((start + end) / 2);
      return [...(await inSpan(start, middle)), ...(await inSpan(middle + 1, end))];
    };
    const calls = (await inSpan(from, to)).map(callFromTrace).filter((c): c is TracedCall => c !== null);
    return calls.sort((a, b) => a.blockNumber - b.blockNumber || traceOrder(a, b));
  }

  /**
   * Logs of [from, to] for a filter narrower than the ranges' (those the follower lacks for new
   * data sources), in ranges of the span, smaller where refused. The span is not sized by them:
   * their density says nothing of the ranges', and a sparse one would grow the span past them.
   */
  async narrowerLogs(filter: LogFilter, from: number, to: number): Promise<Log[]> {
    const out: Log[] = [];
    let start = from;
    while (start <= to) {
      const end = Math.min(to, start + this.span - 1);
      const logs = await this.requestLogs(filter, start, end);
      if (logs === 'too-large') continue;
      for (const log of logs) out.push(log);
      start = end + 1;
    }
    return out;
  }
}
