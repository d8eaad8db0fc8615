// Indexers of the fund subgraph over a test's own chain (a devnet deployment, or the synthetic
// chain of the log-density node), each in a temporary data directory, for end-to-end tests that
// start several (the one under test and fresh ones to compare with); stopAll() stops every one and
// removes the directories. waitFor is how such tests await what an indexer does next.
import { vi } from 'vitest';
import { createIndexer, type Indexer, type IndexerConfig } from '../../indexer/indexer.ts';
import type { NetworkContract } from '../../indexer/runtime/manifest.ts';
import { tempDirs } from './child-indexer.ts';

/** `check` retried until it passes: an event awaited, with room for a loaded machine */
export const waitFor = <T>(check: () => T | Promise<T>): Promise<T> =>
  vi.waitFor(check, { timeout: 20_000, interval: 10 });

export interface DevnetIndexers {
  /** an indexer of the contracts through `rpcUrl`, started; `options` adds to or overrides the defaults */
  start(rpcUrl: string, options?: Partial<IndexerConfig>): Promise<Indexer>;
  stopAll(): Promise<void>;
}

export function devnetIndexers(
  contracts: () => Record<string, NetworkContract>,
  dirPrefix: string,
): DevnetIndexers {
  const dirs = tempDirs();
  const indexers: Indexer[] = [];
  return {
    async start(rpcUrl, options = {}) {
      const dataDir = dirs.make(dirPrefix);
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
      dirs.removeAll();
    },
  };
}
