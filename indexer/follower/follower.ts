// Follows the chain and feeds the subgraph runtime: fetches logs of the tracked addresses and
// topics over adaptive ranges, runs each block's handlers through the block processor into a
// per-block write buffer, and commits a whole range together with its checkpoint in one store
// transaction. Reorgs are found by hash: the checkpoint block must still be on the canonical chain;
// if not, the store reverts to the newest stored block that is, and indexing resumes from there.
//
// Consistency of one range [from, to]: the header of `to` is read before eth_getLogs and again
// after it. The hash of `to` commits to every block below it, so when both reads agree the logs
// came from that chain; any disagreement (or a log whose blockHash differs from its header) makes
// the range be fetched again.
import type { Hex, Log } from 'viem';
import { DataSourceSet, type DynamicDataSource } from '../runtime/data-sources.ts';
import { HandlerError, type BlockProcessor } from '../runtime/block-processor.ts';
import type { Subgraph } from '../runtime/manifest.ts';
import { entityFromJson, entityToJson } from '../store/entity-json.ts';
import type { BlockHeader, IndexerStore } from '../store/sqlite-store.ts';
import { StoppedError, type ChainSource, type LogFilter } from './chain-source.ts';

export interface FollowerOptions {
  store: IndexerStore;
  subgraph: Subgraph;
  processor: BlockProcessor;
  chain: ChainSource;
  /** wait between head polls once caught up */
  pollIntervalMs: number;
  signal: AbortSignal;
  log?: (line: string) => void;
  /** called after every committed range and every head poll */
  onProgress?: (progress: FollowerProgress) => void;
}

export interface FollowerProgress {
  startBlock: number;
  checkpoint: number;
  head: number;
  /** logs handed to handlers since this process started */
  events: number;
  caughtUp: boolean;
}

type StepResult = 'advanced' | 'idle' | 'retry';

/** Thrown inside a range when the chain changed under it; the range is fetched again. */
class ChainMoved extends Error {}

function byPosition(a: Log, b: Log): number {
  return Number((a.blockNumber ?? 0n) - (b.blockNumber ?? 0n)) || (a.logIndex ?? 0) - (b.logIndex ?? 0);
}

export class ChainFollower {
  private sources: DataSourceSet;
  private head = -1;
  private events = 0;
  private caughtUp = false;
  /** the error that stopped indexing, if a handler failed */
  failure: HandlerError | null = null;

  constructor(private readonly options: FollowerOptions) {
    this.sources = this.loadSources();
  }

  private loadSources(): DataSourceSet {
    const dynamic: DynamicDataSource[] = this.options.store.dataSources().map((r) => ({
      template: r.template,
      address: r.address as Hex,
      context: r.context === null ? null : entityFromJson(r.context),
      createdAtBlock: BigInt(r.createdAtBlock),
    }));
    return new DataSourceSet(this.options.subgraph, dynamic);
  }

  private filter(): LogFilter {
    const f = this.sources.logFilter();
    return { addresses: f.wildcard ? null : f.addresses, topics: f.topics };
  }

  progress(): FollowerProgress {
    return {
      startBlock: this.options.store.startBlock,
      checkpoint: this.options.store.checkpoint().number,
      head: this.head,
      events: this.events,
      caughtUp: this.caughtUp,
    };
  }

  /** Indexes until stopped or until a handler fails (then the failure is recorded in the store). */
  async run(): Promise<void> {
    const { signal } = this.options;
    try {
      while (!signal.aborted) {
        const result = await this.step();
        if (result !== 'retry') this.options.onProgress?.(this.progress());
        if (result === 'idle') await this.sleep(this.options.pollIntervalMs);
      }
    } catch (error) {
      if (error instanceof StoppedError) return;
      if (error instanceof HandlerError) {
        this.failure = error;
        this.options.store.recordFatalError(error.message);
        this.options.log?.(`indexing stopped: ${error.message}`);
        return;
      }
      throw error;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const { signal } = this.options;
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** One unit of work: a committed range, a reverted reorg, or an idle poll at the head. */
  async step(): Promise<StepResult> {
    const { store, chain } = this.options;
    const head = await chain.headNumber();
    this.head = head;
    const cp = store.checkpoint();
    if (cp.number >= head) {
      if (cp.block) {
        const current = await chain.header(cp.number);
        if (!current || current.hash !== cp.block.hash) {
          await this.revertReorg(cp.number);
          return 'advanced';
        }
      }
      this.caughtUp = true;
      if (cp.headSeen !== head) store.recordHeadSeen(head);
      return 'idle';
    }
    const from = cp.number + 1;
    const to = Math.min(head, from + chain.range - 1);
    const before = await chain.header(to);
    if (!before) return 'retry';
    const filter = this.filter();
    const logs = await chain.logsInRange(filter, from, to);
    if (logs === 'too-large') return 'retry';
    const numbers = [...new Set(logs.map((l) => Number(l.blockNumber)))];
    const headers = await chain.headers(cp.block ? [cp.number, to, ...numbers] : [to, ...numbers]);
    if (headers.get(to)?.hash !== before.hash) return 'retry';
    if (cp.block && headers.get(cp.number)?.hash !== cp.block.hash) {
      await this.revertReorg(cp.number);
      return 'advanced';
    }
    if (logs.some((l) => headers.get(Number(l.blockNumber))?.hash !== l.blockHash?.toLowerCase()))
      return 'retry';
    const pending = new Map<number, Log[]>();
    for (const log of logs.sort(byPosition)) {
      const n = Number(log.blockNumber);
      const list = pending.get(n);
      if (list) list.push(log);
      else pending.set(n, [log]);
    }
    const known = new Map<number, BlockHeader>();
    for (const [n, h] of headers) if (h) known.set(n, h);
    const dynamicBefore = [...this.sources.dynamic];
    store.begin();
    let processed = 0;
    try {
      while (pending.size > 0) {
        const n = Math.min(...pending.keys());
        const blockLogs = pending.get(n)!;
        pending.delete(n);
        processed += await this.processBlock(known.get(n)!, blockLogs, to, pending, known, before);
      }
      store.commit(before, head);
    } catch (error) {
      store.rollback();
      this.sources = new DataSourceSet(this.options.subgraph, dynamicBefore);
      if (error instanceof ChainMoved) return 'retry';
      throw error;
    }
    this.events += processed;
    this.caughtUp = to >= head;
    return 'advanced';
  }

  /**
   * Runs one block. When its handlers create data sources, their logs over [block, to] are fetched;
   * if the block itself has some, the block is run again from scratch with them (and the data source
   * set as it was before the block), which is graph-node's order: the new data sources' triggers run
   * after the block's others. Returns the number of logs the block handed to handlers.
   */
  private async processBlock(
    header: BlockHeader,
    initialLogs: Log[],
    to: number,
    pending: Map<number, Log[]>,
    known: Map<number, BlockHeader>,
    toHeader: BlockHeader,
  ): Promise<number> {
    const { store, processor, chain, subgraph } = this.options;
    const dynamicBefore = [...this.sources.dynamic];
    const fetched = new Set<string>();
    let logs = initialLogs;
    for (;;) {
      const writer = store.blockWriter(header.number);
      const result = processor.processBlock(
        {
          number: BigInt(header.number),
          hash: header.hash as Hex,
          parentHash: header.parentHash as Hex,
          timestamp: BigInt(header.timestamp),
          logs,
        },
        writer,
        this.sources,
      );
      const fresh = result.createdDataSources
        .map((d) => d.address.toLowerCase())
        .filter((a) => !fetched.has(a));
      let rerun = false;
      if (fresh.length > 0) {
        for (const a of fresh) fetched.add(a);
        const extra = await chain.allLogs(
          { addresses: fresh as Hex[], topics: this.sources.logFilter().topics },
          header.number,
          to,
        );
        const missing = [...new Set(extra.map((l) => Number(l.blockNumber)))].filter((n) => !known.has(n));
        if (missing.length > 0) {
          const more = await chain.headers([...missing, to]);
          if (more.get(to)?.hash !== toHeader.hash) throw new ChainMoved();
          for (const n of missing) known.set(n, more.get(n)!);
        }
        for (const log of extra) {
          const n = Number(log.blockNumber);
          if (known.get(n)?.hash !== log.blockHash?.toLowerCase()) throw new ChainMoved();
          if (n === header.number) continue;
          const list = pending.get(n) ?? [];
          list.push(log);
          pending.set(n, list.sort(byPosition));
        }
        const here = extra.filter((l) => Number(l.blockNumber) === header.number);
        if (here.length > 0) {
          logs = [...logs, ...here].sort(byPosition);
          this.sources = new DataSourceSet(subgraph, dynamicBefore);
          rerun = true;
        }
      }
      if (rerun) continue;
      writer.flush();
      for (const ds of result.createdDataSources) {
        store.recordDataSource({
          template: ds.template,
          address: ds.address,
          context: ds.context === null ? null : entityToJson(ds.context),
          createdAtBlock: header.number,
        });
      }
      store.recordBlock(header);
      return logs.length;
    }
  }

  /** Reverts the store to the newest stored block still on the canonical chain. */
  private async revertReorg(checkpoint: number): Promise<void> {
    const { store, chain } = this.options;
    let below = checkpoint;
    let ancestor: BlockHeader | null = null;
    for (;;) {
      const candidates = store.storedBlocksDescending(below, 64);
      if (candidates.length === 0) break;
      const canonical = await chain.headers(candidates.map((c) => c.number));
      ancestor = candidates.find((c) => canonical.get(c.number)?.hash === c.hash) ?? null;
      if (ancestor) break;
      below = candidates[candidates.length - 1]!.number - 1;
    }
    store.revertTo(ancestor);
    this.sources = this.loadSources();
    this.caughtUp = false;
    this.options.log?.(
      `reorg: block ${checkpoint} is no longer canonical; reverted to block ${ancestor ? ancestor.number : store.startBlock - 1}`,
    );
  }
}
