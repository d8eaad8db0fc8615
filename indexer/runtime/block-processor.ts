// Runs a subgraph's handlers over one block, in graph-node's order: `once` block handlers at their
// data source's start block; then logs and calls by transaction (a transaction's logs by log index,
// then its calls in trace order); then the `call` block handlers of the addresses called (in the
// order of the calls, once per run of calls to one address), and the unfiltered and `polling` block
// handlers. For each trigger, the matching data sources (static in manifest order, then template
// instances in creation order), and for a log the handler whose topic filters it passes. Template
// instances created by handlers start after the pass over the block: the block's triggers are run
// again for them alone, repeatedly while handlers keep creating data sources. Before each pass, the
// eth calls its log handlers declare that the follower did not make ahead are made at the block in
// one go (declared-call-prefetch.ts). Any handler failure is a deterministic error that fails the
// block (handler-error.ts); with the `nonFatalErrors` feature, the handler's changes (writes, data
// sources created) are discarded instead and the error is reported with the block's result, as
// graph-node does. Handlers run in mapping instances reused across calls (mapping-instances.ts), each
// call with a bounded execution budget (execution-budget.ts): a handler that never ends fails too.
// A file data source's handler runs on its own, given the file's bytes, in the pass of the block the
// follower is at when the file has arrived (graph-node's offchain triggers), over a writer of its own
// (file-handler.ts).
import type { Hex, Log, TransactionReceipt } from 'viem';
import type { EntityStoreTx } from '../store/entity.ts';
import type { SubgraphSchema } from '../subgraph-schema.ts';
import {
  activeAt,
  blockHandlersAt,
  type ActiveDataSource,
  type DataSourceSet,
  type DataSourceView,
  type DynamicDataSource,
} from './data-sources.ts';
import { prefetchDeclaredCalls } from './declared-call-prefetch.ts';
import type { EventParameter } from './event-decoder.ts';
import { decodeCall, sameCall, writeCall, type ContractCall } from './ethereum-call.ts';
import { writeEvent, writeTriggerBlock, type BlockWithLogs } from './ethereum-event.ts';
import { runFileDataSourceHandler, type FileTrigger } from './file-handler.ts';
import { HANDLER_BUDGET } from './execution-budget.ts';
import { HandlerError, handlerFailure } from './handler-error.ts';
import {
  BlockState,
  type ChainReader,
  type CreatedFile,
  type MappingLogger,
  type RuntimeEnv,
} from './host-context.ts';
import { matchesTopicFilters, type EventHandlerSpec, type Subgraph } from './manifest.ts';
import { MappingInstances } from './mapping-instances.ts';

interface BlockProcessorOptions {
  logger?: MappingLogger;
  /** what ethereum.call, getBalance and hasCode read; without it they fail the handler */
  chain?: ChainReader;
  /** replace an instance once its allocator has handed out this many bytes (default 8 MiB) */
  maxInstanceMemoryBytes?: number;
  /** units one handler call may spend (default HANDLER_BUDGET, see execution-budget.ts) */
  handlerBudget?: bigint;
}

export interface BlockResult {
  /** template instances created in this block (already added to the DataSourceSet) */
  createdDataSources: DynamicDataSource[];
  /** file data sources created in this block, in creation order (the caller records them) */
  createdFiles: CreatedFile[];
  handlerCalls: number;
  /** handlers that failed and whose changes were discarded (nonFatalErrors only), in the order they ran */
  errors: HandlerError[];
}

export interface BlockProcessor {
  /**
   * Runs the handlers of `block` as steps: the generator pauses after every few logs so that a
   * caller can let other work run (the follower's prefetch) in the middle of a large block, and
   * returns the result. Throws HandlerError when a handler fails (the block must be rolled back),
   * unless the subgraph declares nonFatalErrors; a failure of the store or of a chain read (a
   * ChainAccessError) is thrown as it is in any case (see handler-error.ts). `deferImmutableChecks`:
   * see BlockState.
   */
  blockSteps(
    block: BlockWithLogs,
    tx: EntityStoreTx,
    sources: DataSourceSet,
    deferImmutableChecks?: boolean,
  ): Generator<void, BlockResult>;
  /**
   * Runs the handler of file data source `file` with its file's bytes in the pass of `block`, over
   * `tx`, a writer of the data source's own causality region. Returns the file data sources it
   * created; throws HandlerError when it fails, as blockSteps does, also under nonFatalErrors
   * (graph-node retries such a failure as non-deterministic: it never indexes past it).
   */
  runFileHandler(
    file: FileTrigger,
    content: Uint8Array,
    block: { number: bigint; hash: Hex },
    tx: EntityStoreTx,
  ): CreatedFile[];
  /** instances created so far (one at start per module, plus replacements) */
  readonly instancesCreated: number;
  /** bytes of linear memory held by the mapping modules (one memory per module) */
  readonly memoryBytes: number;
}

/** blockSteps pauses after this many logs or calls (a few milliseconds of handlers). */
const TRIGGERS_PER_STEP = 32;

interface DecodedHandler {
  spec: EventHandlerSpec;
  params: EventParameter[];
}

function sortedLogs(logs: readonly Log[]): Log[] {
  const live = logs.filter((l) => !l.removed);
  for (let i = 1; i < live.length; i++) {
    if ((live[i - 1]?.logIndex ?? 0) > (live[i]?.logIndex ?? 0)) {
      return live.sort((a, b) => (a.logIndex ?? 0) - (b.logIndex ?? 0));
    }
  }
  return live;
}

export function createBlockProcessor(
  subgraph: Subgraph,
  schema: SubgraphSchema,
  options: BlockProcessorOptions = {},
): BlockProcessor {
  const runtime: RuntimeEnv = {
    subgraph,
    schema,
    logger: options.logger ?? (() => undefined),
    chain: options.chain ?? null,
    block: null,
    dataSource: null,
  };
  const instances = new MappingInstances(
    runtime,
    options.maxInstanceMemoryBytes ?? 8 * 1024 * 1024,
    options.handlerBudget ?? HANDLER_BUDGET,
  );
  const handlers = new HandlerCalls(runtime, instances, subgraph.features.has('nonFatalErrors'));

  /** One pass over the block's triggers for `dataSources`, their declared calls made first. */
  function* pass(
    logs: readonly Log[],
    dataSources: DataSourceView,
    block: BlockWithLogs,
  ): Generator<void, number> {
    if (subgraph.declaresCalls && runtime.chain)
      prefetchDeclaredCalls(runtime.chain, runtime.logger, logs, dataSources, block);
    return yield* runPass(handlers, logs, dataSources, block);
  }

  return {
    get instancesCreated() {
      return instances.created;
    },
    get memoryBytes() {
      return instances.memoryBytes;
    },
    *blockSteps(block, tx, sources, deferImmutableChecks = false) {
      const state = new BlockState(block.number, block.hash, tx, deferImmutableChecks);
      runtime.block = state;
      const errors = handlers.beginBlock();
      try {
        const logs = sortedLogs(block.logs);
        const createdDataSources: DynamicDataSource[] = [];
        let handlerCalls = yield* pass(logs, sources, block);
        // the data sources the last pass created, in a pass of their own, until none are created
        while (state.created.length > 0) {
          const before = sources.size;
          for (const ds of state.created.splice(0)) if (sources.add(ds)) createdDataSources.push(ds);
          if (sources.size === before) break;
          handlerCalls += yield* pass(logs, sources.since(before), block);
        }
        return { createdDataSources, createdFiles: state.createdFiles, handlerCalls, errors };
      } finally {
        runtime.block = null;
      }
    },
    runFileHandler(file, content, block, tx) {
      return runFileDataSourceHandler(runtime, instances, file, content, block, tx);
    },
  };
}

/**
 * Runs one handler of one data source for one trigger, in the data source's mapping instance, and
 * makes its failure what the caller must see (`fail`). What every handler call of the processor
 * shares: the runtime, the instances, and the failures kept under nonFatalErrors for the block's
 * result.
 */
class HandlerCalls {
  /** the handlers of the current block that failed under nonFatalErrors */
  private errors: HandlerError[] = [];

  constructor(
    private readonly runtime: RuntimeEnv,
    private readonly instances: MappingInstances,
    private readonly nonFatalErrors: boolean,
  ) {}

  /** Starts a block: returns the list its failures under nonFatalErrors go to. */
  beginBlock(): HandlerError[] {
    this.errors = [];
    return this.errors;
  }

  /**
   * Runs the handler of `ds` for `log`, if one matches it (its topic filters and its event's ABI);
   * returns whether one did.
   */
  log(ds: ActiveDataSource, log: Log, block: BlockWithLogs): boolean {
    let handler: string | null = null;
    this.enterHandler();
    try {
      const decoded = this.matchHandler(ds, log);
      if (!decoded) return false;
      handler = decoded.spec.handler;
      let receipt: TransactionReceipt | null = null;
      if (decoded.spec.receipt) {
        receipt = (log.transactionHash && block.receipts?.get(log.transactionHash)) || null;
        if (!receipt)
          throw new Error(
            `handler declares receipt: true but the receipt of ${log.transactionHash} was not fetched`,
          );
      }
      const instance = this.instances.get(ds.mapping);
      this.runtime.dataSource = ds;
      const event = writeEvent(instance.heap, { log, block, params: decoded.params, receipt });
      instance.call(decoded.spec.handler, event);
      return true;
    } catch (error) {
      this.fail(error, ds, handler, block, { log });
      return true;
    } finally {
      this.runtime.dataSource = null;
    }
  }

  /**
   * Runs the call handler of `ds` for `call`, if it has one for the call's function and the call's
   * arguments decode as that function's; returns whether it ran.
   */
  call(ds: ActiveDataSource, call: ContractCall, block: BlockWithLogs): boolean {
    const spec = ds.mapping.callHandlers.get(call.input.slice(0, 10) as Hex);
    if (!spec) return false;
    this.enterHandler();
    try {
      const decoded = decodeCall(spec, call);
      if (!decoded) {
        this.runtime.logger(
          'warning',
          `Skipping handler ${spec.handler}: the input of the call to ${call.to} in transaction ${call.transactionHash} does not decode as ${spec.function}`,
          ds.name,
        );
        return false;
      }
      const instance = this.instances.get(ds.mapping);
      this.runtime.dataSource = ds;
      instance.call(spec.handler, writeCall(instance.heap, call, block, decoded));
      return true;
    } catch (error) {
      this.fail(error, ds, spec.handler, block, { call });
      return true;
    } finally {
      this.runtime.dataSource = null;
    }
  }

  /** Runs block handler `handler` of `ds` (a `call` one names the call that triggered it). */
  block(ds: ActiveDataSource, handler: string, block: BlockWithLogs, call: ContractCall | null): void {
    this.enterHandler();
    try {
      const instance = this.instances.get(ds.mapping);
      this.runtime.dataSource = ds;
      instance.call(handler, writeTriggerBlock(instance.heap, block));
    } catch (error) {
      this.fail(error, ds, handler, block, call && { call });
    } finally {
      this.runtime.dataSource = null;
    }
  }

  private matchHandler(ds: ActiveDataSource, log: Log): DecodedHandler | null {
    const specs = ds.mapping.handlers.get(log.topics[0] as Hex);
    if (!specs) return null;
    const matching: DecodedHandler[] = [];
    for (const spec of specs) {
      if (!matchesTopicFilters(spec, log.topics)) continue;
      const params = spec.decode(log);
      if (params) matching.push({ spec, params });
      else
        this.runtime.logger(
          'debug',
          `Skipping handler ${spec.handler}: the log does not decode as ${spec.event}`,
          ds.name,
        );
    }
    if (matching.length > 1) {
      throw new Error(
        `Multiple handlers defined for event \`${matching[0]?.spec.event}\`, only one is supported`,
      );
    }
    return matching[0] ?? null;
  }

  /** Under nonFatalErrors, starts recording what the handler about to run changes. */
  private enterHandler(): void {
    if (this.nonFatalErrors) this.runtime.block!.enterHandler();
  }

  /**
   * Throws the failure of the handler of `ds` that ran for `trigger` (see handlerFailure), unless
   * nonFatalErrors lets indexing go past it: then the handler's changes are discarded and the error
   * is kept for the block's result.
   */
  private fail(
    error: unknown,
    ds: ActiveDataSource,
    handler: string | null,
    block: BlockWithLogs,
    trigger: { log: Log } | { call: ContractCall } | null,
  ): void {
    // the handler may have stopped mid-way: its instance must not run another
    this.instances.discard(ds.mapping.module);
    const failure = handlerFailure(error, ds, handler, block, trigger);
    if (!this.nonFatalErrors || !(failure instanceof HandlerError)) throw failure;
    this.runtime.block!.discardHandler();
    this.errors.push(failure);
    this.runtime.logger(
      'error',
      `${failure.message}; its changes are discarded (nonFatalErrors)`,
      failure.dataSource,
    );
  }
}

/**
 * One pass over the block's triggers for `dataSources`, in graph-node's order (see the top of this
 * file), pausing every TRIGGERS_PER_STEP logs or calls; returns the handlers it ran.
 */
function* runPass(
  handlers: HandlerCalls,
  logs: readonly Log[],
  dataSources: DataSourceView,
  block: BlockWithLogs,
): Generator<void, number> {
  let handled = runBlockHandlers(handlers, dataSources.withBlockHandlers, block, 'start');
  const calls = block.calls ?? [];
  let lastCallTrigger: ContractCall | null = null;
  let sincePause = 0;
  for (let l = 0, c = 0; l < logs.length || c < calls.length; ) {
    if (++sincePause === TRIGGERS_PER_STEP) {
      sincePause = 0;
      yield;
    }
    const log = logs[l];
    const call = calls[c];
    // a transaction's logs run before its calls (graph-node orders calls and logs by transaction)
    if (call && (!log || call.transactionIndex < (log.transactionIndex ?? 0))) {
      c++;
      if (!isCallTrigger(call, dataSources)) continue;
      // graph-node drops a call trigger equal to the one before it
      if (lastCallTrigger && sameCall(lastCallTrigger, call)) continue;
      lastCallTrigger = call;
      handled += runCallHandlers(handlers, call, dataSources, block);
      continue;
    }
    l++;
    const topic0 = log!.topics[0];
    if (!topic0) continue;
    for (const ds of dataSources.forAddress(log!.address.toLowerCase())) {
      if (!activeAt(ds, block.number)) continue;
      if (!ds.mapping.handlers.has(topic0)) continue;
      if (handlers.log(ds, log!, block)) handled++;
    }
  }
  handled += runCallBlockHandlers(handlers, calls, dataSources, block);
  return handled + runBlockHandlers(handlers, dataSources.withBlockHandlers, block, 'end');
}

/** Runs the call handlers `call` triggers; the call is the latest one that did (see runPass). */
function runCallHandlers(
  handlers: HandlerCalls,
  call: ContractCall,
  dataSources: DataSourceView,
  block: BlockWithLogs,
): number {
  let calls = 0;
  if (!call.transactionSucceeded) return calls;
  for (const ds of dataSources.forAddress(call.to)) {
    if (!activeAt(ds, block.number)) continue;
    if (handlers.call(ds, call, block)) calls++;
  }
  return calls;
}

/** Whether `call` is a call trigger of a data source in `dataSources` (graph-node's filter). */
function isCallTrigger(call: ContractCall, dataSources: DataSourceView): boolean {
  const selector = call.input.slice(0, 10) as Hex;
  return dataSources.forAddress(call.to).some((ds) => ds.mapping.callHandlers.has(selector));
}

/**
 * Runs the `call` block handlers of the addresses `calls` go to, in the order of the calls, once
 * for each run of consecutive calls to one address (graph-node drops a block trigger equal to the
 * one before it, and keeps the others).
 */
function runCallBlockHandlers(
  handlers: HandlerCalls,
  calls: readonly ContractCall[],
  dataSources: DataSourceView,
  block: BlockWithLogs,
): number {
  let handled = 0;
  let lastTo: Hex | null = null;
  for (const call of calls) {
    const targets = dataSources.forAddress(call.to).flatMap((ds) => {
      const spec = ds.mapping.blockHandlers.find((h) => h.filter === 'call');
      return spec && activeAt(ds, block.number) ? [{ ds, handler: spec.handler }] : [];
    });
    if (targets.length === 0 || call.to === lastTo) continue;
    lastTo = call.to;
    for (const { ds, handler } of targets) handlers.block(ds, handler, block, call);
    handled += targets.length;
  }
  return handled;
}

/** Runs the `start` or `end` block handlers of `dataSources` that fire at this block. */
function runBlockHandlers(
  handlers: HandlerCalls,
  dataSources: readonly ActiveDataSource[],
  block: BlockWithLogs,
  trigger: 'start' | 'end',
): number {
  let calls = 0;
  for (const ds of dataSources) {
    const spec = blockHandlersAt(ds, block.number)[trigger];
    if (!spec) continue;
    handlers.block(ds, spec.handler, block, null);
    calls++;
  }
  return calls;
}
