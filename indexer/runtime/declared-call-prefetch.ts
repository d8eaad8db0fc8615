// The declared eth calls of a pass over a block (see declared-calls.ts), made in one go before its
// handlers run, as graph-node's DecoderHook makes them, and those that reverted logged by label.
// The follower finds the same triggers to make a range's calls ahead (declaringTriggers). Kept
// apart from the block processor: it runs once per pass, not once per trigger.
import type { Hex, Log } from 'viem';
import { activeAt, type ActiveDataSource, type DataSourceView } from './data-sources.ts';
import { callRequests, type CallRequest } from './declared-calls.ts';
import type { BlockWithLogs } from './ethereum-event.ts';
import type { EventParameter } from './event-decoder.ts';
import { handlerFailure } from './handler-error.ts';
import type { ChainReader, MappingLogger } from './host-context.ts';
import { matchesTopicFilters, type EventHandlerSpec } from './manifest.ts';

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

/**
 * Makes the eth calls that the handlers `logs` trigger in this pass declare, all at once at the
 * block, before any handler runs (graph-node's DecoderHook); those the follower made ahead for the
 * block are not asked for again. A declaration whose arguments cannot be encoded fails its handler
 * (a HandlerError). Calls that reverted are logged by label for each data source, as graph-node
 * logs them: a declaration that keeps failing is likely attached to the wrong handler or given the
 * wrong arguments.
 */
export function prefetchDeclaredCalls(
  chain: ChainReader,
  logger: MappingLogger,
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
    logger(
      'warning',
      `Declared calls failed at block ${block.number} (data source ${dataSource}): ${summary.join(', ')}`,
      dataSource,
    );
  }
}
