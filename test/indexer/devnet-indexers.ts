// Indexers of the fund subgraph over a test's own chain (a devnet deployment, or the synthetic
// chain of the log-density node), each in a temporary data directory, for end-to-end tests that
// start several (the one under test and fresh ones to compare with); stopAll() stops every one and
// removes the directories.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIndexer, type Indexer, type IndexerConfig } from '../../indexer/indexer.ts';
import type { NetworkContract } from '../../indexer/runtime/manifest.ts';

export interface DevnetIndexers {
  /** an indexer of the contracts through `rpcUrl`, started; `options` adds to or overrides the defaults */
  start(rpcUrl: string, options?: Partial<IndexerConfig>): Promise<Indexer>;
  stopAll(): Promise<void>;
}

export function devnetIndexers(
  contracts: () => Record<string, NetworkContract>,
  dirPrefix: string,
): DevnetIndexers {
  const dirs: string[] = [];
  const indexers: Indexer[] = [];
  return {
    async start(rpcUrl, options = {}) {
      const dataDir = mkdtempSync(join(tmpdir(), dirPrefix));
      dirs.push(dataDir);
      const indexer = await createIndexer({
        rpcUrl,
        network: 'devnet',
        dataDir,
        port: 0,
        contracts: contracts(),
        pollIntervalMs: 20,
        log: () => undefined,
        ...options,
      });
      indexers.push(indexer);
      await indexer.start();
      return indexer;
    },
    async stopAll() {
      // a failing stop (an indexer whose RPC is gone) must not keep the others running
      for (const indexer of indexers) await indexer.stop().catch(() => undefined);
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}
