// The devnet scenario seeded (SCENARIO_* resize it) and indexed by the embedded indexer, for the
// benchmarks that measure what is served from it (rest.ts, query-workers.ts): `measure` runs once
// the indexer has every block of the scenario, and both stop after it, whatever it came to.
import { scenarioParamsFromEnv } from '../devnet/scenario-params.ts';
import { startDevnet, type SeededDevnet } from '../devnet/start-devnet.ts';
import { createIndexer, type Indexer } from '../indexer/indexer.ts';

export async function withIndexedDevnet(
  tempDirPrefix: string,
  measure: (devnet: SeededDevnet, indexer: Indexer) => Promise<void>,
): Promise<void> {
  console.log('seeding the devnet scenario and indexing it...');
  const devnet = await startDevnet({
    tempDirPrefix,
    scenario: (dataDir) => scenarioParamsFromEnv(process.env, dataDir),
  });
  try {
    const indexer = await createIndexer({
      rpcUrl: devnet.anvil.rpcUrl,
      network: 'devnet',
      dataDir: devnet.dataDir,
      port: 0,
      log: () => {},
    });
    await indexer.start();
    try {
      await indexer.waitForBlock(devnet.ledger.endBlock);
      await measure(devnet, indexer);
    } finally {
      await indexer.stop();
    }
  } finally {
    await devnet.stop();
  }
}
