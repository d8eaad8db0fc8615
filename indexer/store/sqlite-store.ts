// The indexer's SQLite store. Entity versions carry block ranges [__from, __to) so that a query can
// read the state at any past block and a reorg can be undone by deleting the versions a dropped
// block wrote and reopening the ones it closed. Everything a block changes (entity versions, dynamic
// data sources, its header) and the checkpoint that says the block is done are written in the same
// SQLite transaction, so a crash at any instant leaves either all of a block or none of it. File
// data sources are kept with the block that created them and the block whose pass ran their
// handler, so a reorg forgets the one and fetches the file again for the other.
import Database from 'better-sqlite3';
import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SubgraphSchema } from '../subgraph-schema.ts';
import type { Entity, EntityStoreTx } from './entity.ts';
import {
  OPEN_BLOCK,
  buildLayouts,
  bytesToHex,
  entityToRow,
  hexToBytes,
  idToSql,
  rowToEntity,
  tableDdl,
  type TableLayout,
} from './layout.ts';
import { relatedEntities } from './related-entities.ts';
import { MapJournal } from './map-journal.ts';
import { startWalCheckpointer, type CheckpointFailure, type WalCheckpointer } from './wal-checkpointer.ts';

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  timestamp: number;
}

/** A data source instantiated from a template while indexing (graph-node's dynamic data source). */
interface DynamicDataSourceRecord {
  template: string;
  address: string;
  /** the data source context as the runtime serialised it, or null */
  context: string | null;
  createdAtBlock: number;
}

/**
 * A file data source (graph-node's offchain data source): created by a handler, its handler runs
 * once its file is fetched. Its causality region numbers it (1, 2, ... in creation order; chain
 * handlers write region 0), and the entities it writes carry it.
 */
interface FileDataSourceRecord {
  region: number;
  template: string;
  /** the canonical content path: `<cid>` or `<cid>/<path>` */
  source: string;
  /** the data source context as the runtime serialised it, or null */
  context: string | null;
  createdAtBlock: number;
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

interface StoreOptions {
  /** the SQLite file */
  path: string;
  schema: SubgraphSchema;
  /** first block the subgraph indexes (smallest startBlock of its data sources) */
  startBlock: number;
  /** identifies the subgraph build; a file made for another build is refused */
  deployment: string;
  /** the entity types file data sources may write, whose versions record their causality region */
  fileEntityTypes?: ReadonlySet<string>;
  /** blocks of history kept (default all): older versions are deleted as the chain advances */
  historyBlocks?: number;
  /** the most the WAL may grow to before the writer folds it into the file and truncates it (WAL_LIMIT_BYTES) */
  walLimitBytes?: number;
  /** where a failed WAL checkpoint is told, once per kind of failure (default: stderr) */
  log?: (line: string) => void;
}

/**
 * The WAL's size past which the writer, between two transactions, checkpoints it in full and
 * truncates it (or past a quarter of the disk's free space, if that is less), and the size SQLite
 * trims it to when it starts it over. The checkpointer thread copies the commits into the database
 * file meanwhile, but a writer that begins again as soon as it commits leaves it no moment to start
 * the WAL over, and the WAL grew without end (twice the database, ten times with a commit per
 * range), until a disk that had room for the data was full.
 */
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The version of the tables and `__info` keys this code writes, kept in `__info` as
 * `layout`. A store of another layout is refused, naming it, rather than failing at the first
 * statement that finds a column missing. Raise it with any change to what the store holds.
 */
export const STORE_LAYOUT = 1;

/**
 * How far the history held may exceed the history kept before it is pruned: graph-node's
 * GRAPH_STORE_HISTORY_SLACK_FACTOR default, so that pruning runs every fifth of the history kept.
 */
const HISTORY_SLACK_FACTOR = 1.2;

const metaDdl = [
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

function headerFromRow(row: Record<string, unknown>): BlockHeader {
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
function readInfo(db: Database.Database, key: string): string | undefined {
  return db.prepare(`SELECT "value" FROM "__info" WHERE "key" = ?`).pluck().get(key) as string | undefined;
}

/**
 * Refuses a store of another layout than STORE_LAYOUT, naming it, before `ddl` (what this code
 * creates) runs. A store made before the layout was kept is taken for this one if each of its
 * tables is as `ddl` creates it (the constructor then records its layout).
 */
function checkLayout(db: Database.Database, path: string, ddl: readonly string[]): void {
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

interface TableStatements {
  layout: TableLayout;
  /**
   * the reads (chain handlers') see causality region 0 of a regioned layout; close takes the
   * region after the id, and insert before the fields
   */
  getCurrent: Database.Statement;
  hasCurrent: Database.Statement;
  close: Database.Statement;
  insert: Database.Statement;
  /** regioned layouts: the region of a current version of the id written by another region */
  otherRegion: Database.Statement | null;
}

/** An immutable entity written again by a later block: the store holds its id already. */
export class ImmutableEntityConflict extends Error {
  constructor(
    readonly entityType: string,
    readonly id: string,
    options?: { cause?: unknown },
  ) {
    super(`Entity ${entityType}[${id}] is immutable and was inserted at an earlier block`, options);
  }
}

/**
 * Whether a store failure came from the disk or the file system rather than from what was written:
 * a full disk, an I/O error, a file made read-only or locked. Writing again later can succeed, as
 * it cannot after a constraint failure.
 */
export function isTransientStoreError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR|BUSY|LOCKED|READONLY|CANTOPEN|NOMEM)/.test(code);
}

/** Opens (creating if needed) the store at `options.path` and prepares its statements. */
export function openStore(options: StoreOptions): IndexerStore {
  return new IndexerStore(options);
}

export class IndexerStore {
  private readonly path: string;
  readonly db: Database.Database;
  readonly layouts: Map<string, TableLayout>;
  readonly startBlock: number;
  private readonly tables = new Map<string, TableStatements>();
  private inTransaction = false;
  /** whether the open transaction holds the savepoint of beginBlockWrites() */
  private blockSavepoint = false;
  private readonly insertBlock: Database.Statement;
  private readonly insertDataSource: Database.Statement;
  /** per file data source created or run: a handler may create thousands in one block */
  private readonly fileStatements: {
    find: Database.Statement;
    insert: Database.Statement;
    done: Database.Statement;
  };
  private readonly updateCheckpoint: Database.Statement;
  private readonly checkpointer: WalCheckpointer;
  private readonly walPath: string;
  private readonly walLimit: number;
  /** the WAL size past which begin() checkpoints and truncates it first */
  private walCheckpointAt: number;
  private readonly log: (line: string) => void;
  /** the kinds (SQLite codes) of checkpoint failure told already */
  private readonly checkpointFailuresTold = new Set<string>();
  private committedCheckpoint: Checkpoint;
  private readonly historyBlocks: number;
  private earliest: number;

  constructor(options: StoreOptions) {
    this.path = options.path;
    this.db = new Database(options.path);
    this.db.pragma('journal_mode = WAL');
    // WAL with synchronous=NORMAL is durable against process crashes (the case we guard against);
    // only an OS crash could lose the last commits, which the follower then re-indexes.
    this.db.pragma('synchronous = NORMAL');
    // Checkpoints (copying the WAL into the database file, then fsync) run on a worker thread rather
    // than inside the writer's commits. 8 MiB of page cache keeps hot index pages (16 MiB was no faster).
    this.db.pragma('wal_autocheckpoint = 0');
    this.db.pragma('cache_size = -8192');
    // the statement journal of writeChanges' savepoint stays in memory, not in a file under TMPDIR
    this.db.pragma('temp_store = MEMORY');
    // the writer's own checkpoints keep the WAL within its limit (WAL_LIMIT_BYTES)
    this.walPath = `${options.path}-wal`;
    this.walLimit = options.walLimitBytes ?? WAL_LIMIT_BYTES;
    this.walCheckpointAt = this.walLimitNow();
    this.db.pragma(`journal_size_limit = ${this.walLimit}`);
    this.log = options.log ?? ((line) => console.error(line));
    this.db.defaultSafeIntegers(true);
    this.layouts = buildLayouts(options.schema, options.fileEntityTypes);
    this.startBlock = options.startBlock;
    this.db.transaction(() => {
      const ddl = [...metaDdl, ...[...this.layouts.values()].flatMap(tableDdl)];
      checkLayout(this.db, options.path, ddl);
      for (const statement of ddl) this.db.exec(statement);
      const stored = readInfo(this.db, 'deployment');
      if (stored === undefined) {
        this.db.prepare(`INSERT INTO "__info" VALUES ('deployment', ?)`).run(options.deployment);
        this.db
          .prepare(`INSERT INTO "__checkpoint" ("only", "number") VALUES (1, ?)`)
          .run(options.startBlock - 1);
      } else if (stored !== options.deployment) {
        throw new Error(
          `${options.path} holds deployment ${stored}, not ${options.deployment}; use another DATA_DIR or delete the file`,
        );
      }
      this.db.prepare(`INSERT OR IGNORE INTO "__info" VALUES ('layout', ?)`).run(String(STORE_LAYOUT));
    })();
    this.checkpointer = startWalCheckpointer(options.path, (failure) => this.checkpointFailed(failure));
    this.committedCheckpoint = this.checkpoint();
    this.historyBlocks = options.historyBlocks ?? Infinity;
    this.earliest = readEarliestBlock(this.db) ?? this.startBlock;
    this.insertBlock = this.db.prepare(`INSERT OR REPLACE INTO "__blocks" VALUES (?, ?, ?, ?)`);
    this.insertDataSource = this.db.prepare(
      `INSERT INTO "__data_sources" ("template", "address", "context", "created_block") VALUES (?, ?, ?, ?)`,
    );
    this.fileStatements = {
      find: this.db.prepare(
        `SELECT 1 FROM "__file_data_sources" WHERE "source" = ? AND "template" = ? AND "context" IS ?`,
      ),
      insert: this.db.prepare(`INSERT INTO "__file_data_sources" VALUES (?, ?, ?, ?, ?, NULL)`),
      done: this.db.prepare(`UPDATE "__file_data_sources" SET "done_at" = ? WHERE "region" = ?`),
    };
    this.updateCheckpoint = this.db.prepare(
      `UPDATE "__checkpoint" SET "number" = ?, "hash" = ?, "parent_hash" = ?, "timestamp" = ?,
         "head_seen" = ?, "updated_at" = ?`,
    );
    for (const layout of this.layouts.values()) {
      const cols = ['"__from"', '"__to"'];
      if (layout.regioned) cols.push('"__region"');
      for (const c of layout.columns) {
        cols.push(c.sql);
        if (c.keySql) cols.push(c.keySql);
      }
      const current = `"id" = ? AND "__to" = ${OPEN_BLOCK}`;
      const region = (sql: string) => (layout.regioned ? ` AND "__region" = ${sql}` : '');
      this.tables.set(layout.entity.name, {
        layout,
        getCurrent: this.db.prepare(`SELECT * FROM ${layout.sql} WHERE ${current}${region('0')}`),
        hasCurrent: this.db.prepare(`SELECT 1 FROM ${layout.sql} WHERE ${current}${region('0')}`).pluck(),
        close: this.db.prepare(`UPDATE ${layout.sql} SET "__to" = ? WHERE ${current}${region('?')}`),
        insert: this.db.prepare(
          `INSERT INTO ${layout.sql} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
        ),
        otherRegion: layout.regioned
          ? this.db
              .prepare(
                `SELECT "__region" FROM ${layout.sql} WHERE "id" = ? AND "__to" = ${OPEN_BLOCK} AND "__region" <> ?`,
              )
              .pluck()
          : null,
      });
    }
  }

  private table(entityType: string): TableStatements {
    const t = this.tables.get(entityType);
    if (!t) throw new Error(`unknown entity type ${entityType}`);
    return t;
  }

  checkpoint(): Checkpoint {
    return readCheckpoint(this.db);
  }

  /** The stored header of a block, if it had triggers or ended a batch. */
  storedBlock(number: number): BlockHeader | null {
    return readStoredBlock(this.db, number);
  }

  /** Up to `limit` stored block headers at or below `number`, newest first: common-ancestor candidates. */
  storedBlocksDescending(number: number, limit: number): BlockHeader[] {
    const rows = this.db
      .prepare(`SELECT * FROM "__blocks" WHERE "number" <= ? ORDER BY "number" DESC LIMIT ?`)
      .all(number, limit) as Record<string, unknown>[];
    return rows.map(headerFromRow);
  }

  dataSources(): DynamicDataSourceRecord[] {
    const rows = this.db.prepare(`SELECT * FROM "__data_sources" ORDER BY "seq"`).all() as Record<
      string,
      unknown
    >[];
    return rows.map((r) => ({
      template: r.template as string,
      address: bytesToHex(r.address as Uint8Array),
      context: (r.context as string | null) ?? null,
      createdAtBlock: Number(r.created_block),
    }));
  }

  /** The file data sources whose file is awaited (their handler has not run), in creation order. */
  awaitedFileDataSources(): FileDataSourceRecord[] {
    const rows = this.db
      .prepare(`SELECT * FROM "__file_data_sources" WHERE "done_at" IS NULL ORDER BY "region"`)
      .all() as Record<string, unknown>[];
    return rows.map((r) => ({
      region: Number(r.region),
      template: r.template as string,
      source: r.source as string,
      context: (r.context as string | null) ?? null,
      createdAtBlock: Number(r.created_block),
    }));
  }

  /** The causality region the next file data source gets (regions are never reused, a reorg aside). */
  nextFileRegion(): number {
    const max = this.db.prepare(`SELECT max("region") FROM "__file_data_sources"`).pluck().get();
    return max === null ? 1 : Number(max) + 1;
  }

  /** Whether a file data source of `template` for `source` with this context exists (graph-node refuses a duplicate). */
  hasFileDataSource(template: string, source: string, context: string | null): boolean {
    return this.fileStatements.find.get(source, template, context) !== undefined;
  }

  /** Records a file data source just created: its file is awaited. */
  recordFileDataSource(record: FileDataSourceRecord): void {
    this.fileStatements.insert.run(
      record.region,
      record.template,
      record.source,
      record.context,
      record.createdAtBlock,
    );
  }

  /** Records that the handler of the file data source of `region` ran in block `block`'s pass. */
  markFileDataSourceDone(region: number, block: number): void {
    this.fileStatements.done.run(block, region);
  }

  /** Starts the SQL transaction that the following blocks are written into. */
  begin(): void {
    if (this.inTransaction) throw new Error('a store transaction is already open');
    // a stat, between two transactions: the WAL can be started over only when none is open
    if ((statSync(this.walPath, { throwIfNoEntry: false })?.size ?? 0) > this.walCheckpointAt) {
      this.truncateWal();
    }
    this.db.exec('BEGIN IMMEDIATE');
    this.inTransaction = true;
  }

  /**
   * Marks the start of one block's writes in the open transaction, so that dropBlockWrites() can
   * take them back alone (a block whose handler failed is committed without its changes).
   */
  beginBlockWrites(): void {
    if (!this.inTransaction) throw new Error('beginBlockWrites() outside a store transaction');
    if (this.blockSavepoint) this.db.exec('RELEASE "block_writes"');
    this.db.exec('SAVEPOINT "block_writes"');
    this.blockSavepoint = true;
  }

  /** Takes back the writes since beginBlockWrites(); the earlier blocks' stay in the transaction. */
  dropBlockWrites(): void {
    if (!this.blockSavepoint) throw new Error('dropBlockWrites() without beginBlockWrites()');
    this.db.exec('ROLLBACK TO "block_writes"');
    this.db.exec('RELEASE "block_writes"');
    this.blockSavepoint = false;
  }

  /** A write buffer for one block's chain handlers; its writes reach the open transaction when flushed. */
  blockWriter(blockNumber: number): BlockWriteBuffer {
    if (!this.inTransaction) throw new Error('blockWriter() outside a store transaction');
    return new BlockWriteBuffer(this, blockNumber, 0);
  }

  /**
   * A write buffer for the handler of the file data source of `region`, run in block
   * `blockNumber`'s pass. Its reads see only its own writes: graph-node runs these handlers over an
   * empty store, so that nothing a file handler does depends on what else was indexed before it.
   */
  fileWriter(blockNumber: number, region: number): BlockWriteBuffer {
    if (!this.inTransaction) throw new Error('fileWriter() outside a store transaction');
    return new BlockWriteBuffer(this, blockNumber, region);
  }

  recordBlock(header: BlockHeader): void {
    this.insertBlock.run(
      header.number,
      hexToBytes(header.hash),
      hexToBytes(header.parentHash),
      header.timestamp,
    );
  }

  recordDataSource(record: DynamicDataSourceRecord): void {
    this.insertDataSource.run(
      record.template,
      hexToBytes(record.address.toLowerCase()),
      record.context,
      record.createdAtBlock,
    );
  }

  /** Moves the checkpoint to `block` inside the open transaction (visible to others once committed). */
  setCheckpoint(block: BlockHeader, headSeen: number | null): void {
    if (!this.inTransaction) throw new Error('setCheckpoint() outside a store transaction');
    this.recordBlock(block);
    this.updateCheckpoint.run(
      block.number,
      hexToBytes(block.hash),
      hexToBytes(block.parentHash),
      block.timestamp,
      headSeen,
      Date.now(),
    );
    this.pruneIfDue(block.number);
  }

  /** Commits everything since begin(), after moving the checkpoint to `block` when given. */
  commit(block?: BlockHeader, headSeen: number | null = null): void {
    if (!this.inTransaction) throw new Error('commit() outside a store transaction');
    if (block) this.setCheckpoint(block, headSeen);
    this.db.exec('COMMIT');
    this.inTransaction = false;
    this.blockSavepoint = false;
    this.committedCheckpoint = this.checkpoint();
  }

  /** The first block whose state the store holds: later than the start block once pruned. */
  get earliestBlock(): number {
    return this.earliest;
  }

  /** Whether a transaction is open (writes not yet committed). */
  get transactionOpen(): boolean {
    return this.inTransaction;
  }

  /** The checkpoint as last committed: what readers of the file see. */
  committed(): Checkpoint {
    return this.committedCheckpoint;
  }

  /** Drops everything written since begin(). */
  rollback(): void {
    if (!this.inTransaction) return;
    this.inTransaction = false;
    this.blockSavepoint = false;
    // after some failures (a full disk among them) SQLite has rolled the transaction back itself
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.earliest = readEarliestBlock(this.db) ?? this.startBlock;
    // what a failed transaction wrote stays in the WAL file: on a full disk, truncating it
    // (its commits are in the database file already, but for the last few) is what frees room
    this.walCheckpointAt = 0;
  }

  /**
   * Checkpoints the whole WAL into the database file and truncates it, between two of the
   * checkpointer thread's passes. A reader in another process may keep the WAL from being truncated:
   * it is tried again once the WAL has grown by the limit once more.
   */
  private truncateWal(): void {
    try {
      const [{ busy }] = this.checkpointer.between(
        () => this.db.pragma('wal_checkpoint(TRUNCATE)') as [{ busy: bigint }],
      );
      const size = statSync(this.walPath, { throwIfNoEntry: false })?.size ?? 0;
      this.walCheckpointAt = (busy === 0n ? 0 : size) + this.walLimitNow();
    } catch (error) {
      if (!(error instanceof Database.SqliteError)) throw error;
      this.checkpointFailed(error);
    }
  }

  /**
   * How far the WAL may grow from here: the limit, or a quarter of the disk's free space if that is
   * less, so that on a small disk the WAL leaves room for what it is folded into.
   */
  private walLimitNow(): number {
    const { bavail, bsize } = statfsSync(dirname(this.path));
    return Math.min(this.walLimit, (bavail * bsize) / 4);
  }

  /** Tells a failed WAL checkpoint, the first of its kind only: one per commit would flood the log. */
  private checkpointFailed({ code, message }: CheckpointFailure): void {
    if (this.checkpointFailuresTold.has(code)) return;
    this.checkpointFailuresTold.add(code);
    const fix =
      code === 'SQLITE_FULL'
        ? 'free space on its disk'
        : 'check that the file and its directory can be written';
    this.log(
      `store: the WAL of ${this.path} could not be checkpointed into it (${message}, ${code}); it grows until a checkpoint succeeds: ${fix}. Failures of this kind are told once`,
    );
  }

  /**
   * Once the history held exceeds the history kept by the slack factor, deletes the versions no
   * block from `latest - historyBlocks` on can see (those closed by then) and the older block
   * headers, as graph-node prunes; queries at older blocks are refused from then on. A version
   * reopened by a reorg was closed after the checkpoint, so reorgs within the history kept revert.
   */
  private pruneIfDue(latest: number): void {
    if (latest - this.earliest <= this.historyBlocks * HISTORY_SLACK_FACTOR) return;
    const earliest = latest - this.historyBlocks;
    for (const { layout } of this.tables.values()) {
      // an immutable entity is never closed (nor removed once committed): nothing to prune there
      if (layout.entity.immutable) continue;
      // current versions (OPEN_BLOCK) are past any block; naming them lets the closed-versions index serve
      this.db
        .prepare(`DELETE FROM ${layout.sql} WHERE "__to" <= ? AND "__to" <> ${OPEN_BLOCK}`)
        .run(earliest);
    }
    this.db.prepare(`DELETE FROM "__blocks" WHERE "number" < ?`).run(earliest);
    this.db.prepare(`INSERT OR REPLACE INTO "__info" VALUES ('earliest_block', ?)`).run(String(earliest));
    this.earliest = earliest;
  }

  /**
   * Records, inside the open transaction, the handler errors of block `block` that indexing goes on
   * past (nonFatalErrors); the handlers' changes were discarded.
   */
  recordHandlerErrors(
    block: BlockHeader,
    errors: readonly { dataSource: string; handler: string; message: string }[],
  ): void {
    if (!this.inTransaction) throw new Error('recordHandlerErrors() outside a store transaction');
    const insert = this.db.prepare(`INSERT INTO "__errors" VALUES (?, ?, ?, ?, ?)`);
    for (const e of errors)
      insert.run(block.number, hexToBytes(block.hash), e.dataSource, e.handler, e.message);
  }

  /** Whether the subgraph has ever caught up with the chain head (see readSynced). */
  get synced(): boolean {
    return readSynced(this.db);
  }

  /** Records that the subgraph caught up with the chain head at block `block`, the first time it does. */
  markSynced(block: number): void {
    this.db.prepare(`INSERT OR IGNORE INTO "__info" VALUES ('synced_at', ?)`).run(String(block));
  }

  /** Where indexing is paused (see readPausedAt); null if it is not. */
  get pausedAt(): number | null {
    return readPausedAt(this.db);
  }

  /** Pauses indexing at block `block` (null: resumes it). */
  setPausedAt(block: number | null): void {
    if (block === null) this.db.exec(`DELETE FROM "__info" WHERE "key" = 'paused_at'`);
    else this.db.prepare(`INSERT OR REPLACE INTO "__info" VALUES ('paused_at', ?)`).run(String(block));
  }

  /**
   * Records the handler failure that stopped indexing: its message, and the block and handler it
   * names. The follower records it in the transaction that moves the checkpoint to that block, with
   * none of the block's changes, as graph-node transacts a failed block.
   */
  recordFatalError(message: string, block: number, handler: string): void {
    if (!this.inTransaction) throw new Error('recordFatalError() outside a store transaction');
    this.db.prepare(`UPDATE "__checkpoint" SET "fatal_error" = ?`).run(message);
    const info = this.db.prepare(`INSERT OR REPLACE INTO "__info" VALUES (?, ?)`);
    info.run('fatal_block', String(block));
    info.run('fatal_handler', handler);
  }

  /** The block whose handler failure stopped indexing; null if none did. */
  get fatalErrorBlock(): number | null {
    return this.checkpoint().fatalError === null ? null : readFatalErrorContext(this.db).block;
  }

  /** Records the chain head seen while the checkpoint did not move (e.g. waiting at the head). */
  recordHeadSeen(head: number): void {
    this.db.prepare(`UPDATE "__checkpoint" SET "head_seen" = ?`).run(head);
    if (!this.inTransaction) this.committedCheckpoint = this.checkpoint();
  }

  /**
   * Reverts to the state right after block `ancestor`, in one transaction: versions written after it
   * are deleted, versions closed after it are reopened, and its stored header becomes the checkpoint.
   */
  revertTo(ancestor: BlockHeader | null): void {
    if (this.inTransaction) throw new Error('revertTo() with a store transaction open');
    const number = ancestor ? ancestor.number : this.startBlock - 1;
    this.db.transaction(() => {
      for (const { layout } of this.tables.values()) {
        this.db.prepare(`DELETE FROM ${layout.sql} WHERE "__from" > ?`).run(number);
        this.db
          .prepare(
            `UPDATE ${layout.sql} SET "__to" = ${OPEN_BLOCK} WHERE "__to" > ? AND "__to" <> ${OPEN_BLOCK}`,
          )
          .run(number);
      }
      this.db.prepare(`DELETE FROM "__blocks" WHERE "number" > ?`).run(number);
      // back before the history kept (a reorg deeper than it): everything is indexed again
      if (number < this.earliest) this.db.exec(`DELETE FROM "__info" WHERE "key" = 'earliest_block'`);
      this.db.prepare(`DELETE FROM "__data_sources" WHERE "created_block" > ?`).run(number);
      this.db.prepare(`DELETE FROM "__file_data_sources" WHERE "created_block" > ?`).run(number);
      this.db.prepare(`UPDATE "__file_data_sources" SET "done_at" = NULL WHERE "done_at" > ?`).run(number);
      this.db.prepare(`DELETE FROM "__errors" WHERE "block" > ?`).run(number);
      // a failed (or paused) block reverted is run again, as graph-node unfails a reverted failure
      if ((readFatalErrorContext(this.db).block ?? -Infinity) > number) {
        this.db.exec(`UPDATE "__checkpoint" SET "fatal_error" = NULL`);
        this.db.exec(`DELETE FROM "__info" WHERE "key" IN ('fatal_block', 'fatal_handler')`);
      }
      if ((readPausedAt(this.db) ?? -Infinity) > number) this.setPausedAt(null);
      this.db
        .prepare(`UPDATE "__checkpoint" SET "number" = ?, "hash" = ?, "parent_hash" = ?, "timestamp" = ?`)
        .run(
          number,
          ancestor ? hexToBytes(ancestor.hash) : null,
          ancestor ? hexToBytes(ancestor.parentHash) : null,
          ancestor ? ancestor.timestamp : null,
        );
    })();
    this.committedCheckpoint = this.checkpoint();
    this.earliest = readEarliestBlock(this.db) ?? this.startBlock;
  }

  /**
   * Reads the current version of an entity as chain handlers see it (causality region 0), as of the
   * writes flushed so far.
   */
  getCurrent(entityType: string, id: string): Entity | null {
    const t = this.table(entityType);
    const row = t.getCurrent.get(idToSql(t.layout.idKind, id)) as Record<string, unknown> | undefined;
    return row ? rowToEntity(t.layout, row) : null;
  }

  /** Whether an entity has a current version chain handlers see (as of the writes flushed so far). */
  hasCurrent(entityType: string, id: string): boolean {
    const t = this.table(entityType);
    return t.hasCurrent.get(idToSql(t.layout.idKind, id)) !== undefined;
  }

  /** The causality region, other than `region`, holding a current version of the entity; null if none. */
  otherRegionHolding(entityType: string, id: string, region: number): number | null {
    const t = this.table(entityType);
    if (!t.otherRegion) return null;
    const held = t.otherRegion.get(idToSql(t.layout.idKind, id), region);
    return held === undefined ? null : Number(held);
  }

  /**
   * Writes one block's changes made in a causality region: closes the current versions and inserts
   * the new ones, all or none. An immutable entity inserted again (its id is already stored) is an
   * ImmutableEntityConflict, or with skipDuplicates not written.
   */
  writeChanges(blockNumber: number, changes: Map<string, Map<string, Entity | null>>, region = 0): void {
    this.db.exec('SAVEPOINT "write_changes"');
    try {
      for (const [entityType, byId] of changes) {
        const t = this.table(entityType);
        const immutable = t.layout.entity.immutable;
        const regioned = t.layout.regioned;
        for (const [id, entity] of byId) {
          // an immutable entity has no version to close; a second insert of its id fails the unique index
          if (!immutable || entity === null) {
            const sqlId = idToSql(t.layout.idKind, id);
            if (regioned) t.close.run(blockNumber, sqlId, region);
            else t.close.run(blockNumber, sqlId);
          }
          if (entity === null) continue;
          try {
            const row = entityToRow(t.layout, entity);
            if (regioned) t.insert.run(blockNumber, OPEN_BLOCK, region, ...row);
            else t.insert.run(blockNumber, OPEN_BLOCK, ...row);
          } catch (error) {
            const code = (error as { code?: string }).code;
            if (immutable && code === 'SQLITE_CONSTRAINT_UNIQUE') {
              if (t.layout.entity.skipDuplicates) continue;
              throw new ImmutableEntityConflict(entityType, id, { cause: error });
            }
            throw error;
          }
        }
      }
      this.db.exec('RELEASE "write_changes"');
    } catch (error) {
      // unless the failure ended the whole transaction, as a full disk can
      if (this.db.inTransaction) {
        this.db.exec('ROLLBACK TO "write_changes"');
        this.db.exec('RELEASE "write_changes"');
      }
      throw error;
    }
  }

  /**
   * Closes the store with the WAL folded into the database file, so that the file alone holds
   * every commit (a copy of it is a backup) however the process ends next.
   */
  close(): void {
    if (!this.db.open) return;
    this.rollback();
    this.truncateWal();
    this.checkpointer.stop();
    this.db.close();
  }
}

/** Lowercase 0x hex of a Bytes id, validated without allocating. */
function normalizeHex(id: string): string {
  let valid = id.length % 2 === 0 && id.charCodeAt(0) === 48 && id.charCodeAt(1) === 120; // "0x"
  for (let i = 2; valid && i < id.length; i++) {
    const c = id.charCodeAt(i) | 0x20; // ASCII lowercase
    valid = (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
  }
  if (!valid) throw new Error(`invalid Bytes id: ${id}`);
  return id.toLowerCase();
}

/**
 * One block's view of the store (EntityStoreTx): writes are buffered per (type, id) and reads see
 * them first, so handlers observe their own block's changes; flush() hands the net changes to SQL.
 */
export class BlockWriteBuffer implements EntityStoreTx {
  private readonly changes = new Map<string, Map<string, Entity | null>>();
  /** what set and remove replaced since mark(), to put back on undo(); null when not marked */
  private journal: MapJournal | null = null;

  constructor(
    private readonly store: IndexerStore,
    readonly blockNumber: number,
    /** the causality region writing: 0 for chain handlers, whose reads see the store; a file data source's own, whose do not */
    readonly region: number,
  ) {}

  private key(entityType: string, id: string): { byId: Map<string, Entity | null>; key: string } {
    const layout = this.store.layouts.get(entityType);
    if (!layout) throw new Error(`unknown entity type ${entityType}`);
    let byId = this.changes.get(entityType);
    if (!byId) {
      byId = new Map();
      this.changes.set(entityType, byId);
    }
    // Bytes ids compare by value, so their hex spelling is normalised
    return { byId, key: layout.idKind === 'Bytes' ? normalizeHex(id) : id };
  }

  /** The entity as the block sees it; callers copy it before changing it (the runtime's merge does). */
  get(entityType: string, id: string): Entity | null {
    const { byId, key } = this.key(entityType, id);
    if (byId.has(key)) return byId.get(key)!;
    return this.region === 0 ? this.store.getCurrent(entityType, key) : null;
  }

  has(entityType: string, id: string): boolean {
    const { byId, key } = this.key(entityType, id);
    if (byId.has(key)) return byId.get(key) !== null;
    return this.region === 0 && this.store.hasCurrent(entityType, key);
  }

  otherRegionHolding(entityType: string, id: string): number | null {
    const { key } = this.key(entityType, id);
    return this.store.otherRegionHolding(entityType, key, this.region);
  }

  /** Takes ownership of `entity`: the caller does not change it afterwards. */
  set(entityType: string, id: string, entity: Entity): void {
    this.write(entityType, id, entity);
  }

  remove(entityType: string, id: string): void {
    this.write(entityType, id, null);
  }

  private write(entityType: string, id: string, entity: Entity | null): void {
    const { byId, key } = this.key(entityType, id);
    this.journal?.record(byId, key);
    byId.delete(key); // keep insertion order = last write order
    byId.set(key, entity);
  }

  mark(): void {
    this.journal = new MapJournal();
  }

  undo(): void {
    this.journal?.undo();
    this.journal = null;
  }

  loadRelated(entityType: string, field: string, id: string): Entity[] {
    return relatedEntities(this.store, this.changes, entityType, field, id, this.region);
  }

  flush(): void {
    this.store.writeChanges(this.blockNumber, this.changes, this.region);
    this.changes.clear();
  }
}
