// `npm run bench:load`: mixed traffic over every endpoint from many client addresses against the
// whole service as `npm start` runs it (devnet mode in a child process: anvil, scenario, embedded
// indexer, gateway, REST, default rate limits, TRUST_PROXY=1 so X-Forwarded-For names the client).
// Loopback only, bounded in time: LOAD_SECONDS (default 20). SOAK_SECONDS runs that long instead and
// samples the service's RSS every SOAK_SAMPLE_SECONDS (default 5), together with the heap that
// survives a forced full GC (the service runs with --expose-gc and bench/heap-probe.ts preloaded),
// so lazy V8 heap growth and bounded caches filling up can be told apart from a leak.
// Prints throughput, p50/p99 latency, a status histogram, the error count (5xx, socket errors,
// timeouts) and the service's RSS at start and end.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { loadServiceConfig } from '../rest/service-config.ts';
import { benchSetting } from './settings.ts';

declare module 'autocannon' {
  interface Options {
    requests?: { setupRequest(request: { path: string; headers?: Record<string, string> }): unknown }[];
    timeout?: number;
  }
  interface Histogram {
    total: number;
  }
  interface Result {
    timeouts: number;
    statusCodeStats: Record<string, { count: number }>;
  }
}

const SOAK_SECONDS = benchSetting('SOAK_SECONDS', 0, 0);
const DURATION_SECONDS = SOAK_SECONDS || benchSetting('LOAD_SECONDS', 20);
const SAMPLE_SECONDS = benchSetting('SOAK_SAMPLE_SECONDS', 5);
const CONNECTIONS = benchSetting('LOAD_CONNECTIONS', 50);
/** distinct client addresses; each stays under the per-IP limits at these rates */
const CLIENTS = benchSetting('LOAD_CLIENTS', 5000);

const repoRoot = resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(join(tmpdir(), 'bench-load-'));
const probe = SOAK_SECONDS ? ['--expose-gc', '--import', './bench/heap-probe.ts'] : [];
const serviceEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', TRUST_PROXY: '1' };
/** the configuration the service reads from that environment: the bounds of its memory */
const serviceConfig = loadServiceConfig(serviceEnv);
const service = spawn(process.execPath, ['--import', 'tsx', ...probe, 'main.ts'], {
  cwd: repoRoot,
  env: serviceEnv,
  stdio: ['ignore', 'pipe', 'inherit', ...(SOAK_SECONDS ? ['ipc' as const] : [])],
});
const stop = () => {
  service.kill('SIGTERM');
  return new Promise<void>((r) => (service.exitCode !== null ? r() : service.once('exit', () => r())));
};

function rssMiB(): number {
  const status = readFileSync(`/proc/${service.pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

const MiB = (bytes: number) => Math.round(bytes / 2 ** 20);
/** the service's heap after a forced full GC (soak mode only), in MiB */
function heapAfterGcMiB(): Promise<{ heapUsed: number; external: number }> {
  return new Promise((answer) => {
    service.once('message', (m) => {
      const usage = m as { heapUsed: number; external: number };
      answer({ heapUsed: MiB(usage.heapUsed), external: MiB(usage.external) });
    });
    service.send('heap');
  });
}

async function json<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { 'X-Forwarded-For': '192.0.2.1' } });
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  return (await response.json()) as T;
}

try {
  console.log('starting the service (devnet: anvil, scenario, indexer, gateway, REST)...');
  const base = await new Promise<string>((ready, fail) => {
    createInterface({ input: service.stdout! }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) ready(m[1]!);
    });
    service.once('exit', (code) => fail(new Error(`the service exited with ${code}`)));
  });

  // what the traffic draws from: every fund, strategy, round, leaf and tracked contract
  const funds = (await json<{ items: { slug: string }[] }>(`${base}/v1/funds`)).items.map((f) => f.slug);
  const strategies = (await json<{ items: { slug: string }[] }>(`${base}/v1/strategies`)).items.map(
    (s) => s.slug,
  );
  const contracts = (await json<{ items: { address: string }[] }>(`${base}/v1/contracts`)).items.map(
    (c) => c.address,
  );
  const rounds: { fund: string; epoch: number; account: string }[] = [];
  for (const fund of funds) {
    const page = await json<{ items: { epoch: number; uri: string }[] }>(
      `${base}/v1/funds/${fund}/dividends?limit=100`,
    );
    for (const round of page.items) {
      const dump = JSON.parse(readFileSync(join(dataDir, 'devnet', round.uri), 'utf8')) as {
        values: { value: string[] }[];
      };
      rounds.push({ fund, epoch: round.epoch, account: dump.values[0]!.value[0]! });
    }
  }
  const events = ['NavPublished', 'EpochSettled', 'DividendClaimed', 'SubscriptionRequested'];
  const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)]!;
  const int = (n: number) => Math.floor(Math.random() * n);

  const mix: (() => string)[] = [
    () => '/v1/protocol',
    () => '/v1/contracts',
    () => '/v1/policies',
    () => '/v1/health',
    () => '/v1/funds',
    () => `/v1/funds/${pick(funds)}`,
    () => `/v1/funds/${pick(funds)}/nav`,
    () => `/v1/funds/${pick(funds)}/nav/history?from=${int(60)}&limit=${1 + int(120)}`,
    () => `/v1/funds/${pick(funds)}/allocations`,
    () => `/v1/funds/${pick(funds)}/reserve`,
    () => `/v1/funds/${pick(funds)}/dividends?limit=${1 + int(10)}`,
    () => {
      const r = pick(rounds);
      return `/v1/funds/${r.fund}/dividends/${r.epoch}`;
    },
    () => {
      const r = pick(rounds);
      return `/v1/funds/${r.fund}/dividends/${r.epoch}/proof?address=${r.account}`;
    },
    () => '/v1/strategies',
    () => `/v1/strategies/${pick(strategies)}`,
    () => `/v1/events?limit=${1 + int(50)}&eventName=${pick(events)}`,
    () => `/v1/events?contract=${pick(contracts)}&limit=20`,
    // a few malformed requests, as real traffic has: they must stay cheap 4xx
    () => `/v1/funds/${pick(funds)}/nav/history?limit=9999`,
    () => '/v1/funds/no-such-fund',
  ];
  const clientIp = () => {
    const n = int(CLIENTS);
    return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  };

  // RSS is read before the forced GC, so it shows what the service holds under load
  const sample = async (second: number) => ({ second, rss: rssMiB(), ...(await heapAfterGcMiB()) });
  const series: { second: number; rss: number; heapUsed: number; external: number }[] = [];
  const rssStart = rssMiB();
  if (SOAK_SECONDS) series.push(await sample(0));
  const started = Date.now();
  const sampler = SOAK_SECONDS
    ? setInterval(
        () => void sample(Math.round((Date.now() - started) / 1000)).then((s) => series.push(s)),
        SAMPLE_SECONDS * 1000,
      )
    : undefined;
  console.log(
    `load: ${DURATION_SECONDS} s, ${CONNECTIONS} connections, ${mix.length} request kinds over 16 endpoints, ${CLIENTS} client addresses`,
  );
  const result = await autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: DURATION_SECONDS,
    timeout: 10,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          path: pick(mix)(),
          headers: { ...request.headers, 'X-Forwarded-For': clientIp() },
        }),
      },
    ],
  });
  if (sampler) clearInterval(sampler);
  const rssEnd = rssMiB();
  if (SOAK_SECONDS) series.push(await sample(DURATION_SECONDS));

  const statuses = Object.entries(result.statusCodeStats ?? {})
    .map(([code, { count }]) => `${code}: ${count}`)
    .join(', ');
  const fiveXx = Object.entries(result.statusCodeStats ?? {})
    .filter(([code]) => code.startsWith('5'))
    .reduce((sum, [, { count }]) => sum + count, 0);
  console.log(`
requests/s     ${result.requests.average.toFixed(0)} (total ${result.requests.total})
latency        p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms
statuses       ${statuses}
errors         ${fiveXx + result.errors + result.timeouts} (5xx ${fiveXx}, socket errors ${result.errors}, timeouts ${result.timeouts})
service RSS    start ${rssStart} MiB, end ${rssEnd} MiB`);
  if (SOAK_SECONDS) {
    console.log(`RSS            ${series.map((s) => `${s.second}s:${s.rss}`).join(' ')} (MiB)`);
    console.log(`heap after GC  ${series.map((s) => `${s.second}s:${s.heapUsed}`).join(' ')} (MiB)`);
    console.log(`external       ${series.map((s) => `${s.second}s:${s.external}`).join(' ')} (MiB)`);
    console.log(
      `bounds         response cache ${serviceConfig.responseCacheEntries} entries and ${MiB(serviceConfig.responseCacheBytes)} MiB of bodies; rate-limit counters: one per address per limiter, dropped each window; ${process.env.NODE_OPTIONS ?? 'no NODE_OPTIONS'}`,
    );
  }
} finally {
  await stop();
  rmSync(dataDir, { recursive: true, force: true });
}
