// Follows the chain and feeds the subgraph runtime: fetches logs of the tracked addresses and
// topics over adaptive ranges (with the headers of the blocks that hold them, and the logs'
// transactions, which graph-node gives handlers as `event.transaction`, unless configured to hand
// over only the hash and index the log carries; the headers of the blocks where block handlers
// fire, which run even without logs, at most 500 blocks a range while a handler fires on every
// block; the receipts of the transactions whose logs `receipt: true` handlers get; and, where data
// sources handle calls, the calls to their addresses from trace_filter, with the blocks and
// transactions that hold them and the receipts that say whether those transactions succeeded; and
// the answers to the eth calls the logs' handlers declare),
// runs each block's handlers through the block processor into a per-block write buffer, and writes
// each range's checkpoint in the same store transaction as its entities (during catch-up several
// ranges share a transaction, committed about once a second; at the head each range commits at
// once), so a crash loses whole ranges only. Reorgs are found by hash: the checkpoint block must still be on
// the canonical chain; if not, the store reverts to the newest stored block that is, and indexing
// resumes from there. A node whose head is below the checkpoint is on a shorter chain if its block
// differs from the newest stored one at or below that head (a reorg, reverted alike), else behind
// (waited for). A handler's chain read the node failed (ChainAccessError) rolls back to the
// last commit like a moved chain, and the ranges run again after a backoff. One the node has not
// answered yet (ChainReadPending, after a second) is waited for with the event loop turning, and the
// block runs again from its start once it has; a stop meanwhile ends the run, and, as one between
// handlers does, leaves the store at its last commit.
//
// Consistency of one range [from, to]: the header of `to` is read before eth_getLogs (with the
// previous range's headers, when that range foresaw this one's end: two round trips a range, not
// three) and again after it. The hash of `to` commits to every block below it, so when both reads
// agree the logs came from that chain; any disagreement (or a log or call whose blockHash differs
// from its header, whose transaction its block lacks, or a receipt from another block than its log)
// makes the range be fetched again. A block that creates data sources ends its range: the rest of
// it, and the ranges fetched ahead, lack the new data sources' logs, which are fetched and merged
// in before they run.
//
// Near the head (within the reorg threshold), a block the range's eth_getLogs answer holds no log of
// although its header's log bloom matches the filter has its logs asked for again by hash: a node
// behind the head answers a range with the logs up to its own head only (see logsMissedNearHead).
//
// The next range is fetched while one is processed; over sparse stretches (the span at its bound,
// ranges holding few logs) up to four are fetched at once, since a distant node's round trips, not
// the handlers, set the pace there. A range fetched ahead carries the hash it read for the block
// before it, and is used only if that is the checkpoint's hash. A block's handlers run in steps
// with the event loop turning between them, so that the fetches move on.
//
// Blocks run without looking new immutable entities up in the store (graph-node's assumption too);
// if the store refuses one as inserted by an earlier block, the block runs again with the lookups,
// which fail it with graph-node's error.
//
// File data sources (file-data-sources.ts) run at the end of each range written, in its last block:
// a file that arrives while the follower waits at the head runs with the next block, as in graph-node.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Hex, Log, TransactionReceipt } from 'viem';
import { backoffMs, type Backoff } from '../../common/backoff.ts';
import { DataSourceSet, type DataSourceLogFilter, type DynamicDataSource } from '../runtime/data-sources.ts';
import { traceOrder, type ContractCall } from '../runtime/ethereum-call.ts';
import type { BlockProcessor, BlockResult } from '../runtime/block-processor.ts';
import { declaringTriggers } from '../runtime/declared-call-prefetch.ts';
import { callRequests } from '../runtime/declared-calls.ts';
import { HandlerError } from '../runtime/handler-error.ts';
import { ChainAccessError } from '../runtime/host-context.ts';
import type { Subgraph } from '../runtime/manifest.ts';
import { entityFromJson, entityToJson } from '../store/entity-json.ts';
import {
  ImmutableEntityConflict,
  type BlockHeader,
  type Checkpoint,
  type IndexerStore,
} from '../store/sqlite-store.ts';
import { ChainReadPending } from './chain-reader.ts';
import type { FileFetcher } from './file-fetcher.ts';
import { FileDataSources } from './file-data-sources.ts';
import {
  StoppedError,
  bloomMayHold,
  logMatcher,
  topic0sOf,
  describeRpcError,
  inChainOrderOnce,
  type ChainHeader,
  type ChainSource,
  type LogFilter,
  type TracedCall,
} from './chain-source.ts';

interface FollowerOptions {
  store: IndexerStore;
  subgraph: Subgraph;
  processor: BlockProcessor;
  chain: ChainSource;
  /** wait between head polls once caught up */
  pollIntervalMs: number;
  /**
   * during catch-up, ranges are committed together once the oldest uncommitted one is this old
   * (default 1000 ms; 0 commits every range); at the head every range is committed at once
   */
  commitIntervalMs?: number;
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
  /** by file template, what fetches its data sources' files; those of a template without one wait */
  fileFetchers?: ReadonlyMap<string, FileFetcher>;
  /** past this many data sources, eth_getLogs asks for the templates' events from any address (see DataSourceSet) */
  staticFiltersAbove?: number;
  /**
   * under nonFatalErrors, go on past handler errors also before the subgraph first reaches the chain
   * head (graph-node's GRAPH_DISABLE_FAIL_FAST); by default indexing pauses at such an error
   */
  disableFailFast?: boolean;
  /**
   * blocks this close to the chain head (default 250, graph-node's ETHEREUM_REORG_THRESHOLD) have
   * their eth_getLogs answers checked against their headers' log blooms (see logsMissedNearHead)
   */
  reorgThreshold?: number;
  signal: AbortSignal;
  log?: (line: string) => void;
  /** called after every range and every head poll */
  onProgress?: (progress: FollowerProgress) => void;
}

export interface FollowerProgress {
  startBlock: number;
  checkpoint: number;
  head: number;
  /** logs handed to handlers (in committed ranges) since this process started */
  events: number;
  caughtUp: boolean;
  /** file data sources waiting for their file */
  filesAwaited: number;
}

type StepResult = 'advanced' | 'idle' | 'retry';

export type TransactionFetch = 'full' | 'hash-only';

/** Waits before running a range again (see waitBeforeRetry): the first, and the most (doubling in between). */
const RANGE_RETRY: Backoff = { minMs: 250, maxMs: 15_000 };

/** How often the head is asked for while the checkpoint is behind it. */
const HEAD_REFRESH_MS = 1000;

/**
 * A block at most this far behind the chain head is caught up (graph-node's CAUGHT_UP_DISTANCE): the
 * subgraph counts as synced from the first such block on.
 */
export const CAUGHT_UP_DISTANCE = 10;

/** Uncommitted ranges are committed once they hold this many events. */
export const COMMIT_EVENTS = 20_000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Thrown inside a range when the chain changed under it; the range is fetched again. */
class ChainMoved extends Error {}

/**
 * Indexing paused at a block where handlers failed under nonFatalErrors before the subgraph first
 * caught up with the chain head (see ChainFollower.pausesOnErrors). The block is committed; indexing goes
 * on from it once fail-fast is off.
 */
class IndexingPaused extends Error {
  constructor(readonly block: number) {
    super(
      `indexing paused at block ${block}: a handler failed before the subgraph was first synced, within ${CAUGHT_UP_DISTANCE} blocks of the chain head (graph-node pauses such a subgraph); restart with INDEXER_DISABLE_FAIL_FAST=true to index on past handler errors`,
    );
  }
}

/**
 * A range to fetch again: the node's answers disagreed (`reason`: a chain moving under the fetch, or
 * a node that keeps giving inconsistent answers), or, with a null reason, the node refused the span.
 */
interface Refetch {
  refetch: string | null;
}

const isRefetch = <T extends object>(fetched: T | Refetch): fetched is Refetch => 'refetch' in fetched;

/** A range holds at most this many blocks while a data source has a handler for every block. */
const EVERY_BLOCK_SPAN = 500;

/** Ranges fetched at once while ranges hold few logs (see ChainSource.concurrentRanges). */
export const MAX_RANGES_AHEAD = 4;

/** A call of a range, with its block, and whether its transaction succeeded. */
type RangeCall = TracedCall & Pick<ContractCall, 'transactionSucceeded'>;

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
interface FetchedRange {
  from: number;
  to: number;
  /** header of `to`, the checkpoint once the range is committed */
  end: BlockHeader;
  logs: Log[];
  /** blocks where block handlers fire (they run even without logs) */
  triggerBlocks: number[];
  /**
   * headers of `to`, the parent and every block with logs or block triggers; those with logs carry
   * the logs' transactions unless FollowerOptions.transactions is 'hash-only'
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
function missingFilters(old: DataSourceLogFilter, now: DataSourceLogFilter): LogFilter[] | null {
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

/** The part of `range` after block `header`, which ended the range's processing early. */
function restOf(range: FetchedRange, header: ChainHeader): FetchedRange {
  return {
    ...range,
    from: header.number + 1,
    logs: range.logs.filter((l) => Number(l.blockNumber) > header.number),
    calls: range.calls.filter((c) => c.blockNumber > header.number),
    triggerBlocks: range.triggerBlocks.filter((n) => n > header.number),
    nearHead: range.nearHead.filter((n) => n > header.number),
    parentHash: header.hash,
  };
}

export class ChainFollower {
  private sources: DataSourceSet;
  private head = -1;
  /** when the head was last asked for */
  private headAt = 0;
  private events = 0;
  private caughtUp = false;
  /** events written but not yet committed, and when the last commit was */
  private pendingEvents = 0;
  private lastCommitAt = 0;
  /** the header of the block the next range is expected to end at, read with the last range's headers */
  private nextEnd: ChainHeader | null = null;
  /** the topic0s of the events the subgraph's templates handle */
  private readonly templateTopic0s: readonly Hex[];
  /** ranges being fetched ahead of the one processed, consecutive, in block order */
  private ahead: { from: number; to: number; result: Promise<FetchedRange | Refetch> }[] = [];
  /**
   * Why the last step runs its range again: the node failed a handler's chain read (`failed`), or
   * its answers disagreed; null when it refused the span, which the next, smaller span answers. And
   * how many steps in a row ran their range again.
   */
  private retryCause: { reason: string; failed: boolean } | null = null;
  private retriesInARow = 0;
  /** how many data sources the set held at the last commit, to return to on a rollback */
  private sourcesAtCommit = 0;
  /** what stopped indexing, if a handler failure did: the failure, or the pause it caused */
  failure: HandlerError | IndexingPaused | null = null;

  private readonly files: FileDataSources;
  /** whether the subgraph has caught up with the chain head once (see IndexerStore.synced) */
  private synced: boolean;

  constructor(private readonly options: FollowerOptions) {
    this.templateTopic0s = [...options.subgraph.templates.values()].flatMap((template) => [
      ...template.mapping.handlers.keys(),
    ]);
    this.sources = this.loadSources();
    this.synced = options.store.synced;
    this.files = new FileDataSources(
      options.store,
      options.processor,
      options.fileFetchers ?? new Map(),
      options.log ?? (() => undefined),
    );
  }

  private loadSources(): DataSourceSet {
    const dynamic: DynamicDataSource[] = this.options.store.dataSources().map((r) => ({
      template: r.template,
      address: r.address as Hex,
      context: r.context === null ? null : entityFromJson(r.context),
      createdAtBlock: BigInt(r.createdAtBlock),
    }));
    return new DataSourceSet(this.options.subgraph, dynamic, {
      staticFiltersAbove: this.options.staticFiltersAbove,
    });
  }

  progress(): FollowerProgress {
    return {
      startBlock: this.options.store.startBlock,
      checkpoint: this.options.store.committed().number,
      head: this.head,
      events: this.events,
      caughtUp: this.caughtUp,
      filesAwaited: this.files.pending,
    };
  }

  /** Indexes until stopped, or until a handler fails or pauses indexing (recorded in the store). */
  async run(): Promise<void> {
    const { signal } = this.options;
    try {
      this.resumeAfterHandlerErrors();
      while (!signal.aborted) {
        const result = await this.step();
        if (result === 'retry') {
          await this.waitBeforeRetry();
          continue;
        }
        this.retriesInARow = 0;
        this.options.onProgress?.(this.progress());
        // a stop ends the wait, and then the loop
        if (result === 'idle')
          await sleep(this.options.pollIntervalMs, undefined, { signal }).catch(() => undefined);
      }
    } catch (error) {
      if (error instanceof StoppedError) return;
      if (error instanceof HandlerError || error instanceof IndexingPaused) {
        this.failure = error;
        this.options.log?.(
          error instanceof HandlerError ? `indexing stopped: ${error.message}` : error.message,
        );
        return;
      }
      throw error;
    }
  }

  /**
   * Where indexing starts in a store that a handler error stopped. A paused one stays paused
   * (throws IndexingPaused) unless fail-fast is off. A failed one goes back before its failed block
   * and runs it again, as graph-node reverts the errored block when a failed subgraph starts: a
   * deterministic failure fails again the same way, and one that came from a node's bad answers does not.
   */
  private resumeAfterHandlerErrors(): void {
    const { store } = this.options;
    const pausedAt = store.pausedAt;
    if (pausedAt !== null) {
      if (!this.options.disableFailFast) throw new IndexingPaused(pausedAt);
      store.setPausedAt(null);
      this.options.log?.(`indexing paused at block ${pausedAt} goes on (fail-fast is off)`);
    }
    const failed = store.fatalErrorBlock;
    if (failed === null) return;
    // the newest stored block before it: its state is what the blocks after it are indexed from (in a
    // store written before failed blocks were committed, the checkpoint: only the failure is cleared)
    const before = store.storedBlocksDescending(failed - 1, 1)[0] ?? null;
    this.revertTo(before);
    this.options.log?.(
      `indexing stopped at block ${failed} when a handler failed; it runs again from block ${before ? before.number : store.startBlock - 1}`,
    );
  }

  /**
   * After a step that runs its range again, a doubling wait with a log line naming the cause, so
   * that a node that keeps failing or answering inconsistently is neither hammered nor silent. Answers
   * that disagreed are fetched again at once the first time: a chain moving under the fetch, as at a
   * reorg, explains them.
   */
  private async waitBeforeRetry(): Promise<void> {
    const cause = this.retryCause;
    this.retryCause = null;
    if (!cause) return;
    const inARow = ++this.retriesInARow;
    const waits = cause.failed ? inARow : inARow - 1;
    if (waits === 0) return;
    // what was run before is kept meanwhile: a node behind the head may hold the next range back long
    this.commitPending();
    this.options.onProgress?.(this.progress());
    const wait = backoffMs(waits - 1, RANGE_RETRY);
    this.options.log?.(
      `${cause.reason}; the range after block ${this.options.store.checkpoint().number} runs again in ${wait} ms (${inARow} times in a row)`,
    );
    await sleep(wait, undefined, { signal: this.options.signal }).catch(() => undefined);
  }

  /** Records why the range runs again (see waitBeforeRetry). */
  private retry(reason: string | null, failed = false): 'retry' {
    this.retryCause = reason === null ? null : { reason, failed };
    return 'retry';
  }

  /** The last block of the range starting at `from`: the chain source's span, bounded by the head. */
  private rangeEnd(from: number, head: number): number {
    const { chain } = this.options;
    const span = this.sources.hasEveryBlockHandler() ? Math.min(chain.range, EVERY_BLOCK_SPAN) : chain.range;
    return Math.min(head, from + span - 1);
  }

  /**
   * Fetches [from, to]: header of the end, logs, headers of the log blocks and of the block the range
   * continues (its hash is returned for the caller to check against its checkpoint). A Refetch when
   * the node's answers disagree (the chain moved during the fetch) or it refused the span.
   */
  private async fetchRange(
    from: number,
    to: number,
    filter: DataSourceLogFilter,
  ): Promise<FetchedRange | Refetch> {
    const { chain, store } = this.options;
    // used once: if the range runs again, its end is read again (the chain may have moved since)
    const readAhead = this.nextEnd?.number === to ? this.nextEnd : null;
    if (readAhead) this.nextEnd = null;
    let end = readAhead ?? (await chain.header(to));
    if (!end) return { refetch: `the node has no block ${to}, below the head it reported` };
    const callAddresses = this.sources.callAddresses();
    const [answer, tracedInRange] = await Promise.all([
      chain.logsInRange(filter, from, to),
      chain.callsInRange(callAddresses, from, to),
    ]);
    if (answer === 'too-large') return { refetch: null };
    let logs = answer;
    let traced = tracedInRange;
    let triggerBlocks = this.blockTriggersIn(from, to);
    let nearHead: number[] = [];
    for (let n = Math.max(from, this.head - (this.options.reorgThreshold ?? 250) + 1); n <= to; n++)
      nearHead.push(n);
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
    const nextEnd = oneAtATime && to < this.head ? this.rangeEnd(to + 1, this.head) : null;
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
    const logsByHash = new Map<string, LogsByHash>();
    const { missed, refusedAt, reason } = await this.logsMissedNearHead(
      filter,
      logs,
      headers,
      nearHead,
      logsByHash,
    );
    if (refusedAt !== null) {
      // the blocks before it are indexed now: a node that stays behind must not hold back those it has
      const last = headers.get(refusedAt - 1);
      if (refusedAt === from || !last) return { refetch: reason };
      to = refusedAt - 1;
      end = last;
      logs = logs.filter((l) => Number(l.blockNumber) <= to);
      traced = traced.filter((c) => c.blockNumber <= to);
      triggerBlocks = triggerBlocks.filter((n) => n <= to);
      nearHead = nearHead.filter((n) => n <= to);
    }
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
      to,
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
   * The answers to the eth calls that `logs` (a range's) declare, made with the range, so that its
   * blocks find them at hand instead of waiting for a batch each (ranges are fetched while the one
   * before runs; a range widened for new data sources makes those of the logs it adds). Calls the
   * node failed are left out, and so are those of data sources created in a block for that block's
   * own logs: the block processor makes them when the block runs.
   */
  private async declaredCallsOf(logs: readonly Log[]): Promise<DeclaredCallAnswers> {
    if (!this.options.subgraph.declaresCalls) return NO_DECLARED_CALLS;
    const calls: { to: Hex; data: Hex; blockHash: Hex }[] = [];
    for (const { spec, log, params } of declaringTriggers(logs, this.sources)) {
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
    if (range.filter === filter && range.callAddresses === this.sources.callAddresses()) return range;
    const missing = missingFilters(range.filter, filter);
    const triggerBlocks = this.blockTriggersIn(range.from, range.to);
    if (
      !missing ||
      triggerBlocks.join() !== range.triggerBlocks.join() ||
      range.callAddresses !== this.sources.callAddresses()
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
    const subgraphTopic0s = topic0sOf([this.sources.logFilter()]);
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
    if (!this.sources.declaresReceipts()) return receipts;
    const wanted = logs.filter((l) => this.sources.needsReceipt(l));
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
    if (this.sources.withBlockHandlers.length === 0) return [];
    const blocks: number[] = [];
    for (let n = from; n <= to; n++) if (this.sources.hasBlockTriggers(BigInt(n))) blocks.push(n);
    return blocks;
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
   * Starts fetching the ranges after block `after` (up to the head) until as many are under way as
   * the chain source allows at once: the next one always, more over sparse stretches.
   */
  private fetchAhead(after: number, head: number, filter: DataSourceLogFilter): void {
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

  /** Commits the ranges written since the last commit, if any. */
  private commitPending(): void {
    const { store } = this.options;
    if (!store.transactionOpen) return;
    store.commit();
    this.events += this.pendingEvents;
    this.pendingEvents = 0;
    this.lastCommitAt = Date.now();
  }

  /** One unit of work: a range written (and maybe committed), a reverted reorg, or an idle poll. */
  async step(): Promise<StepResult> {
    const { store, chain } = this.options;
    const cp = store.checkpoint();
    // During catch-up the head last seen is still ahead, so asking again on every range would only
    // queue a round trip behind the node's work on the prefetched range; it is refreshed each second.
    if (cp.number >= this.head || Date.now() - this.headAt >= HEAD_REFRESH_MS) {
      const chainHead = await chain.headNumber();
      // a subgraph whose data sources all end stops at the last end block, as graph-node stops it
      const last = this.options.subgraph.endBlock;
      this.head = last === null ? chainHead : Math.min(chainHead, Number(last));
      this.headAt = Date.now();
    }
    const head = this.head;
    if (cp.number >= head) {
      this.ahead = [];
      this.commitPending(); // normally done already: a range reaching the head commits
      if (cp.block && head < cp.number) return this.pastNodeHead(cp, head);
      if (cp.block) {
        const current = await chain.header(cp.number);
        // a node behind the head (a load-balanced provider's) lacks the block: a node error to wait
        // out, not a reorg (graph-node, too, does nothing until the node has the block)
        if (!current)
          return this.retry(
            `the node did not return block ${cp.number}, the last one indexed (is it behind the head?)`,
            true,
          );
        if (current.hash !== cp.block.hash) {
          this.commitPending();
          await this.revertReorg(cp.number);
          return 'advanced';
        }
      }
      this.caughtUp = true;
      this.noteSynced(cp.number);
      if (cp.headSeen !== head) store.recordHeadSeen(head);
      return 'idle';
    }
    // data sources that ended before this range are left out of what it fetches
    this.sources.filterFrom(BigInt(cp.number + 1));
    const filter = this.sources.logFilter();
    const continuesCheckpoint = (range: FetchedRange) => !cp.block || range.parentHash === cp.block.hash;
    let fetched = await this.takeAhead(cp.number, filter);
    // A range fetched ahead that does not continue the checkpoint saw the chain move since: it and
    // those after it are fetched again, and only a direct fetch decides whether the checkpoint is gone.
    if (fetched && (isRefetch(fetched) || !continuesCheckpoint(fetched))) {
      this.ahead = [];
      fetched = null;
    }
    fetched ??= await this.fetchRange(cp.number + 1, this.rangeEnd(cp.number + 1, head), filter);
    if (isRefetch(fetched)) return this.retry(fetched.refetch);
    if (!continuesCheckpoint(fetched)) {
      this.ahead = [];
      this.commitPending();
      await this.revertReorg(cp.number);
      return 'advanced';
    }
    const { to, end } = fetched;
    // fetch the next ranges while this one is processed (widened when its data sources add addresses)
    this.fetchAhead(to, head, filter);
    // blocks in ascending order; logs come from the node ordered by (block, log index)
    const byBlock = new Map<number, Log[]>();
    for (const log of fetched.logs) {
      const n = Number(log.blockNumber);
      const list = byBlock.get(n);
      if (list) list.push(log);
      else byBlock.set(n, [log]);
    }
    const callsByBlock = new Map<number, RangeCall[]>();
    for (const call of fetched.calls) {
      const list = callsByBlock.get(call.blockNumber);
      if (list) list.push(call);
      else callsByBlock.set(call.blockNumber, [call]);
      if (!byBlock.has(call.blockNumber)) byBlock.set(call.blockNumber, []);
    }
    for (const n of fetched.triggerBlocks) if (!byBlock.has(n)) byBlock.set(n, []);
    let committed = end;
    if (!store.transactionOpen) {
      store.begin();
      this.sourcesAtCommit = this.sources.size;
    }
    let processed = 0;
    // the block being run: a handler failure commits the blocks before it, and it without its writes
    let current: BlockHeader | null = null;
    let pause = false;
    try {
      for (const n of [...byBlock.keys()].sort((a, b) => a - b)) {
        const header = fetched.known.get(n)!;
        current = header;
        store.beginBlockWrites();
        const result = await this.processBlock(
          header,
          byBlock.get(n)!,
          callsByBlock.get(n) ?? [],
          fetched.receipts,
          fetched.declaredCalls.get(header.hash.toLowerCase() as Hex),
        );
        processed += result.logs;
        if (result.errors > 0 && this.pausesOnErrors(n, head)) {
          committed = header;
          pause = true;
          break;
        }
        // New data sources change the filter: the range ends here, and the rest of it runs next,
        // with their logs added
        if (result.created && n < to) {
          committed = header;
          const rest = restOf(fetched, header);
          this.ahead.unshift({ from: rest.from, to, result: Promise.resolve(rest) });
          break;
        }
      }
      if (current?.number !== committed.number) {
        current = committed;
        store.beginBlockWrites();
      }
      this.files.runArrived(committed);
      store.setCheckpoint(committed, head);
    } catch (error) {
      if (error instanceof HandlerError && current) {
        this.commitFailedBlock(current, error, head);
        throw error;
      }
      // back to the last commit: the ranges written since then are fetched and run again
      store.rollback();
      this.ahead = [];
      this.pendingEvents = 0;
      this.sources.truncate(this.sourcesAtCommit);
      this.files.reload();
      this.synced = store.synced;
      if (error instanceof ChainMoved) return this.retry(error.message);
      // the node, not the mapping, failed: the same ranges run again once it answers
      if (error instanceof ChainAccessError) return this.retry(error.message, true);
      throw error;
    }
    this.pendingEvents += processed;
    if (pause) {
      store.setPausedAt(committed.number);
      this.commitPending();
      throw new IndexingPaused(committed.number);
    }
    this.caughtUp = committed.number >= head;
    if (committed.number >= head - CAUGHT_UP_DISTANCE) this.noteSynced(committed.number);
    // Ranges are committed together (fewer, larger commits write hot index pages fewer times);
    // at the head, after enough events or after a second, whatever comes first.
    if (
      this.caughtUp ||
      this.pendingEvents >= COMMIT_EVENTS ||
      Date.now() - this.lastCommitAt >= (this.options.commitIntervalMs ?? 1000)
    ) {
      this.commitPending();
    }
    return 'advanced';
  }

  /**
   * Whether a handler error indexing goes past (nonFatalErrors) at block `block` pauses indexing:
   * graph-node pauses a subgraph that has not yet been synced (caught up with the chain head), so
   * that a version with a bug is stopped before it could replace one that works, unless fail-fast
   * is off; a block that catches up syncs the subgraph before the check.
   */
  private pausesOnErrors(block: number, head: number): boolean {
    return !this.synced && block < head - CAUGHT_UP_DISTANCE && !this.options.disableFailFast;
  }

  /**
   * Commits the blocks before `header`, and `header` without the writes of its handlers, one of
   * which failed with `error`: graph-node transacts a failed block without its changes, so that the
   * subgraph's latest block is the failed one and queries at it see the error.
   */
  private commitFailedBlock(header: BlockHeader, error: HandlerError, head: number): void {
    const { store } = this.options;
    store.dropBlockWrites();
    store.setCheckpoint(header, head);
    store.recordFatalError(error.message, Number(error.blockNumber), error.handler);
    this.commitPending();
  }

  /**
   * Runs one block. When its handlers create data sources, their logs (and calls) in this block are
   * fetched and, if there are any, the block is run again from scratch with them (and the data
   * source set as it was before the block): graph-node's order, where the new data sources' triggers
   * run after the block's others. Returns how many logs the block handed to handlers, whether it
   * created data sources, and how many handlers failed under nonFatalErrors (their errors recorded).
   */
  private async processBlock(
    blockHeader: ChainHeader,
    initialLogs: Log[],
    initialCalls: RangeCall[],
    receipts: Map<Hex, TransactionReceipt>,
    declaredCalls: ReadonlyMap<string, Hex | null> | undefined,
  ): Promise<{ logs: number; created: boolean; errors: number }> {
    const { store, processor, chain } = this.options;
    const sourcesBefore = this.sources.size;
    // what the block's logs and calls were fetched for
    let coveredLogs = this.sources.logFilter();
    const coveredCalls = new Set(this.sources.callAddresses());
    let header = blockHeader;
    let logs = initialLogs;
    let calls = initialCalls;
    let deferImmutableChecks = true;
    for (;;) {
      const writer = store.blockWriter(header.number);
      const steps = processor.blockSteps(
        {
          number: BigInt(header.number),
          hash: header.hash as Hex,
          parentHash: header.parentHash as Hex,
          timestamp: BigInt(header.timestamp),
          header: header.info,
          logs,
          transactions: header.transactions,
          receipts,
          calls,
          declaredCalls,
        },
        writer,
        this.sources,
        deferImmutableChecks,
      );
      let result: BlockResult;
      try {
        result = await this.runSteps(steps);
      } catch (error) {
        if (!(error instanceof ChainReadPending)) throw error;
        // the handler that asked was cut short: the block runs again from its start with the answer
        await error.answered(this.options.signal);
        if (this.options.signal.aborted) throw new StoppedError();
        this.sources.truncate(sourcesBefore);
        continue;
      }
      if (result.createdDataSources.length > 0) {
        // what the block's logs and calls lack for its new data sources; an instance whose
        // address the block's logs already cover (another template's, a static data source's) adds
        // no request for the logs already there
        const logFilter = this.sources.logFilter();
        const missing = missingFilters(coveredLogs, logFilter) ?? [logFilter];
        const callAddresses = this.sources.callAddresses().filter((a) => !coveredCalls.has(a));
        coveredLogs = logFilter;
        for (const a of callAddresses) coveredCalls.add(a);
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
          throw new ChainMoved(
            `block ${header.number} changed while the logs of its new data sources were read`,
          );
        const [hereReceipts, callsHere] = await Promise.all([
          this.receiptsFor(here),
          this.withSuccess(tracedHere),
        ]);
        if (!hereReceipts || !callsHere)
          throw new ChainMoved('a receipt is missing, or from another block than its log or call');
        for (const [hash, receipt] of hereReceipts) receipts.set(hash, receipt);
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
          header = again;
        }
        if (added.length > 0) {
          // in no particular order: the block processor runs a block's logs by log index
          logs = [...logs, ...here];
          calls = [...calls, ...callsHere].sort(traceOrder);
          this.sources.truncate(sourcesBefore);
          continue;
        }
      }
      try {
        writer.flush();
      } catch (error) {
        // an immutable entity inserted again: run the block with the checks that name the handler
        if (!(error instanceof ImmutableEntityConflict) || !deferImmutableChecks) throw error;
        deferImmutableChecks = false;
        this.sources.truncate(sourcesBefore);
        continue;
      }
      for (const ds of result.createdDataSources) {
        store.recordDataSource({
          template: ds.template,
          address: ds.address,
          context: ds.context === null ? null : entityToJson(ds.context),
          createdAtBlock: header.number,
        });
      }
      this.files.record(result.createdFiles, header.number);
      if (result.errors.length > 0) store.recordHandlerErrors(header, result.errors);
      store.recordBlock(header);
      // past the static filters threshold, logs of contracts that are not instances come too
      const handed = this.sources.usesStaticFilters()
        ? logs.filter((l) => this.sources.forAddress(l.address.toLowerCase()).length > 0).length
        : logs.length;
      return { logs: handed, created: result.createdDataSources.length > 0, errors: result.errors.length };
    }
  }

  /**
   * Runs a block's handlers, a step at a time. Between steps the event loop runs the prefetch's
   * network callbacks (its requests and a large response's chunks each need a turn; without this the
   * fetch would wait for the whole range) and a stop, after which no handler runs.
   */
  private async runSteps(steps: Generator<void, BlockResult>): Promise<BlockResult> {
    let step = steps.next();
    while (!step.done) {
      await yieldToEventLoop();
      if (this.options.signal.aborted) throw new StoppedError();
      step = steps.next();
    }
    return step.value;
  }

  /** Reverts the store to the state after `ancestor` (null: before the start block) and reloads what follows from it. */
  private revertTo(ancestor: BlockHeader | null): void {
    this.options.store.revertTo(ancestor);
    this.sources = this.loadSources();
    this.files.reload();
    this.caughtUp = false;
  }

  /** Records, the first time, that the subgraph caught up with the chain head at block `block`. */
  private noteSynced(block: number): void {
    if (this.synced) return;
    this.options.store.markSynced(block);
    this.synced = true;
  }

  /**
   * A step while the node's head is below the checkpoint: the node is behind (a load-balanced
   * provider's node, one still syncing), or its chain is another, shorter one (a reorg to a shorter
   * branch, a devnet started again). The newest stored block at or below the node's head tells them
   * apart: another hash there is a reorg, reverted as any other; the same hash, a node behind, waited
   * for with its head recorded (the index-node API's chainHeadBlock). A node behind the oldest block
   * the store keeps cannot be told from another chain: it is waited for too, the log saying so.
   */
  private async pastNodeHead(cp: Checkpoint, head: number): Promise<StepResult> {
    const { store, chain } = this.options;
    const stored = store.storedBlocksDescending(head, 1)[0];
    const nodeBlock = stored ? await chain.header(stored.number) : null;
    if (stored && nodeBlock && nodeBlock.hash !== stored.hash) {
      await this.revertReorg(cp.number, head);
      return 'advanced';
    }
    if (cp.headSeen !== head) store.recordHeadSeen(head);
    const behind = `the node's head is block ${head}, behind block ${cp.number}, the last one indexed`;
    if (!stored)
      return this.retry(
        `${behind}, and the store keeps no block at or below it to tell a node behind from another chain: waiting for the node (if its chain was replaced, as a devnet started again is, delete the store)`,
        true,
      );
    if (!nodeBlock)
      return this.retry(`${behind}, and the node did not return block ${stored.number} below it`, true);
    return this.retry(
      `${behind}; its block ${stored.number} is the one indexed, so it is behind, not on another chain: waiting for it`,
      true,
    );
  }

  /**
   * Reverts the store to the newest stored block still on the canonical chain, searching from the
   * node's head down when that is below the checkpoint.
   */
  private async revertReorg(checkpoint: number, nodeHead = checkpoint): Promise<void> {
    const { store, chain } = this.options;
    let below = Math.min(checkpoint, nodeHead);
    let ancestor: BlockHeader | null = null;
    for (;;) {
      const candidates = store.storedBlocksDescending(below, 64);
      if (candidates.length === 0) break;
      const canonical = await chain.headers(candidates.map((c) => c.number));
      ancestor = candidates.find((c) => canonical.get(c.number)?.hash === c.hash) ?? null;
      if (ancestor) break;
      below = candidates[candidates.length - 1]!.number - 1;
    }
    // the history kept holds no block of the canonical chain: all is indexed again
    const beyondHistory = !ancestor && store.earliestBlock > store.startBlock;
    this.revertTo(ancestor);
    this.options.log?.(
      `reorg: block ${checkpoint} is no longer canonical${nodeHead < checkpoint ? ` (the node's head is block ${nodeHead})` : ''}; reverted to block ${ancestor ? ancestor.number : store.startBlock - 1}${beyondHistory ? ' (the reorg goes deeper than the history the store keeps: indexing starts over)' : ''}`,
    );
  }
}
