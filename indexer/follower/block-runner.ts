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
import type { DataSourceSet } from '../runtime/data-sources.ts';
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
  /** events written but not yet committed, and when the last commit was */
  private pendingEvents = 0;
  private lastCommitAt = 0;
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
    this.lastCommitAt = Date.now();
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
      Date.now() - this.lastCommitAt >= (this.options.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS)
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
    const { store, processor } = this.options;
    const sources = this.sources();
    const sourcesBefore = sources.size;
    // what the block's logs and calls were fetched for
    let coveredLogs = sources.logFilter();
    const coveredCalls = new Set(sources.callAddresses());
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
        sources,
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
        sources.truncate(sourcesBefore);
        continue;
      }
      if (result.createdDataSources.length > 0) {
        // what the block's logs and calls lack for its new data sources; an instance whose
        // address the block's logs already cover (another template's, a static data source's) adds
        // no request for the logs already there
        const logFilter = sources.logFilter();
        const missing = missingFilters(coveredLogs, logFilter) ?? [logFilter];
        const callAddresses = sources.callAddresses().filter((a) => !coveredCalls.has(a));
        coveredLogs = logFilter;
        for (const a of callAddresses) coveredCalls.add(a);
        const added = await this.ranges.logsOfNewSources(header, logs, calls, missing, callAddresses);
        for (const [hash, receipt] of added.receipts) receipts.set(hash, receipt);
        header = added.header;
        if (added.logs.length + added.calls.length > 0) {
          // in no particular order: the block processor runs a block's logs by log index
          logs = [...logs, ...added.logs];
          calls = [...calls, ...added.calls].sort(traceOrder);
          sources.truncate(sourcesBefore);
          continue;
        }
      }
      try {
        writer.flush();
      } catch (error) {
        // an immutable entity inserted again: run the block with the checks that name the handler
        if (!(error instanceof ImmutableEntityConflict) || !deferImmutableChecks) throw error;
        deferImmutableChecks = false;
        sources.truncate(sourcesBefore);
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
      const handed = sources.usesStaticFilters()
        ? logs.filter((l) => sources.forAddress(l.address.toLowerCase()).length > 0).length
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
}
