// The indexer part of the shared test harness: runs the embedded indexer (real subgraph wasm, real
// SQLite, real HTTP) over the harness devnet until it reaches the head, and keeps it following.
// global-setup.ts provides the result to every suite as 'indexer'.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Deployment } from '../../devnet/deploy.ts';
import { createIndexer } from '../../indexer/indexer.ts';
import type { NetworkContract } from '../../indexer/runtime/manifest.ts';
import type { DevnetFixture } from './devnet.ts';

export interface IndexerFixture {
  /** graph-node-dialect endpoint: http://127.0.0.1:<port>/subgraphs/name/fund-protocol */
  queryUrl: string;
  deployment: string;
  /** the SQLite file (tests may open it read-only) */
  storePath: string;
  /** the block the indexer had reached when the suites started (the devnet head) */
  indexedBlock: number;
}

/** The subgraph's static data sources at a devnet deployment's addresses. */
export function devnetContracts(deployment: Deployment): Record<string, NetworkContract> {
  const at = (address: string) => ({ address, startBlock: deployment.startBlock });
  return {
    FundRegistry: at(deployment.contracts.fundRegistry),
    NavOracle: at(deployment.contracts.navOracle),
    DividendDistributor: at(deployment.contracts.dividendDistributor),
  };
}

export async function startIndexerFixture(
  devnet: DevnetFixture,
): Promise<{ fixture: IndexerFixture; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fund-indexer-'));
  const indexer = await createIndexer({
    rpcUrl: devnet.rpcUrl,
    network: 'devnet',
    dataDir,
    port: 0,
    contracts: devnetContracts(devnet.deployment),
    pollIntervalMs: 250,
    log: (line) => console.log(`[harness] indexer: ${line}`),
  });
  try {
    await indexer.start();
    await indexer.waitForHead();
  } catch (error) {
    await indexer.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const status = indexer.status();
  console.log(
    `[harness] indexer ${indexer.queryUrl} at block ${status.checkpoint} (${status.events} events)`,
  );
  return {
    fixture: {
      queryUrl: indexer.queryUrl,
      deployment: indexer.deployment,
      storePath: indexer.storePath,
      indexedBlock: status.checkpoint,
    },
    async stop() {
      await indexer.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
