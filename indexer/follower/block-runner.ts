// Runs a fetched range's blocks through the block processor into the store, and commits: kept apart
// from the loop that drives the follower (follower.ts) and from fetching ranges (range-fetcher.ts), as
// the part that writes. Each block's handlers run into a per-block write buffer, and each range's
// checkpoint is written in the same store transaction as its entities (during catch-up several ranges
// share a transaction, committed about once a second; at the head each range commits at once), so a
// crash loses whole ranges only. A block's handlers run in steps with the event loop turning between
// them, so that the ranges fetched ahead move on.
//
// A handler's chain read the node has not answered yet (ChainReadPending, after a second) is waited
// for with the event loop turning, and the block runs again from its start once it has; a stop
// meanwhile ends the run, and, as one between handlers does, leaves the store at its last commit. A
// handler that fails commits its block without the block's writes, as graph-node does.
//
// Blocks run without looking new immutable entities up in the store (graph-node's assumption too);
// if the store refuses one as inserted by an earlier block, the block runs again with the lookups,
// which fail it with graph-node's error.
//
// File data sources (file-data-sources.ts) run at the end of each range written, in its last block:
// a file that arrives while the follower waits at the head runs with the next block, as in graph-node.
import type { Hex, Log, TransactionReceipt } from 'viem';
import type { DataSourceLogFilter, DataSourceSet } from '../runtime/data-sources.ts';
import { traceOrder } from '../runtime/ethereum-call.ts';
import type { BlockProcessor, BlockResult } from '../runtime/block-processor.ts';
import { HandlerError } from '../runtime/handler-error.ts';
import { entityToJson } from '../store/entity-json.ts';
import type { BlockHeader } from '../store/meta-tables.ts';
import type { IndexerStore } from '../store/sqlite-store.ts';
import { ImmutableEntityConflict } from '../store/store-errors.ts';
import { ChainReadPending } from './chain-reader.ts';
import type { FileDataSources } from './file-data-sources.ts';
import { StoppedError } from './chain-source.ts';
import type { ChainHeader } from './rpc-answers.ts';
import { missingFilters, type FetchedRange, type RangeCall, type RangeFetcher } from './range-fetcher.ts';

export interface BlockRunnerOptions {
  store: IndexerStore;
  processor: BlockProcessor;
  /**
   * during catch-up, the ranges written are committed together once this long has passed since the
   * last commit (default DEFAULT_COMMIT_INTERVAL_MS; 0 commits every range), or sooner once they
   * hold COMMIT_EVENTS events; at the head every range is committed at once
   */
  commitIntervalMs?: number;
  signal: AbortSignal;
}

/** How often catch-up commits unless INDEXER_COMMIT_INTERVAL_MS says otherwise. */
export const DEFAULT_COMMIT_INTERVAL_MS = 1_000;

/** Uncommitted ranges are committed once they hold this many events. */
export const COMMIT_EVENTS = 20_000;

/** How a range's run ended (see BlockRunner.run). */
export interface RangeRun {
  /** the block the checkpoint is now at */
  last: BlockHeader;
  /** a handler failed under nonFatalErrors at `last`, where indexing pauses */
  paused: boolean;
  /** the blocks after `last`, when one of its handlers created data sources: they run next */
  rest: FetchedRange | null;
}

/** What BlockRunner.processBlock returns of a block it ran. */
interface BlockOutcome {
  /** logs handed to handlers */
  logs: number;
  /** whether its handlers created data sources */
  created: boolean;
  /** handlers that failed under nonFatalErrors */
  errors: number;
}

/** Why a block runs again from its start, with the data source set as it was before it. */
type BlockRestart =
  /** a handler's chain read the node had not answered (ChainReadPending): the handler was cut short */
  | 'chain read answered'
  /** its handlers created data sources that have logs or calls in the block: they run too */
  | 'new data sources'
  /** the store refused an immutable entity as inserted by an earlier block: the checks that name the handler run */
  | 'immutable entity checks';

/** A block as BlockRunner.runOnce runs it, changed by what makes it run again. */
interface BlockRun {
  /** the follower's data sources when the block started */
  sources: DataSourceSet;
  /** with the transactions of the new data sources' logs and calls, once they were fetched */
  header: ChainHeader;
  logs: Log[];
  calls: RangeCall[];
  receipts: Map<Hex, TransactionReceipt>;
  declaredCalls: ReadonlyMap<string, Hex | null> | undefined;
  /** what the block's logs and calls were fetched for */
  coveredLogs: DataSourceLogFilter;
  coveredCalls: Set<Hex>;
  /** new immutable entities are not looked up in the store (until the store refuses one) */
  deferImmutableChecks: boolean;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

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

export class BlockRunner {
  /** events written but not yet committed */
  private pendingEvents = 0;
  /**
   * when the last commit was, on the monotonic clock (performance.now()): a step of the wall clock,
   * as NTP makes, neither holds commits back until it has passed nor hurries them
   */
  private lastCommitAt = -Infinity;
  /** logs handed to handlers in committed ranges */
  private committedEvents = 0;
  /** how many data sources the set held at the last commit, to return to on a rollback */
  private sourcesAtCommit = 0;

  constructor(
    private readonly options: BlockRunnerOptions,
    /** the follower's data sources as they stand now (a reorg replaces them) */
    private readonly sources: () => DataSourceSet,
    private readonly files: FileDataSources,
    /** reads the logs of the data sources a block creates, for that block */
    private readonly ranges: RangeFetcher,
  ) {}

  /** Logs handed to handlers in the ranges committed since this process started. */
  get events(): number {
    return this.committedEvents;
  }

  /**
   * Runs the blocks of `range` (whose logs, calls or block handlers give them triggers) in order,
   * into the store transaction, opened if none is, and sets the checkpoint; `head` is the chain head
   * it records. The run ends early after a block whose handlers failed under nonFatalErrors where
   * `pausesAt` says so, or that created data sources (see RangeRun). A handler that fails commits the
   * blocks before its block, and its block without its writes, and is thrown; any other error rolls
   * the store back to its last commit, with the data sources and file data sources, and is thrown.
   */
  async run(range: FetchedRange, head: number, pausesAt: (block: number) => boolean): Promise<RangeRun> {
    const { store } = this.options;
    const { to, end } = range;
    // blocks in ascending order; logs come from the node ordered by (block, log index)
    const byBlock = new Map<number, Log[]>();
    for (const log of range.logs) {
      const n = Number(log.blockNumber);
      const list = byBlock.get(n);
      if (list) list.push(log);
      else byBlock.set(n, [log]);
    }
    const callsByBlock = new Map<number, RangeCall[]>();
    for (const call of range.calls) {
      const list = callsByBlock.get(call.blockNumber);
      if (list) list.push(call);
      else callsByBlock.set(call.blockNumber, [call]);
      if (!byBlock.has(call.blockNumber)) byBlock.set(call.blockNumber, []);
    }
    for (const n of range.triggerBlocks) if (!byBlock.has(n)) byBlock.set(n, []);
    let committed = end;
    if (!store.transactionOpen) {
      store.begin();
      this.sourcesAtCommit = this.sources().size;
    }
    let processed = 0;
    // the block being run: a handler failure commits the blocks before it, and it without its writes
    let current: BlockHeader | null = null;
    let paused = false;
    let rest: FetchedRange | null = null;
    try {
      for (const n of [...byBlock.keys()].sort((a, b) => a - b)) {
        const header = range.known.get(n)!;
        current = header;
        store.beginBlockWrites();
        const result = await this.processBlock(
          header,
          byBlock.get(n)!,
          callsByBlock.get(n) ?? [],
          range.receipts,
          range.declaredCalls.get(header.hash.toLowerCase() as Hex),
        );
        processed += result.logs;
        if (result.errors > 0 && pausesAt(n)) {
          committed = header;
          paused = true;
          break;
        }
        // New data sources change the filter: the range ends here, and the rest of it runs next,
        // with their logs added
        if (result.created && n < to) {
          committed = header;
          rest = restOf(range, header);
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
      if (error instanceof HandlerError && current) this.commitFailedBlock(current, error, head);
      else this.rollback();
      throw error;
    }
    this.pendingEvents += processed;
    return { last: committed, paused, rest };
  }

  /** Commits the ranges written since the last commit, if any. */
  commitPending(): void {
    const { store } = this.options;
    if (!store.transactionOpen) return;
    store.commit();
    this.committedEvents += this.pendingEvents;
    this.pendingEvents = 0;
    this.lastCommitAt = performance.now();
  }

  /**
   * Commits the ranges written since the last commit when it is time: at the head (`caughtUp`)
   * always, so that queries see each range as soon as it is written; during catch-up once they hold
   * COMMIT_EVENTS events or commitIntervalMs has passed since the last commit, whichever comes first
   * (fewer, larger commits write hot index pages fewer times).
   */
  commitIfDue(caughtUp: boolean): void {
    if (
      caughtUp ||
      this.pendingEvents >= COMMIT_EVENTS ||
      performance.now() - this.lastCommitAt >= (this.options.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS)
    ) {
      this.commitPending();
    }
  }

  /** Back to the last commit: the store, and the data sources and file data sources with it. */
  private rollback(): void {
    this.options.store.rollback();
    this.pendingEvents = 0;
    this.sources().truncate(this.sourcesAtCommit);
    this.files.reload();
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
   * Runs one block, again from its start (with the data source set as it was before it) for as long
   * as runOnce gives a reason to (see BlockRestart). Returns how many logs the block handed to
   * handlers, whether it created data sources, and how many handlers failed under nonFatalErrors
   * (their errors recorded).
   */
  private async processBlock(
    header: ChainHeader,
    logs: Log[],
    calls: RangeCall[],
    receipts: Map<Hex, TransactionReceipt>,
    declaredCalls: ReadonlyMap<string, Hex | null> | undefined,
  ): Promise<BlockOutcome> {
    const sources = this.sources();
    const sourcesBefore = sources.size;
    const block: BlockRun = {
      sources,
      header,
      logs,
      calls,
      receipts,
      declaredCalls,
      coveredLogs: sources.logFilter(),
      coveredCalls: new Set(sources.callAddresses()),
      deferImmutableChecks: true,
    };
    for (;;) {
      const outcome = await this.runOnce(block);
      if (typeof outcome !== 'string') return outcome;
      sources.truncate(sourcesBefore);
    }
  }

  /**
   * Runs `block`'s handlers once, and writes what they did unless the block must run again: then
   * the reason, with `block` updated for the next run.
   */
  private async runOnce(block: BlockRun): Promise<BlockOutcome | BlockRestart> {
    const { store, processor, signal } = this.options;
    const { sources } = block;
    const writer = store.blockWriter(block.header.number);
    const steps = processor.blockSteps(
      {
        number: BigInt(block.header.number),
        hash: block.header.hash as Hex,
        parentHash: block.header.parentHash as Hex,
        timestamp: BigInt(block.header.timestamp),
        header: block.header.info,
        logs: block.logs,
        transactions: block.header.transactions,
        receipts: block.receipts,
        calls: block.calls,
        declaredCalls: block.declaredCalls,
      },
      writer,
      sources,
      block.deferImmutableChecks,
    );
    let result: BlockResult;
    try {
      result = await this.runSteps(steps);
    } catch (error) {
      if (!(error instanceof ChainReadPending)) throw error;
      await error.answered(signal);
      if (signal.aborted) throw new StoppedError();
      return 'chain read answered';
    }
    if (result.createdDataSources.length > 0 && (await this.addNewSourcesTriggers(block))) {
      return 'new data sources';
    }
    try {
      writer.flush();
    } catch (error) {
      if (!(error instanceof ImmutableEntityConflict) || !block.deferImmutableChecks) throw error;
      block.deferImmutableChecks = false;
      return 'immutable entity checks';
    }
    return this.recordBlock(block, result);
  }

  /**
   * Fetches the logs and calls of `block` that its new data sources have triggers in and the
   * fetch of its range lacked, and adds them to `block`; whether there were any (then the block
   * runs again with them: graph-node's order, where the new data sources' triggers run after the
   * block's others). An instance whose address the block's logs already cover (another
   * template's, a static data source's) adds no request for the logs already there.
   */
  private async addNewSourcesTriggers(block: BlockRun): Promise<boolean> {
    const { sources } = block;
    const logFilter = sources.logFilter();
    const missing = missingFilters(block.coveredLogs, logFilter) ?? [logFilter];
    const callAddresses = sources.callAddresses().filter((a) => !block.coveredCalls.has(a));
    block.coveredLogs = logFilter;
    for (const a of callAddresses) block.coveredCalls.add(a);
    const added = await this.ranges.logsOfNewSources(
      block.header,
      block.logs,
      block.calls,
      missing,
      callAddresses,
    );
    for (const [hash, receipt] of added.receipts) block.receipts.set(hash, receipt);
    block.header = added.header;
    if (added.logs.length + added.calls.length === 0) return false;
    // in no particular order: the block processor runs a block's logs by log index
    block.logs = [...block.logs, ...added.logs];
    block.calls = [...block.calls, ...added.calls].sort(traceOrder);
    return true;
  }

  /** Records in the store what the block's run left besides its entities (written by the flush). */
  private recordBlock(block: BlockRun, result: BlockResult): BlockOutcome {
    const { store } = this.options;
    const { sources, header, logs } = block;
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
    const handed = sources.usesStaticFilters()
      ? logs.filter((l) => sources.forAddress(l.address.toLowerCase()).length > 0).length
      : logs.length;
    return { logs: handed, created: result.createdDataSources.length > 0, errors: result.errors.length };
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
}
