// Runs a subgraph's handlers over one block, in graph-node's order: `once` block handlers at their
// data source's start block; then logs and calls by transaction (a transaction's logs by log index,
// then its calls in trace order); then the `call` block handlers of the addresses called (in the
// order of the calls, once per run of calls to one address), and the unfiltered and `polling` block
// handlers. For each trigger, the matching data sources (static in manifest order, then template
// instances in creation order), and for a log the handler whose topic filters it passes. Template
// instances created by handlers start after the pass over the block: the block's triggers are run
// again for them alone, repeatedly while handlers keep creating data sources. Before each pass, the
// eth calls its log handlers declare that the follower did not make ahead are made at the block in
// one go (see declared-calls.ts). Any handler failure is a deterministic error that fails the block;
// with the `nonFatalErrors` feature, the handler's changes (writes, data sources created) are
// discarded instead and the error is reported with the block's result, as graph-node does.
// A file data source's handler runs on its own, given the file's bytes, in the pass of the block the
// follower is at when the file has arrived (graph-node's offchain triggers), over a writer of its own.
import type { Hex, Log, TransactionReceipt } from 'viem';
import type { Entity, EntityStoreTx } from '../store/entity.ts';
import type { SubgraphSchema } from '../subgraph-schema.ts';
import {
  activeAt,
  blockHandlersAt,
  type ActiveDataSource,
  type DataSourceSet,
  type DataSourceView,
  type DynamicDataSource,
} from './data-sources.ts';
import type { EventParameter } from './event-decoder.ts';
import { callRequests, type CallRequest } from './declared-calls.ts';
import { decodeCall, sameCall, writeCall, type ContractCall } from './ethereum-call.ts';
import { writeEvent, writeTriggerBlock, type BlockWithLogs } from './ethereum-event.ts';
import {
  BlockState,
  ChainAccessError,
  StoreAccessError,
  type ChainReader,
  type CreatedFile,
  type MappingLogger,
  type RuntimeEnv,
} from './host-context.ts';
import { MappingInstance } from './mapping-instance.ts';
import { matchesTopicFilters, type EventHandlerSpec, type MappingSpec, type Subgraph } from './manifest.ts';

export interface BlockProcessorOptions {
  logger?: MappingLogger;
  /** what ethereum.call, getBalance and hasCode read; without it they fail the handler */
  chain?: ChainReader;
  /** replace an instance once its allocator has handed out this many bytes (default 8 MiB) */
  maxInstanceMemoryBytes?: number;
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

/** A file data source whose file has arrived: what its handler runs with, besides the bytes. */
export interface FileTrigger {
  template: string;
  /** canonical content path */
  source: string;
  /** its causality region */
  region: number;
  context: Entity | null;
  createdAtBlock: bigint;
}

export interface BlockProcessor {
  /**
   * Runs the handlers of `block`; throws HandlerError when a handler fails (the block must be rolled
   * back), unless the subgraph declares nonFatalErrors.
   */
  processBlock(block: BlockWithLogs, tx: EntityStoreTx, sources: DataSourceSet): BlockResult;
  /**
   * processBlock as steps: the generator pauses after every few logs so that a caller can let other
   * work run (the follower's prefetch) in the middle of a large block, and returns the result.
   * `deferImmutableChecks`: see BlockState.
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
   * created; throws HandlerError when it fails, as processBlock does, also under nonFatalErrors
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

/**
 * A deterministic failure of a handler: the subgraph cannot index this block. Failures of the
 * entity store are not HandlerErrors: processBlock rethrows them as they are.
 */
export class HandlerError extends Error {
  constructor(
    message: string,
    readonly blockNumber: bigint,
    readonly dataSource: string,
    readonly handler: string,
    readonly transactionHash: Hex | null,
    readonly logIndex: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
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

/** A log whose handler declares eth calls: the data source, the handler, the decoded parameters. */
interface DeclaringTrigger {
  ds: ActiveDataSource;
  spec: EventHandlerSpec;
  log: Log;
  params: EventParameter[];
}

/** The triggers among `logs` whose handler in `dataSources` (its topic filters passed) declares eth calls. */
export function declaringTriggers(logs: readonly Log[], dataSources: DataSourceView): DeclaringTrigger[] {
  const triggers: DeclaringTrigger[] = [];
  for (const log of logs) {
    const topic0 = log.topics[0] as Hex | undefined;
    if (!topic0) continue;
    for (const ds of dataSources.forAddress(log.address.toLowerCase())) {
      if (!activeAt(ds, log.blockNumber ?? 0n)) continue;
      for (const spec of ds.mapping.handlers.get(topic0) ?? []) {
        if (spec.calls.length === 0 || !matchesTopicFilters(spec, log.topics)) continue;
        const params = spec.decode(log);
        if (params) triggers.push({ ds, spec, log, params });
      }
    }
  }
  return triggers;
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
  const maxMemory = options.maxInstanceMemoryBytes ?? 8 * 1024 * 1024;
  const nonFatalErrors = subgraph.features.has('nonFatalErrors');
  /** the handlers of the current block that failed under nonFatalErrors */
  let errors: HandlerError[] = [];
  const instances = new Map<WebAssembly.Module, MappingInstance>();
  const memories = new Map<WebAssembly.Module, WebAssembly.Memory>();
  let instancesCreated = 0;

  function instanceFor(mapping: MappingSpec): MappingInstance {
    const module = mapping.module;
    let instance = instances.get(module);
    if (!instance || instance.allocatedBytes() > maxMemory) {
      let memory = memories.get(module);
      if (!memory) {
        const { initial, maximum } = mapping.memoryLimits;
        memory = new WebAssembly.Memory(maximum === undefined ? { initial } : { initial, maximum });
        memories.set(module, memory);
      } else {
        // A new instance must see the zeroed memory a fresh one would: the stub runtime's __new
        // does not clear what it hands out. Data segments are written again on instantiation.
        new Uint8Array(memory.buffer).fill(0);
      }
      instance = new MappingInstance(module, memory, runtime);
      instancesCreated++;
      instances.set(module, instance);
    }
    return instance;
  }

  function matchHandler(ds: ActiveDataSource, log: Log): DecodedHandler | null {
    const specs = ds.mapping.handlers.get(log.topics[0] as Hex);
    if (!specs) return null;
    const matching: DecodedHandler[] = [];
    for (const spec of specs) {
      if (!matchesTopicFilters(spec, log.topics)) continue;
      const params = spec.decode(log);
      if (params) matching.push({ spec, params });
      else
        runtime.logger(
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

  /**
   * The failure of a handler as the caller must see it (see HandlerError, StoreAccessError), for a
   * log's handler, a call's or a block handler.
   */
  function handlerFailure(
    error: unknown,
    ds: ActiveDataSource,
    handler: string | null,
    block: { number: bigint },
    trigger: { log: Log } | { call: ContractCall } | { file: string } | null,
  ): unknown {
    // The instance may be mid-way through a handler; never reuse it.
    instances.delete(ds.mapping.module);
    if (error instanceof StoreAccessError) return error.cause;
    if (error instanceof ChainAccessError) return error;
    const message = error instanceof Error ? error.message : String(error);
    const log = trigger && 'log' in trigger ? trigger.log : null;
    const call = trigger && 'call' in trigger ? trigger.call : null;
    const file = trigger && 'file' in trigger ? trigger.file : null;
    const where = log
      ? `, transaction ${log.transactionHash}, log index ${log.logIndex}`
      : call
        ? `, transaction ${call.transactionHash}, call to ${call.to}`
        : file
          ? `, file ${file}`
          : '';
    return new HandlerError(
      `Handler ${handler ?? '(matching)'} of data source ${ds.name} failed at block ${block.number}${where}: ${message}`,
      block.number,
      ds.name,
      handler ?? '',
      log?.transactionHash ?? call?.transactionHash ?? null,
      log?.logIndex ?? null,
      { cause: error },
    );
  }

  /** Under nonFatalErrors, starts recording what the handler about to run changes. */
  function enterHandler(): void {
    if (nonFatalErrors) runtime.block!.enterHandler();
  }

  /**
   * Throws a handler's failure (see handlerFailure), unless nonFatalErrors lets indexing go past it:
   * then the handler's changes are discarded and the error is kept for the block's result.
   */
  function fail(failure: unknown): void {
    if (!nonFatalErrors || !(failure instanceof HandlerError)) throw failure;
    runtime.block!.discardHandler();
    errors.push(failure);
    runtime.logger(
      'error',
      `${failure.message}; its changes are discarded (nonFatalErrors)`,
      failure.dataSource,
    );
  }

  function runHandler(ds: ActiveDataSource, log: Log, block: BlockWithLogs): boolean {
    let handler: string | null = null;
    enterHandler();
    try {
      const decoded = matchHandler(ds, log);
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
      const instance = instanceFor(ds.mapping);
      runtime.dataSource = ds;
      const event = writeEvent(instance.heap, { log, block, params: decoded.params, receipt });
      instance.call(decoded.spec.handler, event);
      return true;
    } catch (error) {
      fail(handlerFailure(error, ds, handler, block, { log }));
      return true;
    } finally {
      runtime.dataSource = null;
    }
  }

  /**
   * Runs the call handler of `ds` for `call`, if it has one for the call's function and the call's
   * arguments decode as that function's; returns whether it ran.
   */
  function runCallHandler(ds: ActiveDataSource, call: ContractCall, block: BlockWithLogs): boolean {
    const spec = ds.mapping.callHandlers.get(call.input.slice(0, 10) as Hex);
    if (!spec) return false;
    enterHandler();
    try {
      const decoded = decodeCall(spec, call);
      if (!decoded) {
        runtime.logger(
          'warning',
          `Skipping handler ${spec.handler}: the input of the call to ${call.to} in transaction ${call.transactionHash} does not decode as ${spec.function}`,
          ds.name,
        );
        return false;
      }
      const instance = instanceFor(ds.mapping);
      runtime.dataSource = ds;
      instance.call(spec.handler, writeCall(instance.heap, call, block, decoded));
      return true;
    } catch (error) {
      fail(handlerFailure(error, ds, spec.handler, block, { call }));
      return true;
    } finally {
      runtime.dataSource = null;
    }
  }

  /** Runs the call handlers `call` triggers; the call is the latest one that did (see runPass). */
  function runCallHandlers(call: ContractCall, dataSources: DataSourceView, block: BlockWithLogs): number {
    let calls = 0;
    if (!call.transactionSucceeded) return calls;
    for (const ds of dataSources.forAddress(call.to)) {
      if (!activeAt(ds, block.number)) continue;
      if (runCallHandler(ds, call, block)) calls++;
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
      for (const { ds, handler } of targets) runBlockHandler(ds, handler, block, call);
      handled += targets.length;
    }
    return handled;
  }

  /** Runs the `start` or `end` block handlers of `dataSources` that fire at this block. */
  function runBlockHandlers(
    dataSources: readonly ActiveDataSource[],
    block: BlockWithLogs,
    trigger: 'start' | 'end',
  ): number {
    let calls = 0;
    for (const ds of dataSources) {
      const spec = blockHandlersAt(ds, block.number)[trigger];
      if (!spec) continue;
      runBlockHandler(ds, spec.handler, block, null);
      calls++;
    }
    return calls;
  }

  /** Runs block handler `handler` of `ds` (a `call` one names the call that triggered it). */
  function runBlockHandler(
    ds: ActiveDataSource,
    handler: string,
    block: BlockWithLogs,
    call: ContractCall | null,
  ): void {
    enterHandler();
    try {
      const instance = instanceFor(ds.mapping);
      runtime.dataSource = ds;
      instance.call(handler, writeTriggerBlock(instance.heap, block));
    } catch (error) {
      fail(handlerFailure(error, ds, handler, block, call && { call }));
    } finally {
      runtime.dataSource = null;
    }
  }

  /**
   * Makes the eth calls that the handlers `logs` trigger in this pass declare, all at once at the
   * block, before any handler runs (graph-node's DecoderHook); those the follower made ahead for the
   * block are not asked for again. Calls that reverted are logged by label for each data source, as
   * graph-node logs them: a declaration that keeps failing is likely attached to the wrong handler
   * or given the wrong arguments.
   */
  function prefetchDeclaredCalls(
    chain: ChainReader,
    logs: readonly Log[],
    dataSources: DataSourceView,
    block: BlockWithLogs,
  ): void {
    const declared: { ds: ActiveDataSource; request: CallRequest }[] = [];
    for (const { ds, spec, log, params } of declaringTriggers(logs, dataSources)) {
      try {
        for (const request of callRequests(spec.calls, log, params)) declared.push({ ds, request });
      } catch (error) {
        throw handlerFailure(error, ds, spec.handler, block, { log });
      }
    }
    if (declared.length === 0) return;
    const answers = chain.prefetchCalls(
      declared.map((d) => d.request),
      block.hash,
      block.declaredCalls,
    );
    const failures = new Map<string, Map<string, number>>();
    declared.forEach(({ ds, request }, i) => {
      if (answers[i] !== null && answers[i] !== '0x') return;
      const labels = failures.get(ds.name) ?? new Map<string, number>();
      labels.set(request.label, (labels.get(request.label) ?? 0) + 1);
      failures.set(ds.name, labels);
    });
    for (const [dataSource, labels] of failures) {
      const summary = [...labels]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([label, n]) => `${label} (${n} ${n === 1 ? 'time' : 'times'})`);
      runtime.logger(
        'warning',
        `Declared calls failed at block ${block.number} (data source ${dataSource}): ${summary.join(', ')}`,
        dataSource,
      );
    }
  }

  function* runPass(
    logs: readonly Log[],
    dataSources: DataSourceView,
    block: BlockWithLogs,
  ): Generator<void, number> {
    if (subgraph.declaresCalls && runtime.chain)
      prefetchDeclaredCalls(runtime.chain, logs, dataSources, block);
    let handled = runBlockHandlers(dataSources.withBlockHandlers, block, 'start');
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
        handled += runCallHandlers(call, dataSources, block);
        continue;
      }
      l++;
      const topic0 = log!.topics[0];
      if (!topic0) continue;
      for (const ds of dataSources.forAddress(log!.address.toLowerCase())) {
        if (!activeAt(ds, block.number)) continue;
        if (!ds.mapping.handlers.has(topic0)) continue;
        if (runHandler(ds, log!, block)) handled++;
      }
    }
    handled += runCallBlockHandlers(calls, dataSources, block);
    return handled + runBlockHandlers(dataSources.withBlockHandlers, block, 'end');
  }

  return {
    get instancesCreated() {
      return instancesCreated;
    },
    get memoryBytes() {
      let total = 0;
      for (const memory of memories.values()) total += memory.buffer.byteLength;
      return total;
    },
    processBlock(block, tx, sources) {
      const steps = this.blockSteps(block, tx, sources);
      for (;;) {
        const step = steps.next();
        if (step.done) return step.value;
      }
    },
    *blockSteps(block, tx, sources, deferImmutableChecks = false) {
      const state = new BlockState(block.number, block.hash, tx, deferImmutableChecks);
      runtime.block = state;
      errors = [];
      try {
        const logs = sortedLogs(block.logs);
        const createdDataSources: DynamicDataSource[] = [];
        let handlerCalls = yield* runPass(logs, sources, block);
        while (state.created.length > 0) {
          const before = sources.size;
          for (const ds of state.created.splice(0)) if (sources.add(ds)) createdDataSources.push(ds);
          if (sources.size === before) break;
          handlerCalls += yield* runPass(logs, sources.since(before), block);
        }
        return { createdDataSources, createdFiles: state.createdFiles, handlerCalls, errors };
      } finally {
        runtime.block = null;
      }
    },
    runFileHandler(file, content, block, tx) {
      const template = subgraph.templates.get(file.template);
      if (!template || template.kind === 'ethereum')
        throw new Error(`${file.template} is not a file data source template`);
      const handler = template.mapping.fileHandler!;
      const ds: ActiveDataSource = {
        name: template.name,
        address: null,
        startBlock: file.createdAtBlock,
        endBlock: null,
        context: file.context,
        mapping: template.mapping,
        seq: -1,
        file: { source: file.source, region: file.region },
      };
      const state = new BlockState(block.number, block.hash, tx);
      runtime.block = state;
      try {
        const instance = instanceFor(ds.mapping);
        runtime.dataSource = ds;
        instance.call(handler, instance.heap.writeBytes(content));
        return state.createdFiles;
      } catch (error) {
        throw handlerFailure(error, ds, handler, block, { file: file.source });
      } finally {
        runtime.dataSource = null;
        runtime.block = null;
      }
    },
  };
}
