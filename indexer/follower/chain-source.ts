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
// What the node's answers hold is read in rpc-answers.ts, what its refusals and failures say in
// rpc-errors.ts; the log filters it sends are log-filters.ts's.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  TimeoutError,
  createPublicClient,
  formatLog,
  formatTransactionReceipt,
  http,
  numberToHex,
  type Hex,
  type Log,
  type RpcLog,
  type RpcTransactionReceipt,
  type TransactionReceipt,
} from 'viem';
import { callKey } from '../runtime/declared-calls.ts';
import { traceOrder } from '../runtime/ethereum-call.ts';
import { ETH_CALL_GAS, isRevert } from './chain-reader.ts';
import { backoffMs, type Backoff } from '../../common/backoff.ts';
import { httpEndpoint } from '../../common/url.ts';
import { rpcFetch } from './rpc-fetch.ts';
import { inChainOrderOnce, type LogFilter, type TopicsFilter } from './log-filters.ts';
import {
  callFromTrace,
  headerFromRpc,
  transactionsByHash,
  type ChainHeader,
  type RpcBlock,
  type RpcTrace,
  type RpcTransaction,
  type TracedCall,
} from './rpc-answers.ts';
import {
  behindTheHead,
  nodeWords,
  rateLimit,
  refusalAsTooLarge,
  refusedSpanLimit,
  statedResultLimit,
} from './rpc-errors.ts';

interface ChainSourceOptions {
  rpcUrl: string;
  /** first span of eth_getLogs ranges, in blocks (default 16; it then follows the log density, see targetLogsPerRange) */
  initialRange?: number;
  /** upper bound of the span (default DEFAULT_MAX_RANGE); lowered to the limit a node states when it refuses a range */
  maxRange?: number;
  /**
   * logs per range to aim for (default 5,000): after each range the span is scaled to the density
   * just seen so that the next range holds about this many (shrinking at once, growing at most
   * twofold); this bounds the memory one range takes, while ranges as large as that keep a distant
   * node's round trips per range from setting the pace
   */
  targetLogsPerRange?: number;
  /**
   * most addresses one eth_getLogs names (default DEFAULT_MAX_ADDRESSES_PER_REQUEST):
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
  /**
   * how long one request (or batch) may take before it fails and is retried (default
   * DEFAULT_RPC_TIMEOUT_MS); an archive node may take long over old blocks
   */
  requestTimeoutMs?: number;
  /**
   * the most bytes read of one answer (default MAX_ANSWER_BYTES): a larger eth_getLogs answer is
   * refused as a node's refusal of an answer's size is, a larger batch's sent again in halves
   */
  maxAnswerBytes?: number;
  /** aborts waits, retries and the requests under way (they then throw StoppedError) */
  signal?: AbortSignal;
}

/** How long one JSON-RPC request may take unless INDEXER_RPC_TIMEOUT_MS says otherwise. */
export const DEFAULT_RPC_TIMEOUT_MS = 60_000;

/** The widest eth_getLogs span, in blocks, unless INDEXER_MAX_BLOCK_RANGE says otherwise. */
export const DEFAULT_MAX_RANGE = 10_000;

/**
 * Most addresses one eth_getLogs names unless INDEXER_GET_LOGS_MAX_ADDRESSES says otherwise
 * (graph-node's GRAPH_ETH_GET_LOGS_MAX_CONTRACTS).
 */
export const DEFAULT_MAX_ADDRESSES_PER_REQUEST = 2_000;

/** What the retries of trace_filter are logged as: a node that does not serve it cannot be used. */
const TRACE_FILTER =
  'trace_filter (call handlers need a node that serves it: erigon, reth, Nethermind, anvil)';

/**
 * Ranges aim at this share of a result limit a node states, since the span is sized by the density
 * of the range before, which the next one may exceed.
 */
const STATED_RESULT_LIMIT_SHARE = 0.8;
/** Refusals of an answer's size that state no limit halve the logs ranges aim at, down to this. */
const MIN_TARGET_LOGS = 500;

/** The longest wait between retries of a failed request, however many failures in a row. */
const MAX_RETRY_DELAY_MS = 15_000;

/** Which blocks one eth_getLogs asks for: those numbered [from, to], or one by its hash. */
type LogBlocks = { from: number; to: number } | { blockHash: Hex };

/** An answer no node should give (not a list of logs, a log not asked for): retried, never a refusal. */
class NodeAnswerError extends Error {}

export class StoppedError extends Error {
  constructor() {
    super('stopped');
  }
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
    const { url, headers } = httpEndpoint(options.rpcUrl);
    // one for every client: a batch limit the node states holds for them all
    const fetchFn = rpcFetch({
      onBatchLimit: (limit, words) => options.onBatchLimit?.(limit, words),
      stop: options.signal,
      maxAnswerBytes: options.maxAnswerBytes,
    });
    const client = (batchSize: number, timeout = options.requestTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS) =>
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
    this.maxRange = options.maxRange ?? DEFAULT_MAX_RANGE;
    this.span = Math.min(options.initialRange ?? 16, this.maxRange);
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
    const chunk = this.options.maxAddressesPerRequest ?? DEFAULT_MAX_ADDRESSES_PER_REQUEST;
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
