// The many-funds part of `npm run bench:indexer`: what a factory subgraph costs as its registry
// creates thousands of template instances (a protocol with many funds, a DEX with many pairs). A
// synthetic chain served on loopback registers `funds` vaults through the FundRegistry over 50
// blocks, then holds the same subscription requests spread over them; the indexer runs it from
// scratch, and then starts again on the finished store, which loads every persisted data source.
// Past 10,000 data sources the follower asks for the vaults' events from any address (graph-node's
// static filters); a run with the threshold out of reach names every vault, for comparison.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createIndexer } from '../indexer/indexer.ts';
import { startLogDensityNode, type SyntheticLog } from '../test/indexer/log-density-node.ts';
import {
  SYNTHETIC_CONTRACTS,
  fundRegistered,
  subscriptionRequested,
} from '../test/indexer/synthetic-funds.ts';

const REGISTRATION_BLOCKS = 50;
const SUBSCRIPTIONS_PER_BLOCK = 100;

interface ManyFundsRun {
  funds: number;
  events: number;
  seconds: number;
  /** starting again on the finished store until it reports the head indexed */
  restartSeconds: number;
  /** eth_getLogs calls the first run made (an address list split in parts makes several) */
  getLogsCalls: number;
}

/** Indexes `funds` registrations, then `subscriptions` requests spread over the funds. */
export async function indexManyFunds(
  funds: number,
  subscriptions: number,
  options: { staticFiltersAbove?: number } = {},
): Promise<ManyFundsRun> {
  const perRegistrationBlock = Math.ceil(funds / REGISTRATION_BLOCKS);
  const registrationBlocks = Math.ceil(funds / perRegistrationBlock);
  const head = registrationBlocks + Math.ceil(subscriptions / SUBSCRIPTIONS_PER_BLOCK);
  const fundAt = (n: number, i: number) => (n - 1) * perRegistrationBlock + i;
  const requestAt = (n: number, i: number) => (n - registrationBlocks - 1) * SUBSCRIPTIONS_PER_BLOCK + i;
  const logsInBlock = (n: number): number => {
    if (n < 1 || n > head) return 0;
    if (n <= registrationBlocks) return Math.min(perRegistrationBlock, funds - fundAt(n, 0));
    return Math.min(SUBSCRIPTIONS_PER_BLOCK, subscriptions - requestAt(n, 0));
  };
  const logAt = (n: number, i: number): SyntheticLog =>
    n <= registrationBlocks
      ? fundRegistered(fundAt(n, i))
      : // spread over the funds, not in their order
        subscriptionRequested((requestAt(n, i) * 7919) % funds, requestAt(n, i), n % 90);
  const node = await startLogDensityNode(logsInBlock, { logAt, head });
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-many-funds-'));
  const config = {
    rpcUrl: node.url,
    network: 'devnet',
    dataDir,
    port: 0,
    contracts: SYNTHETIC_CONTRACTS,
    pollIntervalMs: 50,
    staticFiltersAbove: options.staticFiltersAbove,
    log: () => undefined,
  };
  try {
    const indexer = await createIndexer(config);
    const started = performance.now();
    await indexer.start();
    await indexer.waitForHead();
    const seconds = (performance.now() - started) / 1000;
    const events = indexer.status().events;
    await indexer.stop();
    const getLogsCalls = node.requestMethods.flat().filter((m) => m === 'eth_getLogs').length;
    const again = await createIndexer(config);
    const restarted = performance.now();
    await again.start();
    await again.waitForHead();
    const restartSeconds = (performance.now() - restarted) / 1000;
    await again.stop();
    return { funds, events, seconds, restartSeconds, getLogsCalls };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await node.close();
  }
}
