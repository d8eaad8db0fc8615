// Follows the chain and feeds the subgraph runtime: the loop that asks for the chain head, takes the
// next range after the checkpoint from the range fetcher (range-fetcher.ts: logs, headers,
// transactions, receipts, calls and declared eth calls, fetched ahead and checked against each
// other), has the block runner (block-runner.ts) run its blocks' handlers into the store and commit,
// and decides what happens when something goes wrong.
//
// Reorgs are found by hash: the checkpoint block must still be on the canonical chain; if not, the
// store reverts to the newest stored block that is, and indexing resumes from there. A node whose head
// is below the checkpoint is on a shorter chain if its block differs from the newest stored one at or
// below that head (a reorg, reverted alike), else behind (waited for, its head asked for at the poll
// interval so that the block that ends the wait is seen at once). A range whose answers disagree,
// or a handler's chain read the node failed (ChainAccessError), rolls back to the last commit like a
// moved chain, and the ranges run again after a backoff. A handler that fails stops indexing; one that
// fails under nonFatalErrors before the subgraph first caught up with the chain head pauses it, as
// graph-node does, unless fail-fast is off.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Hex } from 'viem';
import { backoffMs, type Backoff } from '../../common/backoff.ts';
import { DataSourceSet, type DynamicDataSource } from '../runtime/data-sources.ts';
import type { BlockProcessor } from '../runtime/block-processor.ts';
import { HandlerError } from '../runtime/handler-error.ts';
import { ChainAccessError } from '../runtime/host-context.ts';
import type { Subgraph } from '../runtime/manifest.ts';
import { entityFromJson } from '../store/entity-json.ts';
import type { BlockHeader, Checkpoint } from '../store/meta-tables.ts';
import type { FileFetcher } from './file-fetcher.ts';
import { FileDataSources } from './file-data-sources.ts';
import { StoppedError } from './chain-source.ts';
import { BlockRunner, type BlockRunnerOptions, type RangeRun } from './block-runner.ts';
import {
  ChainMoved,
  RangeFetcher,
  continuesCheckpoint,
  isRefetch,
  type RangeFetcherOptions,
} from './range-fetcher.ts';

interface FollowerOptions extends RangeFetcherOptions, BlockRunnerOptions {
  subgraph: Subgraph;
  processor: BlockProcessor;
  /** wait between head polls once caught up */
  pollIntervalMs: number;
  /** by file template, what fetches its data sources' files; those of a template without one wait */
  fileFetchers?: ReadonlyMap<string, FileFetcher>;
  /** past this many data sources, eth_getLogs asks for the templates' events from any address (see DataSourceSet) */
  staticFiltersAbove?: number;
  /**
   * under nonFatalErrors, go on past handler errors also before the subgraph first reaches the chain
   * head (graph-node's GRAPH_DISABLE_FAIL_FAST); by default indexing pauses at such an error
   */
  disableFailFast?: boolean;
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

/** `waiting`: for a node whose head is below the checkpoint (see pastNodeHead); polled as when idle */
type StepResult = 'advanced' | 'idle' | 'retry' | 'waiting';

/** Waits before running a range again (see waitBeforeRetry): the first, and the most (doubling in between). */
const RANGE_RETRY: Backoff = { minMs: 250, maxMs: 15_000 };

/** How often the head is asked for while the checkpoint is behind it. */
const HEAD_REFRESH_MS = 1000;

/**
 * A block at most this far behind the chain head is caught up (graph-node's CAUGHT_UP_DISTANCE): the
 * subgraph counts as synced from the first such block on.
 */
export const CAUGHT_UP_DISTANCE = 10;

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

export class ChainFollower {
  private sources: DataSourceSet;
  private head = -1;
  /** when the head was last asked for, on the monotonic clock (a step of the wall clock does not move it) */
  private headAt = -Infinity;
  private caughtUp = false;
  /**
   * Why the last step runs its range again: the node failed a handler's chain read (`failed`), or
   * its answers disagreed; null when it refused the span, which the next, smaller span answers. And
   * how many steps in a row ran their range again.
   */
  private retryCause: { reason: string; failed: boolean } | null = null;
  private retriesInARow = 0;
  /** whether the last step waited for a node behind the checkpoint: a wait is logged once, not per poll */
  private waitingForNode = false;
  /** what stopped indexing, if a handler failure did: the failure, or the pause it caused */
  failure: HandlerError | IndexingPaused | null = null;

  private readonly files: FileDataSources;
  /** whether the subgraph has caught up with the chain head once (see IndexerStore.synced) */
  private synced: boolean;
  private readonly ranges: RangeFetcher;
  private readonly blocks: BlockRunner;

  constructor(private readonly options: FollowerOptions) {
    this.sources = this.loadSources();
    this.synced = options.store.synced;
    this.files = new FileDataSources(
      options.store,
      options.processor,
      options.fileFetchers ?? new Map(),
      options.log ?? (() => undefined),
    );
    const sources = () => this.sources;
    this.ranges = new RangeFetcher(options, sources, () => this.head);
    this.blocks = new BlockRunner(options, sources, this.files, this.ranges);
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
      events: this.blocks.events,
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
        this.waitingForNode = result === 'waiting';
        if (result === 'retry') {
          await this.waitBeforeRetry();
          continue;
        }
        this.retriesInARow = 0;
        this.options.onProgress?.(this.progress());
        // a stop ends the wait, and then the loop
        if (result === 'idle' || result === 'waiting')
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
    this.blocks.commitPending();
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

  /**
   * One unit of work: a range written (and maybe committed), a reverted reorg, an idle poll, or a
   * poll of a node behind the checkpoint.
   */
  async step(): Promise<StepResult> {
    const { store } = this.options;
    const cp = store.checkpoint();
    const head = await this.refreshHead(cp.number);
    if (cp.number >= head) return this.atHead(cp, head);
    // data sources that ended before this range are left out of what it fetches
    this.sources.filterFrom(BigInt(cp.number + 1));
    const filter = this.sources.logFilter();
    const fetched = await this.ranges.rangeAfter(cp, head, filter);
    if (isRefetch(fetched)) return this.retry(fetched.refetch);
    if (!continuesCheckpoint(fetched, cp)) {
      this.ranges.dropAhead();
      this.blocks.commitPending();
      await this.revertReorg(cp.number);
      return 'advanced';
    }
    // fetch the next ranges while this one is processed (widened when its data sources add addresses)
    this.ranges.fetchAhead(fetched.to, head, filter);
    let ran: RangeRun;
    try {
      ran = await this.blocks.run(fetched, head, (block) => this.pausesOnErrors(block, head));
    } catch (error) {
      // a handler's failure committed its block and stops indexing
      if (error instanceof HandlerError) throw error;
      // back to the last commit: the ranges written since then are fetched and run again
      this.ranges.dropAhead();
      this.synced = store.synced;
      if (error instanceof ChainMoved) return this.retry(error.message);
      // the node, not the mapping, failed: the same ranges run again once it answers
      if (error instanceof ChainAccessError) return this.retry(error.message, true);
      throw error;
    }
    if (ran.rest) this.ranges.putBack(ran.rest);
    const committed = ran.last.number;
    if (ran.paused) {
      store.setPausedAt(committed);
      this.blocks.commitPending();
      throw new IndexingPaused(committed);
    }
    this.caughtUp = committed >= head;
    if (committed >= head - CAUGHT_UP_DISTANCE) this.noteSynced(committed);
    this.blocks.commitIfDue(this.caughtUp);
    return 'advanced';
  }

  /**
   * The chain head (bounded by the subgraph's end block), asked for when the checkpoint `cpNumber`
   * has reached the one last seen, else once a second: during catch-up the head last seen is still
   * ahead, so asking again on every range would only queue a round trip behind the node's work on
   * the prefetched range.
   */
  private async refreshHead(cpNumber: number): Promise<number> {
    if (cpNumber >= this.head || performance.now() - this.headAt >= HEAD_REFRESH_MS) {
      const chainHead = await this.options.chain.headNumber();
      // a subgraph whose data sources all end stops at the last end block, as graph-node stops it
      const last = this.options.subgraph.endBlock;
      this.head = last === null ? chainHead : Math.min(chainHead, Number(last));
      this.headAt = performance.now();
    }
    return this.head;
  }

  /**
   * A step with the checkpoint `cp` at the head: idle while the checkpoint block is still the node's,
   * a reorg reverted when it is not (see also pastNodeHead).
   */
  private async atHead(cp: Checkpoint, head: number): Promise<StepResult> {
    const { store, chain } = this.options;
    this.ranges.dropAhead();
    this.blocks.commitPending(); // normally done already: a range reaching the head commits
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
        this.blocks.commitPending();
        await this.revertReorg(cp.number);
        return 'advanced';
      }
    }
    this.caughtUp = true;
    this.noteSynced(cp.number);
    if (cp.headSeen !== head) store.recordHeadSeen(head);
    return 'idle';
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
   * the store keeps cannot be told from another chain: it is waited for too, the log saying so. A
   * node that lacks the stored block below its own head answers inconsistently: a node error, run
   * again after the growing backoff.
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
      return this.waitForNode(
        `${behind}, and the store keeps no block at or below it to tell a node behind from another chain: waiting for the node (if its chain was replaced, as a devnet started again is, delete the store)`,
      );
    if (!nodeBlock)
      return this.retry(`${behind}, and the node did not return block ${stored.number} below it`, true);
    return this.waitForNode(
      `${behind}; its block ${stored.number} is the one indexed, so it is behind, not on another chain: waiting for it`,
    );
  }

  /**
   * A step waiting for a node behind the checkpoint: the next one asks for its head (and its block's
   * hash) again after the poll interval, as at the head, not after the range retries' growing
   * backoff. What ends the wait is often the first block of a new branch (a reorg whose node at first
   * had only the common ancestor), to be seen as soon as it is mined, as graph-node's block stream,
   * waiting, wakes on the next chain-head update. The wait is logged when it begins, `reason` saying why.
   */
  private waitForNode(reason: string): 'waiting' {
    if (!this.waitingForNode)
      this.options.log?.(`${reason}; its head is asked for every ${this.options.pollIntervalMs} ms`);
    return 'waiting';
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
