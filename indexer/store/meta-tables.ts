// The store's meta tables (`__info`, `__checkpoint`, `__blocks`, `__errors`, and the data-source
// tables' DDL) and the reads of them. Apart from the store class because two connections read
// them: the writer's, and the query API's read-only one (query/store-reader.ts), which must not
// need the writer to answer what the checkpoint, the errors or the sync marks are.
import type Database from 'better-sqlite3';
import { bytesToHex } from './layout.ts';

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  timestamp: number;
}

export interface Checkpoint {
  /** the last block whose writes are committed; startBlock - 1 before the first block */
  number: number;
  /** null before the first block */
  block: BlockHeader | null;
  /** the chain head the follower saw at that commit */
  headSeen: number | null;
  /** wall-clock time (ms) of that commit */
  updatedAt: number | null;
  /** set when a handler failed deterministically and indexing stopped */
  fatalError: string | null;
}

/**
 * The version of the tables and `__info` keys this code writes, kept in `__info` as
 * `layout`. A store of another layout is refused, naming it, rather than failing at the first
 * statement that finds a column missing. Raise it with any change to what the store holds.
 */
export const STORE_LAYOUT = 1;

export const metaDdl = [
  `CREATE TABLE IF NOT EXISTS "__info" ("key" TEXT PRIMARY KEY, "value" TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS "__checkpoint" ("only" INTEGER PRIMARY KEY CHECK ("only" = 1),
     "number" INTEGER NOT NULL, "hash" BLOB, "parent_hash" BLOB, "timestamp" INTEGER,
     "head_seen" INTEGER, "updated_at" INTEGER, "fatal_error" TEXT)`,
  `CREATE TABLE IF NOT EXISTS "__blocks" ("number" INTEGER PRIMARY KEY, "hash" BLOB NOT NULL,
     "parent_hash" BLOB NOT NULL, "timestamp" INTEGER NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS "__blocks_hash" ON "__blocks" ("hash")`,
  `CREATE TABLE IF NOT EXISTS "__data_sources" ("seq" INTEGER PRIMARY KEY, "template" TEXT NOT NULL,
     "address" BLOB NOT NULL, "context" TEXT, "created_block" INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS "__file_data_sources" ("region" INTEGER PRIMARY KEY, "template" TEXT NOT NULL,
     "source" TEXT NOT NULL, "context" TEXT, "created_block" INTEGER NOT NULL, "done_at" INTEGER)`,
  `CREATE INDEX IF NOT EXISTS "__file_data_sources_source" ON "__file_data_sources" ("source")`,
  // what a start, a rollback or a reorg reads: the few awaited among possibly millions done
  `CREATE INDEX IF NOT EXISTS "__file_data_sources_awaited" ON "__file_data_sources" ("region") WHERE "done_at" IS NULL`,
  // handler errors a subgraph with nonFatalErrors indexed past, by block (graph-node's subgraph_error)
  `CREATE TABLE IF NOT EXISTS "__errors" ("block" INTEGER NOT NULL, "hash" BLOB NOT NULL,
     "data_source" TEXT NOT NULL, "handler" TEXT NOT NULL, "message" TEXT NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS "__errors_block" ON "__errors" ("block")`,
];
export function headerFromRow(row: Record<string, unknown>): BlockHeader {
  return {
    number: Number(row.number),
    hash: bytesToHex(row.hash as Uint8Array),
    parentHash: bytesToHex(row.parent_hash as Uint8Array),
    timestamp: Number(row.timestamp),
  };
}

/** The checkpoint row, read by the writer and by the query API's read-only connection alike. */
export function readCheckpoint(db: Database.Database): Checkpoint {
  const row = db.prepare(`SELECT * FROM "__checkpoint"`).get() as Record<string, unknown>;
  const block =
    row.hash === null
      ? null
      : headerFromRow({
          number: row.number,
          hash: row.hash,
          parent_hash: row.parent_hash,
          timestamp: row.timestamp,
        });
  return {
    number: Number(row.number),
    block,
    headSeen: row.head_seen === null ? null : Number(row.head_seen),
    updatedAt: row.updated_at === null ? null : Number(row.updated_at),
    fatalError: (row.fatal_error as string | null) ?? null,
  };
}

/**
 * A value the store keeps in `__info` (its deployment, its earliest block, the failure, sync and
 * pause marks); undefined if unset.
 */
export function readInfo(db: Database.Database, key: string): string | undefined {
  return db.prepare(`SELECT "value" FROM "__info" WHERE "key" = ?`).pluck().get(key) as string | undefined;
}

/**
 * Refuses a store of another layout than STORE_LAYOUT, naming it, before `ddl` (what this code
 * creates) runs. A store made before the layout was kept is taken for this one if each of its
 * tables is as `ddl` creates it (the constructor then records its layout).
 */
export function checkLayout(db: Database.Database, path: string, ddl: readonly string[]): void {
  const tables = new Map(
    db.prepare(`SELECT "name", "sql" FROM sqlite_master WHERE "type" = 'table'`).raw().all() as [
      string,
      string,
    ][],
  );
  if (tables.size === 0) return;
  const refuse = (what: string) =>
    new Error(
      `the store ${path} ${what}: delete it and its -wal and -shm files to index again from the start block, or give this indexer another DATA_DIR`,
    );
  const stored = tables.has('__info') ? readInfo(db, 'layout') : undefined;
  if (stored !== undefined) {
    if (stored !== String(STORE_LAYOUT)) {
      throw refuse(`has layout ${stored}, and this indexer keeps layout ${STORE_LAYOUT}`);
    }
    return;
  }
  for (const statement of ddl) {
    const table = /^CREATE TABLE IF NOT EXISTS "((?:[^"]|"")*)"/.exec(statement)?.[1]?.replaceAll('""', '"');
    if (table === undefined || !tables.has(table)) continue;
    // SQLite keeps a statement's text without its IF NOT EXISTS
    if (tables.get(table) !== statement.replace('CREATE TABLE IF NOT EXISTS', 'CREATE TABLE')) {
      throw refuse(`was made by an earlier indexer: its table "${table}" is not as this one makes it`);
    }
  }
}

/** An `__info` value that is a block number; null if unset. */
function readInfoBlock(db: Database.Database, key: string): number | null {
  const value = readInfo(db, key);
  return value === undefined ? null : Number(value);
}

/** The first block whose state the store still holds, once pruning has removed older history; else null. */
export function readEarliestBlock(db: Database.Database): number | null {
  return readInfoBlock(db, 'earliest_block');
}

/** The block and handler of the failure that stopped indexing, as recordFatalError stored them. */
export function readFatalErrorContext(db: Database.Database): {
  block: number | null;
  handler: string | null;
} {
  return { block: readInfoBlock(db, 'fatal_block'), handler: readInfo(db, 'fatal_handler') ?? null };
}

/** A handler error indexing went on past (nonFatalErrors): its changes were discarded. */
export interface HandlerErrorRecord {
  block: number;
  hash: string;
  dataSource: string;
  handler: string;
  message: string;
}

/** The handler errors indexing went on past, in block order. */
export function readHandlerErrors(db: Database.Database): HandlerErrorRecord[] {
  const rows = db.prepare(`SELECT * FROM "__errors" ORDER BY "block", rowid`).all() as Record<
    string,
    unknown
  >[];
  return rows.map((row) => ({
    block: Number(row.block),
    hash: bytesToHex(row.hash as Uint8Array),
    dataSource: row.data_source as string,
    handler: row.handler as string,
    message: row.message as string,
  }));
}

/**
 * The first block with an indexing error, fatal or not; null if none. Queries at it or later see
 * `hasIndexingErrors`, and their entity fields the `indexing_error` (graph-node's first_error_block).
 */
export function readFirstErrorBlock(db: Database.Database, checkpoint: Checkpoint): number | null {
  const nonFatal = db.prepare(`SELECT min("block") FROM "__errors"`).pluck().get() as bigint | number | null;
  const fatal = checkpoint.fatalError === null ? null : readFatalErrorContext(db).block;
  const blocks = [nonFatal, fatal].filter((b) => b !== null).map(Number);
  return blocks.length === 0 ? null : Math.min(...blocks);
}

/**
 * Whether the subgraph has ever caught up with the chain head, to within graph-node's 10 blocks
 * (graph-node's `synced`, which stays true).
 */
export function readSynced(db: Database.Database): boolean {
  return readInfo(db, 'synced_at') !== undefined;
}

/**
 * Where indexing stopped after a handler error that nonFatalErrors would have let it go past: the
 * subgraph had not yet caught up with the chain head (graph-node's fail-fast pause); null if not paused.
 */
export function readPausedAt(db: Database.Database): number | null {
  return readInfoBlock(db, 'paused_at');
}

/** The stored header of a block, if it had triggers or ended a batch. */
export function readStoredBlock(db: Database.Database, number: number): BlockHeader | null {
  const row = db.prepare(`SELECT * FROM "__blocks" WHERE "number" = ?`).get(number) as
    | Record<string, unknown>
    | undefined;
  return row ? headerFromRow(row) : null;
}
