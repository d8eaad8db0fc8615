// The follower's reads of the chain, kept apart from the loop that drives them (follower.ts) and from
// running blocks (block-runner.ts), because checking that a node's answers agree is most of the code:
// a range of blocks is fetched with the logs of the tracked addresses and topics over adaptive spans,
// the headers of the blocks that hold them (with the logs' transactions, which graph-node gives handlers
// as `event.transaction`, unless configured to hand over only the hash and index the log carries), the
// headers of the blocks where block handlers fire, which run even without logs (at most 500 blocks a
// range while a handler fires on every block), the receipts of the transactions whose logs
// `receipt: true` handlers get, and, where data sources handle calls, the calls to their addresses
// from trace_filter, with the receipts that say whether their transactions succeeded; and the answers
// to the eth calls the logs' handlers declare.
//
// Consistency of one range [from, to]: the header of `to` is read before eth_getLogs (with the
// previous range's headers, when that range foresaw this one's end: two round trips a range, not
// three) and again after it. The hash of `to` commits to every block below it, so when both reads
// agree the logs came from that chain; any disagreement (or a log or call whose blockHash differs
// from its header, whose transaction its block lacks, or a receipt from another block than its log)
// makes the range be fetched again. A block that creates data sources ends its range: the rest of
// it, and the ranges fetched ahead, lack the new data sources' logs, which are fetched and merged
// in before they run (widen; in the block itself, logsOfNewSources).
//
// Near the head (within the reorg threshold), a block the range's eth_getLogs answer holds no log of
// although its header's log bloom matches the filter has its logs asked for again by hash: a node
// behind the head answers a range with the logs up to its own head only (see logsMissedNearHead).
//
// The next range is fetched while one is processed; over sparse stretches (the span at its bound,
// ranges holding few logs) up to four are fetched at once, since a distant node's round trips, not
// the handlers, set the pace there. A range fetched ahead carries the hash it read for the block
// before it, and is used only if that is the checkpoint's hash.
import type { Hex, Log, TransactionReceipt } from 'viem';
import type { DataSourceLogFilter, DataSourceSet } from '../runtime/data-sources.ts';
import type { ContractCall } from '../runtime/ethereum-call.ts';
import { declaringTriggers } from '../runtime/declared-call-prefetch.ts';
import { callRequests } from '../runtime/declared-calls.ts';
import type { Subgraph } from '../runtime/manifest.ts';
import type { BlockHeader, Checkpoint } from '../store/meta-tables.ts';
import type { IndexerStore } from '../store/sqlite-store.ts';
import type { ChainSource } from './chain-source.ts';
import { bloomMayHold, inChainOrderOnce, logMatcher, topic0sOf, type LogFilter } from './log-filters.ts';
import type { ChainHeader, TracedCall } from './rpc-answers.ts';
import { describeRpcError } from './rpc-errors.ts';

export interface RangeFetcherOptions {
  store: IndexerStore;
  subgraph: Subgraph;
  chain: ChainSource;
  /**
   * most ranges fetched at once while ranges hold few logs (default MAX_RANGES_AHEAD); while they
   * hold many, only the next range is fetched during the current one
   */
  maxRangesAhead?: number;
  /**
   * what handlers get in `event.transaction` (default 'full'): every field, as graph-node gives
   * them; or 'hash-only', the hash and index the log carries with the other fields zero, which
   * spares reading transactions for subgraphs that read nothing else (ours)
   */
  transactions?: TransactionFetch;
  /**
   * blocks this close to the chain head (the indexer's reorg threshold) have their eth_getLogs
   * answers checked against their headers' log blooms (see logsMissedNearHead)
   */
  reorgThreshold: number;
  log?: (line: string) => void;
}

export type TransactionFetch = 'full' | 'hash-only';

/** Thrown inside a range when the chain changed under it; the range is fetched again. */
export class ChainMoved extends Error {}

/**
 * A range to fetch again: the node's answers disagreed (`reason`: a chain moving under the fetch, or
 * a node that keeps giving inconsistent answers), or, with a null reason, the node refused the span.
 */
interface Refetch {
  refetch: string | null;
}

export const isRefetch = <T extends object>(fetched: T | Refetch): fetched is Refetch => 'refetch' in fetched;

/** A range holds at most this many blocks while a data source has a handler for every block. */
const EVERY_BLOCK_SPAN = 500;

/** Ranges fetched at once while ranges hold few logs (see ChainSource.concurrentRanges). */
export const MAX_RANGES_AHEAD = 4;

/** What RangeFetcher.readRange read of a range, checked: what fetchRange goes on from. */
interface RangeRead {
  to: number;
  end: ChainHeader;
  logs: Log[];
  traced: TracedCall[];
  triggerBlocks: number[];
  nearHead: number[];
  /** by block number; null only for the end of the next range, read ahead, where the node lacked it */
  headers: Map<number, ChainHeader | null>;
  parentHash: string | null;
  callAddresses: readonly Hex[];
}

/**
 * `read` cut short to end at block `last`: what fetchRange keeps of a range when the node refuses
 * the block after `last` by hash (a node behind the head).
 */
function endAt(read: RangeRead, last: ChainHeader): RangeRead {
  const to = last.number;
  return {
    ...read,
    to,
    end: last,
    logs: read.logs.filter((l) => Number(l.blockNumber) <= to),
    traced: read.traced.filter((c) => c.blockNumber <= to),
    triggerBlocks: read.triggerBlocks.filter((n) => n <= to),
    nearHead: read.nearHead.filter((n) => n <= to),
  };
}

/** A call of a range, with its block, and whether its transaction succeeded. */
export type RangeCall = TracedCall & Pick<ContractCall, 'transactionSucceeded'>;

/** Where a log or a call says it comes from. */
interface Placed {
  blockNumber: bigint | number | null;
  blockHash: Hex | null;
  transactionHash: Hex | null;
}

/** How a message names a log or a call. */
const nameOf = (item: Placed) =>
  'logIndex' in item ? `log ${item.logIndex as number}` : `a call to ${(item as TracedCall).to}`;

/** A fetched, hash-checked range ready to process. */
export interface FetchedRange {
  from: number;
  to: number;
  /** header of `to`, the checkpoint once the range is committed */
  end: BlockHeader;
  logs: Log[];
  /** blocks where block handlers fire (they run even without logs) */
  triggerBlocks: number[];
  /**
   * headers of `to`, the parent and every block with logs or block triggers; those with logs carry
   * the logs' transactions unless RangeFetcherOptions.transactions is 'hash-only'
   */
  known: Map<number, ChainHeader>;
  /** the blocks of the range near the head, whose headers are in `known` (see logsMissedNearHead) */
  nearHead: number[];
  /** logs of near-head blocks read by block hash, by block hash (see logsMissedNearHead) */
  logsByHash: Map<string, LogsByHash>;
  /** hash of block `from - 1` as read with the range (null below the start block) */
  parentHash: string | null;
  /** receipts of the transactions whose logs `receipt: true` handlers get */
  receipts: Map<Hex, TransactionReceipt>;
  /** the filter the logs were fetched with */
  filter: DataSourceLogFilter;
  /** calls to the addresses in `callAddresses` (of the data sources that handle calls), in chain order */
  calls: RangeCall[];
  callAddresses: readonly Hex[];
  /** answers to the eth calls its logs' handlers declare, by block hash, then callKey */
  declaredCalls: DeclaredCallAnswers;
}

/**
 * The logs of a block read by its hash from any address: those whose topic0 is in `topic0s`, or all
 * of them when it is null (see ChainSource.blockLogs).
 */
interface LogsByHash {
  topic0s: ReadonlySet<Hex> | null;
  logs: readonly Log[];
}

type DeclaredCallAnswers = ReadonlyMap<Hex, ReadonlyMap<string, Hex | null>>;
const NO_DECLARED_CALLS: DeclaredCallAnswers = new Map();

/** Whether `range` was fetched on the chain of checkpoint `cp` (the block before it has its hash). */
export const continuesCheckpoint = (range: FetchedRange, cp: Checkpoint): boolean =>
  !cp.block || range.parentHash === cp.block.hash;

/** The (lowercase) hashes of the transactions of `items` (logs, calls), by block number. */
function transactionsByBlock(items: readonly Placed[]): Map<number, Set<Hex>> {
  const byBlock = new Map<number, Set<Hex>>();
  for (const item of items) {
    const n = Number(item.blockNumber);
    let hashes = byBlock.get(n);
    if (!hashes) byBlock.set(n, (hashes = new Set()));
    if (item.transactionHash) hashes.add(item.transactionHash.toLowerCase() as Hex);
  }
  return byBlock;
}

/** Whether the block's transactions were fetched and hold the transaction of `item` (log, call). */
function holdsTransactionOf(header: ChainHeader, item: Placed): boolean {
  return (
    item.transactionHash !== null &&
    header.transactions?.has(item.transactionHash.toLowerCase() as Hex) === true
  );
}

/**
 * What a range fetched with `old` lacks under `now` when `now` only adds to it (new data sources):
 * the new addresses' logs under every topic, the old addresses' logs under the new topics, and
 * what is newly asked for from any address (the templates' events once past the static filters
 * threshold). Null when `now` drops something: the range is then fetched again.
 */
export function missingFilters(old: DataSourceLogFilter, now: DataSourceLogFilter): LogFilter[] | null {
  if (!old.topics.every((t) => now.topics.includes(t))) return null;
  const newTopics = now.topics.filter((t) => !old.topics.includes(t));
  const had = new Set(old.addresses);
  const added = now.addresses.filter((a) => !had.has(a));
  if (now.addresses.length - added.length !== had.size) return null;
  const key = (topics: unknown) => JSON.stringify(topics);
  const hadAnywhere = new Set(old.anyAddressTopics.map(key));
  const anywhere = now.anyAddressTopics.filter((t) => !hadAnywhere.has(key(t)));
  if (now.anyAddressTopics.length - anywhere.length !== hadAnywhere.size) return null;
  const missing: LogFilter[] = [];
  if (added.length > 0) missing.push({ addresses: added, topics: now.topics });
  if (newTopics.length > 0 && old.addresses.length > 0)
    missing.push({ addresses: old.addresses, topics: newTopics });
  if (anywhere.length > 0) missing.push({ addresses: [], topics: [], anyAddressTopics: anywhere });
  return missing;
}

export class RangeFetcher {
  /** the header of the block the next range is expected to end at, read with the last range's headers */
  private nextEnd: ChainHeader | null = null;
  /** the topic0s of the events the subgraph's templates handle */
  private readonly templateTopic0s: readonly Hex[];
  /** ranges being fetched ahead of the one processed, consecutive, in block order */
  private ahead: { from: number; to: number; result: Promise<FetchedRange | Refetch> }[] = [];

  constructor(
    private readonly options: RangeFetcherOptions,
    /** the follower's data sources as they stand now (a reorg replaces them, blocks add to them) */
    private readonly sources: () => DataSourceSet,
    /** the chain head the follower saw last: a range fetched ahead may finish after it moved on */
    private readonly latestHead: () => number,
  ) {
    this.templateTopic0s = [...options.subgraph.templates.values()].flatMap((template) => [
      ...template.mapping.handlers.keys(),
    ]);
  }

  /**
   * The range after checkpoint `cp` under `filter`: the one fetched ahead, or else fetched now. A
   * range fetched ahead that does not continue the checkpoint saw the chain move since: it and those
   * after it are fetched again, and only a direct fetch decides whether the checkpoint is gone.
   */
  async rangeAfter(
    cp: Checkpoint,
    head: number,
    filter: DataSourceLogFilter,
  ): Promise<FetchedRange | Refetch> {
    const fetched = await this.takeAhead(cp.number, filter);
    if (fetched && !isRefetch(fetched) && continuesCheckpoint(fetched, cp)) return fetched;
    if (fetched) this.ahead = [];
    return this.fetchRange(cp.number + 1, this.rangeEnd(cp.number + 1, head), filter);
  }

  /**
   * Starts fetching the ranges after block `after` (up to the head) until as many are under way as
   * the chain source allows at once: the next one always, more over sparse stretches.
   */
  fetchAhead(after: number, head: number, filter: DataSourceLogFilter): void {
    const allowed = this.options.chain.concurrentRanges(this.options.maxRangesAhead ?? MAX_RANGES_AHEAD);
    let from = (this.ahead.at(-1)?.to ?? after) + 1;
    while (this.ahead.length < allowed && from <= head) {
      const to = this.rangeEnd(from, head);
      this.ahead.push({
        from,
        to,
        // a failure here is met again, and surfaced, when the range is fetched in its turn
        result: this.fetchRange(from, to, filter).catch(() => ({ refetch: null })),
      });
      from = to + 1;
    }
  }

  /** Puts `range`, fetched already (the rest of one whose processing ended early), first in the queue. */
  putBack(range: FetchedRange): void {
    this.ahead.unshift({ from: range.from, to: range.to, result: Promise.resolve(range) });
  }

  /** Drops the ranges fetched ahead: the chain moved, or the ranges since the last commit run again. */
  dropAhead(): void {
    this.ahead = [];
  }

  /**
   * The logs and calls of block `header` that data sources it created add (`missing`, the filters
   * its logs lack; `callAddresses`, the addresses its calls lack), with their receipts, and the
   * block's header again when it was read without their transactions. `logs` and `calls` are the
   * block's already: a log among them is not returned again. Throws ChainMoved when the node's
   * answers say the block changed.
   */
  async logsOfNewSources(
    header: ChainHeader,
    logs: readonly Log[],
    calls: readonly RangeCall[],
    missing: readonly LogFilter[],
    callAddresses: readonly Hex[],
  ): Promise<{
    header: ChainHeader;
    logs: Log[];
    calls: RangeCall[];
    receipts: Map<Hex, TransactionReceipt>;
  }> {
    const { chain } = this.options;
    const [here, tracedHere] = await Promise.all([
      // by the block's hash: a node behind the head refuses it rather than answering none
      // (one request for every filter, from any address, kept where one of them matches)
      chain.blockLogs(header.hash as Hex, topic0sOf(missing)).then(
        (found) => {
          const had = new Set(logs.map((log) => log.logIndex));
          const matchers = missing.map(logMatcher);
          return found.filter((log) => !had.has(log.logIndex) && matchers.some((m) => m(log)));
        },
        (error: unknown) => {
          throw new ChainMoved(
            `the node did not give the logs of block ${header.number} by its hash (${describeRpcError(error)})`,
          );
        },
      ),
      chain.callsInRange(callAddresses, header.number, header.number),
    ]);
    const added: Placed[] = [...here, ...tracedHere];
    if (added.some((i) => i.blockHash?.toLowerCase() !== header.hash))
      throw new ChainMoved(`block ${header.number} changed while the logs of its new data sources were read`);
    const [receipts, callsHere] = await Promise.all([this.receiptsFor(here), this.withSuccess(tracedHere)]);
    if (!receipts || !callsHere)
      throw new ChainMoved('a receipt is missing, or from another block than its log or call');
    if (this.fullTransactions && !added.every((i) => holdsTransactionOf(header, i))) {
      // a block fetched without them (a block handler's) gave the new data sources triggers
      const withTransactions = await chain.headers(
        [header.number],
        transactionsByBlock([...logs, ...calls, ...added]),
      );
      const again = withTransactions.get(header.number);
      if (again?.hash !== header.hash || !added.every((i) => holdsTransactionOf(again, i)))
        throw new ChainMoved(
          `block ${header.number} changed, or came without the transactions of its new data sources' logs or calls`,
        );
      return { header: again, logs: here, calls: callsHere, receipts };
    }
    return { header, logs: here, calls: callsHere, receipts };
  }

  /** The last block of the range starting at `from`: the chain source's span, bounded by the head. */
  private rangeEnd(from: number, head: number): number {
    const { chain } = this.options;
    const span = this.sources().hasEveryBlockHandler()
      ? Math.min(chain.range, EVERY_BLOCK_SPAN)
      : chain.range;
    return Math.min(head, from + span - 1);
  }

  /**
   * The range fetched ahead that starts after block `cpNumber` under the current filter, taken off
   * the queue; null (and the queue dropped) when there is none.
   */
  private takeAhead(cpNumber: number, filter: DataSourceLogFilter): Promise<FetchedRange | Refetch> | null {
    const first = this.ahead.shift();
    if (first && first.from === cpNumber + 1)
      return first.result.then((fetched) => (isRefetch(fetched) ? fetched : this.widen(fetched, filter)));
    this.ahead = [];
    return null;
  }

  /**
   * Fetches [from, to] (readRange), with the logs an eth_getLogs answer missed near the head read by
   * block hash (logsMissedNearHead), the receipts and calls' successes its handlers get, and the
   * answers to the eth calls they declare. A node that refuses a near-head block by hash (it does
   * not have it yet) cuts the range short: the range returned then ends at the block before that
   * one (its `to` and `end` say so), so that a node that stays behind does not hold back the blocks
   * it has. A Refetch when the node's answers disagree (the chain moved during the fetch), it
   * refused the span, or it refused the range's first block by hash.
   */
  private async fetchRange(
    from: number,
    to: number,
    filter: DataSourceLogFilter,
  ): Promise<FetchedRange | Refetch> {
    const { chain } = this.options;
    const read = await this.readRange(from, to, filter);
    if (isRefetch(read)) return read;
    const logsByHash = new Map<string, LogsByHash>();
    const { missed, refusedAt, reason } = await this.logsMissedNearHead(
      filter,
      read.logs,
      read.headers,
      read.nearHead,
      logsByHash,
    );
    let kept = read;
    if (refusedAt !== null) {
      const last = read.headers.get(refusedAt - 1);
      if (refusedAt === from || !last) return { refetch: reason };
      kept = endAt(read, last);
    }
    const { end, traced, triggerBlocks, nearHead, headers, parentHash, callAddresses } = kept;
    let { logs } = kept;
    if (missed.length > 0) {
      // their blocks were read without the transactions of logs not known then
      const blocks = [...new Set(missed.map((l) => Number(l.blockNumber)))];
      const again = this.fullTransactions
        ? await chain.headers(blocks, transactionsByBlock(missed))
        : headers;
      for (const n of blocks) {
        if (again.get(n)?.hash !== headers.get(n)?.hash)
          return { refetch: `block ${n} changed while its range was read` };
        headers.set(n, again.get(n)!);
      }
      const missedDisagree = this.disagreement(missed, headers);
      if (missedDisagree) return missedDisagree;
      logs = inChainOrderOnce([...logs, ...missed]);
    }
    const [receipts, calls, declaredCalls] = await Promise.all([
      this.receiptsFor(logs),
      this.withSuccess(traced),
      this.declaredCallsOf(logs),
    ]);
    if (!receipts) return { refetch: 'a receipt is missing, or from another block than its log' };
    if (!calls) return { refetch: 'a receipt is missing, or from another block than its call' };
    const known = new Map<number, ChainHeader>();
    for (const [n, h] of headers) if (h) known.set(n, h);
    return {
      from,
      to: kept.to,
      end,
      logs,
      triggerBlocks,
      nearHead,
      logsByHash,
      known,
      receipts,
      parentHash,
      filter,
      calls,
      callAddresses,
      declaredCalls,
    };
  }

  /**
   * Reads [from, to]: the header of the end, the logs and calls, and the headers of the blocks
   * with logs, calls or block triggers, of the blocks near the head, and of the block the range
   * continues (its hash is returned for the caller to check against its checkpoint), checked
   * against each other. A Refetch when the node's answers disagree (the chain moved during the
   * fetch) or it refused the span.
   */
  private async readRange(
    from: number,
    to: number,
    filter: DataSourceLogFilter,
  ): Promise<RangeRead | Refetch> {
    const { chain, store } = this.options;
    // used once: if the range runs again, its end is read again (the chain may have moved since)
    const readAhead = this.nextEnd?.number === to ? this.nextEnd : null;
    if (readAhead) this.nextEnd = null;
    const end = readAhead ?? (await chain.header(to));
    if (!end) return { refetch: `the node has no block ${to}, below the head it reported` };
    const callAddresses = this.sources().callAddresses();
    const [answer, tracedInRange] = await Promise.all([
      chain.logsInRange(filter, from, to),
      chain.callsInRange(callAddresses, from, to),
    ]);
    if (answer === 'too-large') return { refetch: null };
    const logs = answer;
    const traced = tracedInRange;
    const triggerBlocks = this.blockTriggersIn(from, to);
    const nearHead: number[] = [];
    const head = this.latestHead();
    for (let n = Math.max(from, head - this.options.reorgThreshold + 1); n <= to; n++) nearHead.push(n);
    const numbers = [
      ...new Set([
        ...logs.map((l) => Number(l.blockNumber)),
        ...traced.map((c) => c.blockNumber),
        ...triggerBlocks,
        ...nearHead,
      ]),
    ];
    const parent = from - 1 >= store.startBlock ? from - 1 : null;
    // The end of the range after this one as the span now stands, read with this range's headers:
    // that range's read of its end before its eth_getLogs then costs no round trip of its own. Not
    // where several ranges are fetched at once: they read their ends together anyway.
    const oneAtATime = chain.concurrentRanges(this.options.maxRangesAhead ?? MAX_RANGES_AHEAD) === 1;
    const nextEnd = oneAtATime && to < head ? this.rangeEnd(to + 1, head) : null;
    const placed: readonly Placed[] = traced.length > 0 ? [...logs, ...traced] : logs;
    const headers = await chain.headers(
      [...(parent === null ? [] : [parent]), to, ...numbers, ...(nextEnd === null ? [] : [nextEnd])],
      this.fullTransactions ? transactionsByBlock(placed) : undefined,
    );
    // a null header (a block a load-balanced node behind the head lacks) is asked for once more alone
    const unanswered = [...headers.keys()].filter((n) => n !== nextEnd && !headers.get(n));
    if (unanswered.length > 0) {
      const again = await chain.headers(
        unanswered,
        this.fullTransactions ? transactionsByBlock(placed) : undefined,
      );
      for (const n of unanswered) headers.set(n, again.get(n) ?? null);
      const missing = unanswered.find((n) => !headers.get(n));
      if (missing !== undefined) return { refetch: `the node did not return block ${missing}` };
    }
    if (nextEnd !== null) this.nextEnd = headers.get(nextEnd) ?? null;
    if (headers.get(to)?.hash !== end.hash)
      return { refetch: `block ${to} changed while its range was read` };
    const parentHash = parent === null ? null : (headers.get(parent)?.hash ?? null);
    if (parent !== null && parentHash === null) return { refetch: `the node has no block ${parent}` };
    const disagreement = this.disagreement(placed, headers);
    if (disagreement) return disagreement;
    const headless = triggerBlocks.find((n) => !headers.get(n));
    if (headless !== undefined) return { refetch: `the node has no block ${headless}` };
    return { to, end, logs, traced, triggerBlocks, nearHead, headers, parentHash, callAddresses };
  }

  /**
   * The answers to the eth calls that `logs` (a range's) declare, made with the range, so that its
   * blocks find them at hand instead of waiting for a batch each (ranges are fetched while the one
   * before runs; a range widened for new data sources makes those of the logs it adds). Calls the
   * node failed are left out, and so are those of data sources created in a block for that block's
   * own logs: the block processor makes them when the block runs.
   */
  private async declaredCallsOf(logs: readonly Log[]): Promise<DeclaredCallAnswers> {
    if (!this.options.subgraph.declaresCalls) return NO_DECLARED_CALLS;
    const calls: { to: Hex; data: Hex; blockHash: Hex }[] = [];
    for (const { spec, log, params } of declaringTriggers(logs, this.sources())) {
      try {
        for (const { to, data } of callRequests(spec.calls, log, params))
          calls.push({ to, data, blockHash: log.blockHash! });
      } catch {
        // the block processor fails the handler with this error when the block runs
      }
    }
    return calls.length === 0 ? NO_DECLARED_CALLS : this.options.chain.ethCalls(calls);
  }

  /**
   * `calls` with whether their transactions succeeded, from the transactions' receipts (graph-node
   * runs call handlers for successful transactions only: a reverted transaction's inner calls can
   * succeed, and their traces then carry no error); null when a receipt is missing or from another
   * block than its call, i.e. the chain moved.
   */
  private async withSuccess(calls: readonly TracedCall[]): Promise<RangeCall[] | null> {
    if (calls.length === 0) return [];
    const receipts = await this.options.chain.receipts(calls.map((c) => c.transactionHash));
    const withSuccess: RangeCall[] = [];
    for (const call of calls) {
      const receipt = receipts.get(call.transactionHash);
      if (!receipt || receipt.blockHash.toLowerCase() !== call.blockHash) return null;
      withSuccess.push({ ...call, transactionSucceeded: receipt.status === 'success' });
    }
    return withSuccess;
  }

  /**
   * `range` as `filter` would have fetched it. When the filter only adds to the one the range was
   * fetched with (new data sources), the logs it lacks (see missingFilters) are fetched and merged
   * in, with the headers (and transactions) of their blocks; the range's end must keep its hash
   * meanwhile, as in fetchRange. A factory's registry creating instances in most ranges so costs an
   * eth_getLogs more per range, not the range again. A filter that drops something, or data sources
   * with block handlers or that handle calls, fetch the range again.
   */
  private async widen(range: FetchedRange, filter: DataSourceLogFilter): Promise<FetchedRange | Refetch> {
    if (range.filter === filter && range.callAddresses === this.sources().callAddresses()) return range;
    const missing = missingFilters(range.filter, filter);
    const triggerBlocks = this.blockTriggersIn(range.from, range.to);
    if (
      !missing ||
      triggerBlocks.join() !== range.triggerBlocks.join() ||
      range.callAddresses !== this.sources().callAddresses()
    )
      return this.fetchRange(range.from, range.to, filter);
    const { chain } = this.options;
    const extra: Log[] = [];
    for (const f of missing) {
      const found = await chain.narrowerLogs(f, range.from, range.to);
      const { missed, refusedAt, reason } = await this.logsMissedNearHead(
        f,
        found,
        range.known,
        range.nearHead,
        range.logsByHash,
      );
      if (refusedAt !== null) return { refetch: reason };
      extra.push(...found, ...missed);
    }
    if (extra.length === 0) return { ...range, filter };
    const blocks = new Set(extra.map((l) => Number(l.blockNumber)));
    // an any-address request may match logs the range holds already: each is kept once
    const logs = inChainOrderOnce([...range.logs, ...extra]);
    // the blocks holding new logs are read again, with the transactions of all their logs
    const touched = logs.filter((l) => blocks.has(Number(l.blockNumber)));
    const headers = await chain.headers(
      [...new Set([range.to, ...blocks])],
      this.fullTransactions ? transactionsByBlock(touched) : undefined,
    );
    if (headers.get(range.to)?.hash !== range.end.hash)
      return { refetch: `block ${range.to} changed while the logs of new data sources were read` };
    const known = new Map(range.known);
    for (const n of blocks) {
      const header = headers.get(n);
      if (!header || (known.has(n) && known.get(n)!.hash !== header.hash))
        return { refetch: `block ${n} changed while the logs of new data sources were read` };
      known.set(n, header);
    }
    const disagreement = this.disagreement(touched, known);
    if (disagreement) return disagreement;
    const [receipts, extraCalls] = await Promise.all([this.receiptsFor(extra), this.declaredCallsOf(extra)]);
    if (!receipts) return { refetch: 'a receipt is missing, or from another block than its log' };
    // the next ranges are sized by this one's logs under the filter now in use
    chain.fitSpan(range.to - range.from + 1, logs.length);
    const declaredCalls = new Map(range.declaredCalls);
    for (const [hash, answers] of extraCalls)
      declaredCalls.set(hash, new Map([...(range.declaredCalls.get(hash) ?? []), ...answers]));
    return {
      ...range,
      logs,
      known,
      receipts: new Map([...range.receipts, ...receipts]),
      filter,
      declaredCalls,
    };
  }

  /**
   * Why `items` (logs, calls) disagree with the headers read for their blocks after them (one naming
   * another block hash, or, with whole transactions, one whose transaction the node did not give);
   * null when they agree.
   */
  private disagreement(
    items: readonly Placed[],
    headers: ReadonlyMap<number, ChainHeader | null>,
  ): Refetch | null {
    const stray = items.find((i) => headers.get(Number(i.blockNumber))?.hash !== i.blockHash?.toLowerCase());
    if (stray)
      return {
        refetch: `${nameOf(stray)} of block ${stray.blockNumber} names block hash ${stray.blockHash}, not the block's`,
      };
    const orphan = this.fullTransactions
      ? items.find((i) => !holdsTransactionOf(headers.get(Number(i.blockNumber))!, i))
      : undefined;
    if (orphan)
      return {
        refetch: `the node did not give transaction ${orphan.transactionHash} of ${nameOf(orphan)} in block ${orphan.blockNumber} (handlers get whole transactions unless INDEXER_TRANSACTIONS=hash-only)`,
      };
    return null;
  }

  /**
   * The logs of `filter` an eth_getLogs answer (`logs`) lacks in those of `blocks` (near the head,
   * with their headers in `headers`) it has none of although their headers' blooms say they may
   * hold some, asked for again by block hash. A node behind the head, as a load-balanced provider or
   * an older geth or erigon may put behind eth_getLogs while another answers for the head and the
   * headers, answers a range with the logs up to its own head only: those of the blocks past it
   * would be lost for good. graph-node never scans ranges within the reorg threshold of the head
   * and moves there one block at a time by hash (polling_block_stream.rs); a bloom is checked here
   * instead, with the headers the range reads anyway, so that ranges stay as wide, and a block's
   * logs are asked for again only where its bloom matches the filter (EIP-234: a node without the
   * block refuses it rather than answering none). `refusedAt` is the first block the node refused
   * so (null when none): the range must end before it, the logs returned are of the blocks before it.
   *
   * A block is asked for once per range whatever the filter: from any address, for the filter's
   * topic0s together with those asked for it before, its answer kept in `logsByHash`. A range that
   * new data sources widen block after block (a factory registering instances in every block)
   * would otherwise ask each later block again, and a saturated bloom matches every new filter,
   * with one request per part of a long address list each time.
   */
  private async logsMissedNearHead(
    filter: LogFilter,
    logs: readonly Log[],
    headers: ReadonlyMap<number, ChainHeader | null>,
    blocks: readonly number[],
    logsByHash: Map<string, LogsByHash>,
  ): Promise<{ missed: Log[]; refusedAt: number | null; reason: string }> {
    const none = { missed: [], refusedAt: null, reason: '' };
    if (blocks.length === 0) return none;
    // a node that answered with a log of block M had every block up to M (the log's block hash is
    // checked against the header): only the blocks after the last one with a log can lack theirs,
    // which spares a request where a dense block's bloom matches nearly any filter
    let reached = -1;
    for (const log of logs) reached = Math.max(reached, Number(log.blockNumber));
    const suspect = blocks
      .filter((n) => n > reached)
      .map((n) => headers.get(n))
      .filter((h): h is ChainHeader => !!h && bloomMayHold(h.logsBloom, filter));
    if (suspect.length === 0) return none;
    const wanted = topic0sOf([filter]);
    const answers = await Promise.allSettled(
      suspect.map((header) => this.logsOfBlock(header.hash, wanted, logsByHash)),
    );
    const refused = answers.findIndex((a) => a.status === 'rejected');
    const matches = logMatcher(filter);
    const missed = answers
      .slice(0, refused === -1 ? undefined : refused)
      .flatMap((a) => (a.status === 'fulfilled' ? a.value.filter(matches) : []));
    if (missed.length > 0)
      this.options.log?.(
        `rpc eth_getLogs: the node's answer lacked ${missed.length} logs of blocks ${[...new Set(missed.map((l) => l.blockNumber))].join(', ')} (is its eth_getLogs node behind the head?); they were read by block hash`,
      );
    if (refused === -1) return { missed, refusedAt: null, reason: '' };
    const refusedAt = suspect[refused]!.number;
    const error = (answers[refused] as PromiseRejectedResult).reason;
    return {
      missed,
      refusedAt,
      reason: `the node did not give the logs of block ${refusedAt} by its hash, which its header's log bloom says it may hold (${describeRpcError(error)}); its eth_getLogs node may be behind the head`,
    };
  }

  /**
   * The logs of block `hash` with a topic0 in `topic0s` (null: all) and maybe more, from
   * `logsByHash` when it holds them, else read by hash for those together with the topic0s read
   * before (so that one answer serves every filter asked for so far) and kept there.
   */
  private async logsOfBlock(
    hash: string,
    topic0s: readonly Hex[] | null,
    logsByHash: Map<string, LogsByHash>,
  ): Promise<readonly Log[]> {
    const read = logsByHash.get(hash);
    if (read && (read.topic0s === null || (topic0s?.every((t) => read.topic0s!.has(t)) ?? false)))
      return read.logs;
    // every event of the subgraph's data sources and templates: a filter widened for the data
    // sources the range's blocks create (their addresses under every topic) then finds its logs here
    const subgraphTopic0s = topic0sOf([this.sources().logFilter()]);
    const asked =
      topic0s === null || read?.topic0s === null || subgraphTopic0s === null
        ? null
        : new Set([...(read?.topic0s ?? []), ...topic0s, ...subgraphTopic0s, ...this.templateTopic0s]);
    const logs = await this.options.chain.blockLogs(hash as Hex, asked && [...asked]);
    logsByHash.set(hash, { topic0s: asked, logs });
    return logs;
  }

  private get fullTransactions(): boolean {
    return (this.options.transactions ?? 'full') === 'full';
  }

  /**
   * The receipts `receipt: true` handlers need for `logs` (none fetched when no handler declares
   * it); null when one is missing or from another block than its log, i.e. the chain moved.
   */
  private async receiptsFor(logs: readonly Log[]): Promise<Map<Hex, TransactionReceipt> | null> {
    const receipts = new Map<Hex, TransactionReceipt>();
    // asked once per range, not once per log: most subgraphs (ours) declare no receipts
    const sources = this.sources();
    if (!sources.declaresReceipts()) return receipts;
    const wanted = logs.filter((l) => sources.needsReceipt(l));
    if (wanted.length === 0) return receipts;
    const fetched = await this.options.chain.receipts(wanted.map((l) => l.transactionHash!));
    for (const log of wanted) {
      const receipt = fetched.get(log.transactionHash!);
      if (!receipt || receipt.blockHash.toLowerCase() !== log.blockHash?.toLowerCase()) return null;
      receipts.set(log.transactionHash!, receipt);
    }
    return receipts;
  }

  /** The blocks of [from, to] where a data source's block handler fires. */
  private blockTriggersIn(from: number, to: number): number[] {
    const sources = this.sources();
    if (sources.withBlockHandlers.length === 0) return [];
    const blocks: number[] = [];
    for (let n = from; n <= to; n++) if (sources.hasBlockTriggers(BigInt(n))) blocks.push(n);
    return blocks;
  }
}
