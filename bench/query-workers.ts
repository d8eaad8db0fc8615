// `npm run bench:query-workers`: what a slow subgraph query costs the embedded indexer's own thread
// (which indexes, and under `npm start` serves the REST API too). In one run, over the devnet
// scenario: the thread's event loop delay (perf_hooks.monitorEventLoopDelay: max and p99) while it
// idles, while a client sends slow queries one after another to the query service, which runs them
// on its query workers, and while the same queries run on this thread, as they did before those
// workers; with the queries answered and their mean time in each. A second client meanwhile asks
// the service for `_meta` every 100 ms, as the gateway's health check does: its times are the wait
// a cheap query has behind a slow one (the second query worker starts within the second row, once).
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { buildApiSchema } from '../indexer/query/api-schema.ts';
import { executeQuery } from '../indexer/query/execute-query.ts';
import { buildQueryModel } from '../indexer/query/sql-query.ts';
import { StoreReader } from '../indexer/query/store-reader.ts';
import { buildLayouts } from '../indexer/store/layout.ts';
import { parseSubgraphSchema } from '../indexer/subgraph-schema.ts';
import { withIndexedDevnet } from './indexed-devnet.ts';
import { benchSetting } from './settings.ts';

const PHASE_SECONDS = benchSetting('BENCH_DURATION_SECONDS', 10);
/** filters per slow query, each reading every event and matching none */
const SCANS = benchSetting('BENCH_QUERY_SCANS', 300);

const SLOW_QUERY = `{ ${Array.from(
  { length: SCANS },
  (_, i) => `s${i}: protocolEvents(where: { args_contains: "absent" }) { id }`,
).join(' ')} }`;
const META_QUERY = '{ _meta { block { number } } }';

const ms = (nanoseconds: number) => (nanoseconds / 1e6).toFixed(1);

interface Figures {
  max: string;
  p99: string;
  queries: number;
  meanMs: string;
  metaP50: string;
  metaP99: string;
}

async function post(url: string, query: string): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const answer = (await res.json()) as { errors?: unknown[] };
  if (answer.errors) throw new Error(`the query failed: ${JSON.stringify(answer.errors)}`);
}

/**
 * The event loop's delay for PHASE_SECONDS while `runQuery` (null: nothing) runs again and again,
 * and a client asks for `_meta` every 100 ms.
 */
async function phase(url: string, runQuery: (() => Promise<void>) | null): Promise<Figures> {
  const delay = monitorEventLoopDelay();
  const metaTimes: number[] = [];
  const ends = performance.now() + PHASE_SECONDS * 1000;
  delay.enable();
  const meta = (async () => {
    while (performance.now() < ends) {
      const started = performance.now();
      await post(url, META_QUERY);
      metaTimes.push(performance.now() - started);
      await sleep(100);
    }
  })();
  let queries = 0;
  let queryMs = 0;
  while (performance.now() < ends) {
    if (!runQuery) {
      await sleep(100);
      continue;
    }
    const started = performance.now();
    await runQuery();
    queryMs += performance.now() - started;
    queries++;
  }
  await meta;
  delay.disable();
  metaTimes.sort((a, b) => a - b);
  return {
    max: ms(delay.max),
    p99: ms(delay.percentile(99)),
    queries,
    meanMs: queries ? (queryMs / queries).toFixed(0) : '-',
    metaP50: metaTimes[Math.floor(metaTimes.length * 0.5)]!.toFixed(1),
    metaP99: metaTimes[Math.floor(metaTimes.length * 0.99)]!.toFixed(1),
  };
}

await withIndexedDevnet('bench-query-workers-', async (_, indexer) => {
  const url = indexer.queryUrl;

  // the query API as the indexer's thread served it before the query workers
  const schema = parseSubgraphSchema(readFileSync('subgraph/schema.graphql', 'utf8'));
  const reader = new StoreReader(indexer.storePath, indexer.deployment, 1);
  const api = { schema: buildApiSchema(buildQueryModel(schema, buildLayouts(schema))), subgraphErrors: true };

  const idle = await phase(url, null);
  const onWorkers = await phase(url, () => post(url, SLOW_QUERY));
  const onThisThread = await phase(url, async () => {
    const answer = executeQuery({ ...api, reader }, { query: SLOW_QUERY });
    if (answer.errors) throw new Error(`the query failed: ${JSON.stringify(answer.errors)}`);
    // lets the timers and the `_meta` client run between two queries, as HTTP requests would
    await yieldToLoop();
  });
  reader.close();

  const row = (label: string, f: Figures) =>
    `  ${label.padEnd(44)}${f.max.padStart(9)}${f.p99.padStart(9)}${String(f.queries).padStart(9)}${f.meanMs.padStart(9)}${f.metaP50.padStart(11)}${f.metaP99.padStart(11)}`;
  console.log(
    [
      '',
      `slow query: ${SCANS} filters, each reading every ProtocolEvent of the scenario; ${PHASE_SECONDS} s per row`,
      `${'event loop delay of the indexer thread, ms'.padEnd(46)}${'max'.padStart(9)}${'p99'.padStart(9)}${'queries'.padStart(9)}${'mean ms'.padStart(9)}${'_meta p50'.padStart(11)}${'_meta p99'.padStart(11)}`,
      row('idle', idle),
      row('slow queries on the query workers', onWorkers),
      row('the same on the indexer thread, as before', onThisThread),
    ].join('\n'),
  );
});
