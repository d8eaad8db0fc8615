// `npm run bench`: in one run, a plain Express route serving the very bytes of a fund's NAV
// history against the REST route that produces them (route table, parameter checks, cache,
// ETag, CORS, security and freshness headers). Prints requests/s of each, their ratio, p99
// latency and RSS, and the 304 path. Target on warm caches: ratio >= 0.85.
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express, { type Express } from 'express';
import { createGateway } from '../gateway/server.ts';
import { loadRegistry } from '../gateway/sources/registry.ts';
import { createRestApp } from '../rest/app.ts';
import { withIndexedDevnet } from './indexed-devnet.ts';
import { benchSetting } from './settings.ts';

const DURATION_SECONDS = benchSetting('BENCH_DURATION_SECONDS', 10);
const CONNECTIONS = benchSetting('BENCH_CONNECTIONS', 10);
/** the two servers alternate over several rounds so drift in machine load hits both alike */
const ROUNDS = benchSetting('BENCH_ROUNDS', 2);

async function serve(app: Express): Promise<{ url: string; close(): void }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

interface Figures {
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
}

async function load(url: string, headers: Record<string, string> = {}): Promise<Figures> {
  // a short warm-up so JIT, caches and sockets are settled before measuring
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_SECONDS, headers });
  return { requestsPerSecond: result.requests.average, p99Ms: result.latency.p99, non2xx: result.non2xx };
}

await withIndexedDevnet('bench-rest-', async ({ anvil, ledger, dataDir }, indexer) => {
  const gateway = createGateway({
    registry: loadRegistry('registry/devnet.json'),
    subgraph: { url: indexer.queryUrl, timeoutMs: 10_000, maxBatch: 1000 },
    chain: { rpcUrl: anvil.rpcUrl, timeoutMs: 10_000, maxBatch: 500 },
    distributions: { base: dataDir, timeoutMs: 5_000, cacheSize: 16 },
  });
  // rate limits off: the benchmark is one client sending as fast as it can
  const rest = await serve(
    createRestApp({ gateway, trustProxy: false, rateLimit: false, responseCacheEntries: 10_000 }),
  );
  const slug = ledger.funds[0]?.slug as string;
  const path = `/v1/funds/${slug}/nav/history`;
  const first = await fetch(`${rest.url}${path}`);
  const bytes = Buffer.from(await first.arrayBuffer());
  const etag = first.headers.get('etag') as string;

  const plainApp = express();
  plainApp.get(path, (_req, res) => {
    res.type('application/json').send(bytes);
  });
  const plain = await serve(plainApp);

  console.log(
    `\nGET ${path}: ${bytes.length} bytes, ${CONNECTIONS} connections, ${DURATION_SECONDS} s per run, ${ROUNDS} alternating rounds\n`,
  );
  const plainRuns: Figures[] = [];
  const restRuns: Figures[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    plainRuns.push(await load(`${plain.url}${path}`));
    restRuns.push(await load(`${rest.url}${path}`));
  }
  const notModified = await load(`${rest.url}${path}`, { 'If-None-Match': etag });
  const mean = (runs: Figures[]): Figures => ({
    requestsPerSecond: runs.reduce((sum, f) => sum + f.requestsPerSecond, 0) / runs.length,
    p99Ms: Math.max(...runs.map((f) => f.p99Ms)),
    non2xx: runs.reduce((sum, f) => sum + f.non2xx, 0),
  });
  const plainFigures = mean(plainRuns);
  const restFigures = mean(restRuns);
  const rssMb = process.memoryUsage().rss / 1024 / 1024;

  // requests/s: mean over the rounds; p99: the worst round
  const row = (name: string, f: Figures) =>
    `${name.padEnd(26)} ${f.requestsPerSecond.toFixed(0).padStart(8)} req/s   p99 ${String(f.p99Ms).padStart(4)} ms${
      f.non2xx ? `   (${f.non2xx} non-2xx)` : ''
    }`;
  console.log(row('plain Express (same JSON)', plainFigures));
  console.log(row('REST NAV history (200)', restFigures));
  console.log(row('REST NAV history (304)', notModified));
  const ratio = restFigures.requestsPerSecond / plainFigures.requestsPerSecond;
  console.log(
    `\nratio REST / plain: ${ratio.toFixed(3)} (target >= 0.85)${ratio >= 0.85 ? '' : '  BELOW TARGET'}`,
  );
  console.log(`304 / plain: ${(notModified.requestsPerSecond / plainFigures.requestsPerSecond).toFixed(3)}`);
  console.log(
    `RSS: ${rssMb.toFixed(0)} MB (benchmark process: devnet client, indexer, gateway, REST and load generator)`,
  );

  plain.close();
  rest.close();
});
