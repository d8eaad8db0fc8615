// `npm run bench:indexer`: how fast the embedded indexer indexes the large devnet scenario, compared
// with the floor set by the chain itself: fetching and decoding the same logs and doing nothing else.
// This half generates the scenario (SCENARIO_* variables size it; the defaults here give 100,000+
// indexed events), a second anvil holding only empty blocks for the sparse catch-up, and the proxies
// that put both at a hosted provider's distance; indexing and measuring run in a child process (bench/indexer-measure.ts, from the bundle `npm run build`
// makes) so that its peak RSS is the indexer's own.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { startAnvil, type AnvilInstance } from '../devnet/anvil.ts';
import { compileContracts } from '../devnet/compile.ts';
import { createRpcClient } from '../devnet/rpc.ts';
import { scenarioParamsFromEnv } from '../devnet/scenario-params.ts';
import { startDevnet } from '../devnet/start-devnet.ts';
import { startFaultProxy, type FaultProxy } from '../test/reliability/servers/fault-proxy.ts';
import type { MeasureInput } from './indexer-measure.ts';

const INDEXER_HEAP_MB = 160;
const INDEXER_SEMI_SPACE_MB = 4;
/** added to every RPC request in the second run */
const RPC_LATENCY_MS = 50;
/** length of the chain of empty blocks the sparse catch-up indexes */
const SPARSE_BLOCKS = 1_000;
/** what `npm run build` bundles bench/indexer-measure.ts into */
const MEASURE_BUNDLE = resolve(import.meta.dirname, '..', 'build', 'bench-indexer-measure.mjs');

/** Scenario size for the benchmark unless SCENARIO_* variables say otherwise. */
const benchScenario: Record<string, string> = {
  SCENARIO_EPOCHS: '100',
  SCENARIO_INVESTORS: '700',
  SCENARIO_REQUESTS_PER_EPOCH: '650',
};

async function main(): Promise<void> {
  for (const [name, value] of Object.entries(benchScenario)) process.env[name] ??= value;
  compileContracts();
  const { anvil, deployment, ledger, stop } = await startDevnet({
    tempDirPrefix: 'bench-devnet-',
    scenario: (dataDir) => {
      const params = scenarioParamsFromEnv(process.env, dataDir);
      console.log(`generating the scenario: ${JSON.stringify({ ...params, dataDir: undefined })}`);
      return params;
    },
  });
  console.log(
    `scenario: ${ledger.trackedEvents.toLocaleString('en-US')} tracked events of ${ledger.totalEvents.toLocaleString('en-US')} in ${(ledger.seedingMs / 1000).toFixed(0)} s`,
  );
  let sparseAnvil: AnvilInstance | null = null;
  let proxy: FaultProxy | null = null;
  let sparseProxy: FaultProxy | null = null;
  try {
    // a second chain of empty blocks only, for the catch-up over a sparse stretch (anvil mines empty
    // blocks quickly on a fresh chain, and slowly on one holding the scenario's state)
    sparseAnvil = await startAnvil();
    await createRpcClient(sparseAnvil.rpcUrl).request('anvil_mine', [`0x${SPARSE_BLOCKS.toString(16)}`]);
    sparseProxy = await startFaultProxy(sparseAnvil.rpcUrl);
    sparseProxy.set({ kind: 'delay', ms: RPC_LATENCY_MS });
    const at = (address: string) => ({ address, startBlock: deployment.startBlock });
    proxy = await startFaultProxy(anvil.rpcUrl);
    proxy.set({ kind: 'delay', ms: RPC_LATENCY_MS });
    const input: MeasureInput = {
      rpcUrl: anvil.rpcUrl,
      slowRpcUrl: proxy.url,
      rpcLatencyMs: RPC_LATENCY_MS,
      sparse: { rpcUrl: sparseProxy.url, blocks: SPARSE_BLOCKS },
      contracts: {
        FundRegistry: at(deployment.contracts.fundRegistry),
        NavOracle: at(deployment.contracts.navOracle),
        DividendDistributor: at(deployment.contracts.dividendDistributor),
      },
      vaults: deployment.funds.map((f) => f.vault),
    };
    // The indexing process caps its heap, as a deployment would: V8 otherwise grows the heap with
    // short-lived garbage long before it collects it (live data stays far below the cap), and its
    // default 32 MB young generation alone would add some 25 MB to the peak.
    const nodeFlags = [
      `--max-old-space-size=${INDEXER_HEAP_MB}`,
      `--max-semi-space-size=${INDEXER_SEMI_SPACE_MB}`,
    ];
    console.log(`indexing in a child process: node ${nodeFlags.join(' ')}`);
    const child = spawn(process.execPath, [...nodeFlags, MEASURE_BUNDLE, JSON.stringify(input)], {
      stdio: 'inherit',
    });
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`the measuring process exited with ${code}`);
  } finally {
    await proxy?.close();
    await sparseProxy?.close();
    await stop();
    await sparseAnvil?.stop();
  }
}

await main();
