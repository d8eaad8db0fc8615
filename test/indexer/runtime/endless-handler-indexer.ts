// An indexer of the probe subgraph in a process of its own, for execution-budget.test.ts: a handler
// that never ends holds the thread it runs on, so the test's process must not be that thread (a
// regression then fails the test instead of hanging it). Takes { rpcUrl, contracts, dataDir } as
// JSON in its argument and prints its query endpoint once it serves.
import { createIndexer } from '../../../indexer/indexer.ts';
import type { NetworkContract } from '../../../indexer/runtime/manifest.ts';
import { buildProbeSubgraph } from '../probe-build.ts';

const { rpcUrl, contracts, dataDir } = JSON.parse(process.argv[2] ?? '') as {
  rpcUrl: string;
  contracts: Record<string, NetworkContract>;
  dataDir: string;
};
const indexer = await createIndexer({
  rpcUrl,
  network: 'devnet',
  port: 0,
  buildDir: buildProbeSubgraph(),
  contracts,
  pollIntervalMs: 20,
  log: () => undefined,
  dataDir,
});
await indexer.start();
console.log(`query endpoint: ${indexer.queryUrl}`);
