// The measuring half of `npm run bench:indexer` (bench/indexer.ts generates the scenario): a child
// process of its own, run from the bundle `npm run build` makes (build/bench-indexer-measure.mjs)
// as `npm run indexer` runs the indexer, so its peak RSS is the indexer's alone, with no scenario
// generator and no TypeScript loader in it. It indexes the scenario from scratch, fetches and
// decodes the same logs alone, times the store alone on what the run wrote, and prints the figures
// against their targets; then it indexes again with handlers getting only transaction hashes
// (INDEXER_TRANSACTIONS=hash-only), does the same through the proxy that delays every RPC request,
// times a catch-up over a chain of empty blocks behind such a proxy (the next range fetched during
// the current one, against several at once), indexes keeping only the last 50 blocks of history (the
// scenario's chain is a couple of hundred blocks long) to weigh pruning's cost and the disk it
// saves, and indexes a factory subgraph's thousands of data sources (bench/many-funds.ts).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import type { Hex } from 'viem';
import { ChainSource } from '../indexer/follower/chain-source.ts';
import { COMMIT_EVENTS } from '../indexer/follower/block-runner.ts';
import { MAX_RANGES_AHEAD, type TransactionFetch } from '../indexer/follower/range-fetcher.ts';
import { createIndexer } from '../indexer/indexer.ts';
import type { NetworkContract } from '../indexer/runtime/manifest.ts';
import { createProgressDisplay } from '../indexer/progress.ts';
import { createEventDecoder, type EventDecoder } from '../indexer/runtime/event-decoder.ts';
import { loadSubgraph } from '../indexer/runtime/manifest.ts';
import { idFromSql, rowToEntity } from '../indexer/store/layout.ts';
import { openStore } from '../indexer/store/sqlite-store.ts';
import { parseSubgraphSchema } from '../indexer/subgraph-schema.ts';
import { entityTables } from '../test/indexer/store-dump.ts';
import { indexManyFunds } from './many-funds.ts';
import { STATIC_FILTERS_ABOVE } from '../indexer/runtime/data-sources.ts';

const TARGET_EVENTS_PER_SECOND = 5_000;
const TARGET_RATIO = 0.5;
const TARGET_RSS_MB = 300;
/** the sparse catch-up's ranges hold at most this many blocks, as providers cap eth_getLogs ranges */
const SPARSE_RANGE = 10;
/** the factory subgraph run: funds registered, and subscription requests spread over them */
const MANY_FUNDS = 20_000;
const FUND_SUBSCRIPTIONS = 20_000;
/** history the pruned run keeps: a quarter of the scenario's chain, so that it prunes a few times */
const PRUNED_HISTORY_BLOCKS = 50;

export interface MeasureInput {
  rpcUrl: string;
  /** the same node behind a loopback proxy that delays every HTTP request, as a hosted RPC would */
  slowRpcUrl: string;
  /** the proxy's delay */
  rpcLatencyMs: number;
  /** a chain of `blocks` empty blocks behind a proxy with the same delay */
  sparse: { rpcUrl: string; blocks: number };
  contracts: Record<string, NetworkContract>;
  vaults: string[];
}

interface RunFigures {
  events: number;
  blocks: number;
  indexSeconds: number;
  cpuSeconds: number;
  decoded: number;
  fetchSeconds: number;
  peakRss: number;
  storeOnly: { versions: number; seconds: number } | null;
  /** what the store holds once the indexer stopped: entity versions, and the bytes of its pages in use */
  held: { versions: number; bytes: number };
}

interface RunOptions {
  /** also time the store alone on what the run wrote */
  storeFloor?: boolean;
  transactions?: TransactionFetch;
  historyBlocks?: number;
  reorgThreshold?: number;
}

/** The process's peak resident set so far as the kernel counts it (Linux), else 0. */
function highWaterMark(): number {
  try {
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * Indexes the chain at `rpcUrl` from scratch (handlers getting `transactions`), then fetches and
 * decodes the same logs alone over the same adaptive ranges with the runtime's own decoders (built
 * once per event, as the block processor does). With `storeFloor`, also times the store alone on
 * what the run wrote.
 */
async function indexAndFetch(
  input: MeasureInput,
  rpcUrl: string,
  options: RunOptions = {},
): Promise<RunFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-indexer-'));
  // the indexer's footprint: sampled every 20 ms while it runs, and the kernel's high-water mark
  // when it stops (the measurements after it do not count)
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  const display = createProgressDisplay({
    write: (t) => process.stdout.write(t),
    tty: Boolean(process.stdout.isTTY),
  });
  const indexer = await createIndexer({
    rpcUrl,
    network: 'devnet',
    dataDir,
    port: 0,
    contracts: input.contracts,
    pollIntervalMs: 50,
    transactions: options.transactions,
    historyBlocks: options.historyBlocks,
    reorgThreshold: options.reorgThreshold,
    onProgress: display,
  });
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await indexer.start();
  await indexer.waitForHead();
  const indexSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const status = indexer.status();
  await indexer.stop();
  clearInterval(sampler);
  peakRss = Math.max(peakRss, highWaterMark());
  const held = storeHeld(indexer.storePath);
  const storeOnly = options.storeFloor ? storeWritesAlone(indexer.storePath, dataDir) : null;
  rmSync(dataDir, { recursive: true, force: true });

  const subgraph = await loadSubgraph({ buildDir: resolve(import.meta.dirname, '..', 'subgraph', 'build') });
  const decoders = new Map<Hex, EventDecoder>();
  for (const mapping of [...subgraph.dataSources, ...subgraph.templates.values()].map((d) => d.mapping)) {
    for (const [topic, specs] of mapping.handlers)
      decoders.set(topic, createEventDecoder(specs[0]!.abiEvent));
  }
  const addresses = [...Object.values(input.contracts).map((c) => c.address), ...input.vaults].map(
    (a) => a.toLowerCase() as Hex,
  );
  const startBlock = Math.min(...Object.values(input.contracts).map((c) => c.startBlock));
  const chain = new ChainSource({ rpcUrl });
  const fetchStarted = performance.now();
  let decoded = 0;
  for (let from = startBlock; from <= status.checkpoint; ) {
    const to = Math.min(status.checkpoint, from + chain.range - 1);
    const logs = await chain.logsInRange({ addresses, topics: [...decoders.keys()] }, from, to);
    if (logs === 'too-large') continue;
    for (const log of logs) {
      if (decoders.get(log.topics[0]!)!(log)) decoded++;
    }
    from = to + 1;
  }
  const fetchSeconds = (performance.now() - fetchStarted) / 1000;
  return {
    events: status.events,
    blocks: status.checkpoint - startBlock + 1,
    indexSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    decoded,
    fetchSeconds,
    peakRss,
    storeOnly,
    held,
  };
}

const verdict = (ok: boolean) => (ok ? 'ok' : 'BELOW TARGET');

async function measure(input: MeasureInput): Promise<void> {
  const run = await indexAndFetch(input, input.rpcUrl, { storeFloor: true });
  const eventsPerSecond = run.events / run.indexSeconds;
  const ratio = run.fetchSeconds / run.indexSeconds;
  const budget = run.fetchSeconds / TARGET_RATIO;
  const store = run.storeOnly!;
  // wall time is at least the CPU time spread over every core, whatever runs in parallel
  const cores = availableParallelism();
  const fastest = run.cpuSeconds / cores;
  console.log(`
indexer benchmark (${fmt(run.blocks)} blocks, anvil on loopback; handlers get whole transactions, the default)
  events indexed            ${fmt(run.events)} in ${run.indexSeconds.toFixed(2)} s (CPU time ${run.cpuSeconds.toFixed(2)} s, all threads)
  events indexed per second ${fmt(eventsPerSecond)}  (target >= ${fmt(TARGET_EVENTS_PER_SECOND)}: ${verdict(eventsPerSecond >= TARGET_EVENTS_PER_SECOND)})
  fetch + decode only       ${fmt(run.decoded)} logs in ${run.fetchSeconds.toFixed(2)} s (${fmt(run.decoded / run.fetchSeconds)} logs/s)
  ratio fetch+decode/index  ${ratio.toFixed(2)}  (target >= ${TARGET_RATIO}: ${verdict(ratio >= TARGET_RATIO)})
  ratio at most             ${(run.fetchSeconds / fastest).toFixed(2)} with this CPU time: on ${cores} cores it takes at least ${fastest.toFixed(2)} s
  peak RSS                  ${mb(run.peakRss)} MB  (target < ${TARGET_RSS_MB} MB: ${verdict(run.peakRss < TARGET_RSS_MB * 1024 * 1024)})
  store writes alone        ${fmt(store.versions)} entity versions in ${store.seconds.toFixed(2)} s: ${((100 * store.seconds) / budget).toFixed(0)}% of the ${budget.toFixed(2)} s a ratio of ${TARGET_RATIO} allows for all of indexing`);
  if (run.decoded !== run.events)
    console.log(`  note: fetch-only saw ${run.decoded} logs, the indexer ${run.events}`);

  const hashOnly = await indexAndFetch(input, input.rpcUrl, { transactions: 'hash-only' });
  console.log(`
the same with INDEXER_TRANSACTIONS=hash-only (transaction hash and index only: all our mappings read)
  events indexed            ${fmt(hashOnly.events)} in ${hashOnly.indexSeconds.toFixed(2)} s (${fmt(hashOnly.events / hashOnly.indexSeconds)} events/s)
  fetch + decode only       ${fmt(hashOnly.decoded)} logs in ${hashOnly.fetchSeconds.toFixed(2)} s
  ratio fetch+decode/index  ${(hashOnly.fetchSeconds / hashOnly.indexSeconds).toFixed(2)}`);

  const slow = await indexAndFetch(input, input.slowRpcUrl);
  console.log(`
the same, every RPC request delayed ${input.rpcLatencyMs} ms (a hosted provider's round trip)
  events indexed            ${fmt(slow.events)} in ${slow.indexSeconds.toFixed(2)} s (${fmt(slow.events / slow.indexSeconds)} events/s)
  fetch + decode only       ${fmt(slow.decoded)} logs in ${slow.fetchSeconds.toFixed(2)} s
  ratio fetch+decode/index  ${(slow.fetchSeconds / slow.indexSeconds).toFixed(2)}`);

  const pruned = await indexAndFetch(input, input.rpcUrl, {
    historyBlocks: PRUNED_HISTORY_BLOCKS,
    reorgThreshold: PRUNED_HISTORY_BLOCKS - 1,
  });
  console.log(`
the same keeping the last ${fmt(PRUNED_HISTORY_BLOCKS)} blocks of history (INDEXER_HISTORY_BLOCKS), anvil on loopback
  events indexed            ${fmt(pruned.events)} in ${pruned.indexSeconds.toFixed(2)} s (${fmt(pruned.events / pruned.indexSeconds)} events/s; ${(pruned.indexSeconds / run.indexSeconds).toFixed(2)}x the time keeping all)
  store holds               ${fmt(pruned.held.versions)} entity versions in ${mb(pruned.held.bytes)} MB of pages (keeping all history: ${fmt(run.held.versions)} in ${mb(run.held.bytes)} MB)`);

  const oneAhead = await sparseCatchUp(input, 1);
  const severalAhead = await sparseCatchUp(input, MAX_RANGES_AHEAD);
  console.log(`
catch-up over ${fmt(input.sparse.blocks)} empty blocks in ranges of ${SPARSE_RANGE}, every RPC request delayed ${input.rpcLatencyMs} ms
  the next range fetched during the current one  ${oneAhead.toFixed(2)} s
  up to ${MAX_RANGES_AHEAD} ranges fetched at once            ${severalAhead.toFixed(2)} s (${(oneAhead / severalAhead).toFixed(1)}x faster)`);

  console.log(`
a factory subgraph: funds registered over 50 blocks (one FundVault data source each), then ${fmt(FUND_SUBSCRIPTIONS)} subscription requests spread over them; synthetic chain on loopback`);
  const runs: [string, number, number | undefined][] = [
    ['', 3, undefined],
    ['', MANY_FUNDS, undefined],
    [' (every vault named)', MANY_FUNDS, Number.MAX_SAFE_INTEGER],
  ];
  for (const [label, funds, staticFiltersAbove] of runs) {
    const run = await indexManyFunds(funds, FUND_SUBSCRIPTIONS, { staticFiltersAbove });
    console.log(
      `  ${fmt(funds).padStart(6)} funds${label}  ${fmt(run.events)} events in ${run.seconds.toFixed(2)} s (${fmt(run.events / run.seconds)} events/s, ${fmt(run.getLogsCalls)} eth_getLogs calls); a restart loads the data sources and is at the head in ${run.restartSeconds.toFixed(2)} s`,
    );
  }
  console.log(
    `  past ${fmt(STATIC_FILTERS_ABOVE)} data sources the vaults' events are asked for from any address (INDEXER_STATIC_FILTERS_THRESHOLD)`,
  );
}

/**
 * Seconds to index the chain of empty blocks to its head through its delaying proxy (the data
 * sources' addresses hold no code there), at most `maxRangesAhead` ranges fetched at once.
 */
async function sparseCatchUp(input: MeasureInput, maxRangesAhead: number): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-sparse-'));
  const contracts = Object.fromEntries(
    Object.entries(input.contracts).map(([name, c]) => [name, { ...c, startBlock: 1 }]),
  );
  const indexer = await createIndexer({
    rpcUrl: input.sparse.rpcUrl,
    network: 'devnet',
    dataDir,
    port: 0,
    contracts,
    pollIntervalMs: 50,
    maxRange: SPARSE_RANGE,
    maxRangesAhead,
  });
  const started = performance.now();
  await indexer.start();
  await indexer.waitForHead();
  const seconds = (performance.now() - started) / 1000;
  await indexer.stop();
  rmSync(dataDir, { recursive: true, force: true });
  return seconds;
}

/** The entity versions of a store file and the bytes of its pages in use (a deleted row's page is free). */
function storeHeld(path: string): { versions: number; bytes: number } {
  const db = new Database(path, { readonly: true });
  try {
    const versions = entityTables(db).reduce(
      (sum, t) => sum + Number(db.prepare(`SELECT count(*) FROM "${t}"`).pluck().get()),
      0,
    );
    const pages =
      Number(db.pragma('page_count', { simple: true })) -
      Number(db.pragma('freelist_count', { simple: true }));
    return { versions, bytes: pages * Number(db.pragma('page_size', { simple: true })) };
  } finally {
    db.close();
  }
}

/**
 * The floor the store sets: the entity versions the run wrote, block by block, written again into a
 * fresh store through the same write buffer and commit cadence, with no chain and no handlers.
 * Only the store calls are timed (reading the versions back is not).
 */
function storeWritesAlone(indexedPath: string, dataDir: string): { versions: number; seconds: number } {
  const schema = parseSubgraphSchema(
    readFileSync(resolve(import.meta.dirname, '..', 'subgraph', 'schema.graphql'), 'utf8'),
  );
  const source = new Database(indexedPath, { readonly: true });
  source.defaultSafeIntegers(true);
  const store = openStore({
    path: join(dataDir, 'store-only.sqlite'),
    schema,
    startBlock: 0,
    deployment: 'store-only',
  });
  const blocks = source
    .prepare(`SELECT "number" FROM "__blocks" ORDER BY "number"`)
    .pluck()
    .all() as bigint[];
  const readers = [...store.layouts.values()].map((layout) => ({
    layout,
    atBlock: source.prepare(`SELECT * FROM ${layout.sql} WHERE "__from" = ? ORDER BY "__vid"`),
  }));
  let versions = 0;
  let sinceCommit = 0;
  let seconds = 0;
  for (const block of blocks) {
    const writes = readers.flatMap(({ layout, atBlock }) =>
      (atBlock.all(block) as Record<string, unknown>[]).map((row) => ({
        layout,
        id: idFromSql(layout.idKind, row.id),
        entity: rowToEntity(layout, row),
      })),
    );
    const started = performance.now();
    if (!store.transactionOpen) store.begin();
    const writer = store.blockWriter(Number(block));
    for (const { layout, id, entity } of writes) writer.set(layout.entity.name, id, entity);
    writer.flush();
    sinceCommit += writes.length;
    if (sinceCommit >= COMMIT_EVENTS) {
      store.commit();
      sinceCommit = 0;
    }
    seconds += (performance.now() - started) / 1000;
    versions += writes.length;
  }
  const started = performance.now();
  if (store.transactionOpen) store.commit();
  seconds += (performance.now() - started) / 1000;
  store.close();
  source.close();
  return { versions, seconds };
}

await measure(JSON.parse(process.argv[2]!) as MeasureInput);
