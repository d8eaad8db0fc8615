// `npm run indexer`: indexes the chain at RPC_URL for a network of subgraph/networks.json into
// DATA_DIR and serves the graph-node query dialect on PORT, with a progress display during sync.
import { indexerConfigFromEnv } from './config.ts';
import { createIndexer } from './indexer.ts';
import { createProgressDisplay } from './progress.ts';

let config;
try {
  config = indexerConfigFromEnv(process.env);
} catch (error) {
  console.error(`configuration error: ${(error as Error).message}`);
  process.exit(2);
}

const tty = Boolean(process.stdout.isTTY);
const indexer = await createIndexer({
  rpcUrl: config.rpcUrl,
  network: config.network,
  dataDir: config.dataDir,
  port: config.port,
  pollIntervalMs: config.pollIntervalMs,
  maxRange: config.maxBlockRange,
  maxRangesAhead: config.rangesAhead,
  maxAddressesPerRequest: config.getLogsMaxAddresses,
  staticFiltersAbove: config.staticFiltersThreshold,
  transactions: config.transactions,
  files: config.files,
  commitIntervalMs: config.commitIntervalMs,
  historyBlocks: config.historyBlocks,
  reorgThreshold: config.reorgThreshold,
  disableFailFast: config.disableFailFast,
  subgraphName: config.subgraphName,
  onProgress: createProgressDisplay({ write: (text) => process.stdout.write(text), tty }),
  log: (line) => process.stdout.write(`${tty ? '\r\x1b[K' : ''}${line}\n`),
});
await indexer.start();
console.log(`indexer: ${config.network} via ${config.rpcUrl}; store ${indexer.storePath}`);
console.log(`query endpoint: ${indexer.queryUrl}`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  void indexer.stop().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
