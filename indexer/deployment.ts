// What one createIndexer indexes and where it keeps it, settled before anything starts: the subgraph
// build with the network's addresses, the deployment id that names its store, the store's path and
// the history it keeps. It is all read from files, none of it from the chain, so a build or a
// networks.json that cannot be used (a network not listed, a data source at the zero address) is
// refused by createIndexer itself, before start() asks anything of the node. A new deployment id
// means a new store: otherStores() finds those earlier deployments left beside it.
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { filesUnder, makeDirectory } from '../common/directory.ts';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { TransactionFetch } from './follower/range-fetcher.ts';
import type { IndexerConfig } from './indexer.ts';
import { loadSubgraph, type NetworkContract, type Subgraph, type TemplateSpec } from './runtime/manifest.ts';
import { parseSubgraphSchema, type SubgraphSchema } from './subgraph-schema.ts';

/** graph-node's ETHEREUM_REORG_THRESHOLD default */
export const REORG_THRESHOLD = 250;

// one level below the repository, as are the bundles of `npm run build` in build/ that include this
const repoRoot = resolve(import.meta.dirname, '..');
/** the subgraph build and networks.json the indexer reads unless told otherwise */
export const DEFAULT_BUILD_DIR = join(repoRoot, 'subgraph', 'build');
export const DEFAULT_NETWORKS_FILE = join(repoRoot, 'subgraph', 'networks.json');

export interface Deployment {
  /** content hash of the build and its network addresses: graph-node's deployment id role */
  id: string;
  subgraph: Subgraph;
  schema: SubgraphSchema;
  /** the templates whose data sources are files (file/ipfs, file/arweave) */
  fileTemplates: TemplateSpec[];
  /** the first block indexed: the smallest start block of the data sources */
  startBlock: number;
  storePath: string;
  /** blocks of history the store keeps (historyToKeep) */
  historyBlocks: number;
}

export async function loadDeployment(
  config: IndexerConfig,
  log: (line: string) => void,
): Promise<Deployment> {
  const buildDir = resolve(config.buildDir ?? DEFAULT_BUILD_DIR);
  const contracts = config.contracts ?? networkContracts(config);
  const subgraph = await loadSubgraph({ buildDir, network: { name: config.network, contracts } });
  const schema = parseSubgraphSchema(readFileSync(subgraph.schemaFile, 'utf8'), subgraph.specVersion);
  const fileTemplates = [...subgraph.templates.values()].filter((t) => t.kind !== 'ethereum');
  const id = deploymentId(buildDir, config.network, subgraph, config.transactions ?? 'full');
  const startBlock = Math.min(...subgraph.dataSources.map((d) => Number(d.startBlock)));
  const storeDir = join(resolve(config.dataDir), 'indexer');
  makeDirectory(storeDir);
  const storePath = join(storeDir, storeFileName(config.network, id));
  const historyBlocks = historyToKeep(config, subgraph, log);
  warnOfFileTemplates(fileTemplates, schema, config, log);
  return { id, subgraph, schema, fileTemplates, startBlock, storePath, historyBlocks };
}

/** What deploymentId() makes: `L` and 45 hex digits of a hash. */
const DEPLOYMENT_ID = /^L[0-9a-f]{45}$/;

/** The store's file name: the network, then the deployment id. */
function storeFileName(network: string, id: string): string {
  return `${network}-${id}.sqlite`;
}

/** A store of another deployment of the same network, beside the one in use: what an earlier build left. */
export interface OtherStore {
  path: string;
  /** the file and its -wal and -shm: what deleting them frees */
  bytes: number;
  /** the last block it indexed; null if it indexed none, or cannot be read */
  indexedTo: number | null;
}

/**
 * The stores of the network's other deployments in the directory of `storePath`, by name: each
 * subgraph build (or networks.json entry, or INDEXER_TRANSACTIONS) indexes into a store of its own,
 * and the earlier ones stay until someone deletes them.
 */
export function otherStores(storePath: string, network: string): OtherStore[] {
  const dir = dirname(storePath);
  const isStoreName = (name: string): boolean => {
    const id = name.slice(network.length + 1, -'.sqlite'.length);
    return DEPLOYMENT_ID.test(id) && storeFileName(network, id) === name;
  };
  return readdirSync(dir)
    .filter((name) => isStoreName(name) && name !== basename(storePath))
    .sort()
    .map((name) => {
      const path = join(dir, name);
      const files = [path, `${path}-wal`, `${path}-shm`].filter((file) => existsSync(file));
      const bytes = files.reduce((sum, file) => sum + statSync(file).size, 0);
      return { path, bytes, indexedTo: lastIndexedBlock(path) };
    });
}

/** The last block the store at `path` indexed, from its checkpoint; null if none, or unreadable. */
function lastIndexedBlock(path: string): number | null {
  let db: Database.Database | undefined;
  try {
    // opened as its writer opens it: a read-only connection would leave -wal and -shm files behind
    db = new Database(path, { fileMustExist: true, timeout: 0 });
    const row = db.prepare(`SELECT "number", "hash" FROM "__checkpoint"`).get() as
      | { number: number; hash: Buffer | null }
      | undefined;
    return row?.hash ? row.number : null;
  } catch {
    // a store of another layout, or damaged: its size is said all the same
    return null;
  } finally {
    db?.close();
  }
}

/** The addresses and blocks networks.json gives the data sources on the network configured. */
function networkContracts(config: IndexerConfig): Record<string, NetworkContract> {
  const networks = JSON.parse(readFileSync(DEFAULT_NETWORKS_FILE, 'utf8')) as Record<
    string,
    Record<string, NetworkContract>
  >;
  const contracts = networks[config.network];
  if (!contracts) throw new Error(`network ${config.network} is not in networks.json`);
  return contracts;
}

function deploymentId(
  buildDir: string,
  network: string,
  subgraph: Subgraph,
  transactions: TransactionFetch,
): string {
  const hash = createHash('sha256');
  for (const file of filesUnder(buildDir)) {
    if (relative(buildDir, file).startsWith('.')) continue;
    hash.update(relative(buildDir, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  hash.update(network);
  for (const ds of subgraph.dataSources) {
    // an end block (which networks.json may set) only when there is one, keeping the ids of stores without
    hash.update(
      `${ds.name}:${ds.address}:${ds.startBlock}${ds.endBlock === null ? '' : `:${ds.endBlock}`}\n`,
    );
  }
  // graph-node's behaviour, 'full', keeps the id stores made before the choice existed had
  if (transactions !== 'full') hash.update(`transactions:${transactions}`);
  return 'L' + hash.digest('hex').slice(0, 45);
}

/**
 * The blocks of history the store keeps: INDEXER_HISTORY_BLOCKS, else the manifest's, and never as
 * few as the reorg threshold, which would leave a reorg that deep nothing to revert to (graph-node
 * refuses to prune such a deployment at all; here it keeps what is safe and says so).
 */
export function historyToKeep(
  config: IndexerConfig,
  subgraph: Subgraph,
  log: (line: string) => void,
): number {
  const reorgThreshold = config.reorgThreshold ?? REORG_THRESHOLD;
  const asked = config.historyBlocks ?? subgraph.historyBlocks;
  const wanted = asked === 'auto' ? 2 * reorgThreshold : asked;
  const kept = Math.max(wanted, reorgThreshold + 1);
  if (kept > wanted) {
    log(
      `history: ${wanted} blocks asked for (${config.historyBlocks === undefined ? 'indexerHints.prune' : 'INDEXER_HISTORY_BLOCKS'}); keeping ${kept}, one more than the reorg threshold (${reorgThreshold}, INDEXER_REORG_THRESHOLD), so that a reorg that deep can be reverted`,
    );
  }
  return kept;
}

/** Warns of file templates whose data sources cannot run as configured; neither stops the indexer. */
function warnOfFileTemplates(
  fileTemplates: readonly TemplateSpec[],
  schema: SubgraphSchema,
  config: IndexerConfig,
  log: (line: string) => void,
): void {
  const ipfsTemplates = fileTemplates.filter((t) => t.kind === 'file/ipfs');
  if (ipfsTemplates.length > 0 && !config.files?.ipfsUrl) {
    // the chain is indexed all the same, and the file data sources are kept: none is lost
    log(
      `the subgraph has file data source templates (${ipfsTemplates.map((t) => t.name).join(', ')}) but no IPFS server is set (IPFS_URL): their data sources are recorded, and run once the indexer restarts with one`,
    );
  }
  for (const t of fileTemplates) {
    const unknown = t.mapping.entities.filter((name) => !schema.entities.has(name));
    // graph-node ignores them with a warning rather than refuse a deployed subgraph
    if (unknown.length > 0)
      log(`template ${t.name}: entity types ${unknown.join(', ')} are not in the schema; ignored`);
  }
}
