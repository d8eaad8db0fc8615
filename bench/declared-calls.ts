// `npm run bench:declared-calls`: what declared eth calls save. The host-probe subgraph indexes
// blocks of Probe events whose handler reads lengthOf(input) from the emitter, a different read for
// each event: once from its ProbeEmitter data source (nothing declared: each read is a round trip
// the handler waits for) and once from DeclaredCalls (the same handler with its reads declared:
// made in batches with each range, while the range before runs), side by side in one run, on
// loopback and behind a proxy that delays every request as a hosted RPC's round trip does. Both
// runs must store the same.
import { performance } from 'node:perf_hooks';
import {
  probeHandledBy,
  startProbeChain,
  startProbeIndexer,
  type ProbeChain,
} from '../test/indexer/probe-chain.ts';
import { startFaultProxyProcess } from '../test/reliability/servers/fault-proxy-process.ts';

const BLOCKS = 20;
const EVENTS_PER_BLOCK = 25;
const LATENCY_MS = 50;

type Source = 'ProbeEmitter' | 'DeclaredCalls';

interface Run {
  seconds: number;
  /** output by input of the lengthOf probes */
  outputs: Map<string, string>;
}

async function index(chain: ProbeChain, source: Source, rpcUrl: string): Promise<Run> {
  const started = performance.now();
  const running = await startProbeIndexer(chain, rpcUrl, {
    log: () => undefined,
    contracts: probeHandledBy(chain, source),
  });
  try {
    await running.indexer.waitForHead();
    const seconds = (performance.now() - started) / 1000;
    const response = await fetch(running.indexer.queryUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ probeResults(first: 1000, where: { kind: 37 }) { input output } }' }),
    });
    const { data } = (await response.json()) as {
      data: { probeResults: { input: string; output: string }[] };
    };
    return { seconds, outputs: new Map(data.probeResults.map((r) => [r.input, r.output])) };
  } finally {
    await running.stop();
  }
}

const sameOutputs = (a: Run, b: Run) =>
  a.outputs.size === BLOCKS * EVENTS_PER_BLOCK &&
  a.outputs.size === b.outputs.size &&
  [...a.outputs].every(([input, output]) => b.outputs.get(input) === output);

const chain = await startProbeChain();
try {
  for (let b = 0; b < BLOCKS; b++) {
    await chain.probesInOneBlock(
      Array.from({ length: EVENTS_PER_BLOCK }, (_, e) => ({
        kind: 37,
        input: `block ${b} event ${e}`.repeat(1 + (e % 3)),
      })),
    );
  }
  const proxy = await startFaultProxyProcess(chain.anvil.rpcUrl);
  await proxy.set({ kind: 'delay', ms: LATENCY_MS });
  const rows: [string, Run, Run][] = [];
  rows.push([
    'anvil on loopback',
    await index(chain, 'ProbeEmitter', chain.anvil.rpcUrl),
    await index(chain, 'DeclaredCalls', chain.anvil.rpcUrl),
  ]);
  const before = (await proxy.rpcRequests()).length;
  const slowPlain = await index(chain, 'ProbeEmitter', proxy.url);
  const between = (await proxy.rpcRequests()).length;
  const slowDeclared = await index(chain, 'DeclaredCalls', proxy.url);
  const requests = await proxy.rpcRequests();
  rows.push([`every request delayed ${LATENCY_MS} ms`, slowPlain, slowDeclared]);
  await proxy.close();

  const ethCalls = (from: number, to: number) =>
    requests.slice(from, to).filter((r) => r.some((c) => c.method === 'eth_call')).length;
  console.log(`
declared eth calls: ${BLOCKS} blocks of ${EVENTS_PER_BLOCK} Probe events, each handler reading lengthOf(input)
                                reads undeclared   declared   faster   same results`);
  for (const [label, plain, declared] of rows) {
    console.log(
      `  ${label.padEnd(28)}  ${plain.seconds.toFixed(2).padStart(8)} s  ${declared.seconds.toFixed(2).padStart(8)} s  ${(plain.seconds / declared.seconds).toFixed(1).padStart(5)}x   ${sameOutputs(plain, declared) ? 'yes' : 'NO'}`,
    );
  }
  console.log(
    `  HTTP requests carrying eth_calls (delayed runs): ${ethCalls(before, between)} undeclared, ${ethCalls(between, requests.length)} declared`,
  );
} finally {
  await chain.stop();
}
