// The indexer's SQLite store. Entity versions carry block ranges [__from, __to) so that a query can
// read the state at any past block and a reorg can be undone by deleting the versions a dropped
// block wrote and reopening the ones it closed. Everything a block changes (entity versions, dynamic
// data sources, its header) and the checkpoint that says the block is done are written in the same
// SQLite transaction, so a crash at any instant leaves either all of a block or none of it. File
// data sources are kept with the block that created them and the block whose pass ran their
// handler, so a reorg forgets the one and fetches the file again for the other.
//
// Beside it: meta-tables.ts (the meta tables and their reads, shared with the query API),
// table-statements.ts (each entity table's statements), block-write-buffer.ts (a block's writes
// before they reach SQL), wal-limit.ts (the WAL kept within its limit) and store-errors.ts.
import Database from 'better-sqlite3';
import type { SubgraphSchema } from '../subgraph-schema.ts';
import type { Entity } from './entity.ts';
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
import { BlockWriteBuffer } from './block-write-buffer.ts';
import {
  STORE_LAYOUT,
  checkLayout,
  headerFromRow,
  metaDdl,
  readCheckpoint,
  readEarliestBlock,
  readFatalErrorContext,
  readInfo,
  readPausedAt,
  readStoredBlock,
  readSynced,
  type BlockHeader,
  type Checkpoint,
} from './meta-tables.ts';
import { ImmutableEntityConflict } from './store-errors.ts';
import { prepareTableStatements, type TableStatements } from './table-statements.ts';
import { WAL_LIMIT_BYTES, WalLimit } from './wal-limit.ts';

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
 * How far the history held may exceed the history kept before it is pruned: graph-node's
 * GRAPH_STORE_HISTORY_SLACK_FACTOR default, so that pruning runs every fifth of the history kept.
 */
const HISTORY_SLACK_FACTOR = 1.2;

/**
 * Whether `error` is SQLite finding the store's file damaged, or no SQLite file at all: unlike a full
 * disk, no wait mends it.
 */
export function isStoreDamage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/**
 * What the indexer says of a damaged store, at start-up, when indexing stops on it and when a query
 * meets it: the file (where known), what SQLite found (`problem`), and the remedy.
 */
export function damagedStoreMessage(path: string | undefined, problem: string): string {
  const store = path === undefined ? "the indexer's store" : `the store ${path}`;
  return `${store} is damaged (${problem}): delete it and its -wal and -shm files while the indexer is stopped, to index again from the start block`;
}

/** The most problems PRAGMA quick_check lists: one shows the store is damaged, a few show where. */
const QUICK_CHECK_PROBLEMS = 3;

/**
 * Refuses a store SQLite finds damaged, as SQLite's own SQLITE_CORRUPT would say it. SQLite reads a
 * page only when a statement needs it, so a damaged page of a table nothing reads at start-up
 * would otherwise fail every query and write that reaches it, with no remedy said. quick_check
 * reads every page once: for the benchmark's store (138,711 events, 160 MB) 0.1 to 0.3 s with the
 * file in the OS cache, 2 to 4 s read cold from disk, once per start. integrity_check, which also
 * compares each index with its table, takes some 15 times as long.
 */
function refuseIfDamaged(db: Database.Database): void {
  const found = db.prepare(`PRAGMA quick_check(${QUICK_CHECK_PROBLEMS})`).pluck().all() as string[];
  if (found.length === 1 && found[0] === 'ok') return;
  // a problem may take several lines; the first names the database checked
  const lines = found.flatMap((problem) => problem.split('\n')).filter((line) => !line.startsWith('*** '));
  const shown = lines.slice(0, QUICK_CHECK_PROBLEMS).join('; ');
  throw Object.assign(
    new Error(`PRAGMA quick_check found: ${shown}${lines.length > QUICK_CHECK_PROBLEMS ? '; …' : ''}`),
    { code: 'SQLITE_CORRUPT' },
  );
}

/** Sets the writer's connection up as the writer needs it. */
function setUpWriterConnection(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  // WAL with synchronous=NORMAL is durable against process crashes (the case we guard against);
  // only an OS crash could lose the last commits, which the follower then re-indexes.
  db.pragma('synchronous = NORMAL');
  // Checkpoints (copying the WAL into the database file, then fsync) run on a worker thread rather
  // than inside the writer's commits. 8 MiB of page cache keeps hot index pages (16 MiB was no faster).
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('cache_size = -8192');
  // the statement journal of writeChanges' savepoint stays in memory, not in a file under TMPDIR
  db.pragma('temp_store = MEMORY');
  db.defaultSafeIntegers(true);
}

/**
 * Creates the meta tables and the entity tables of `layouts` in a new store, or checks that an
 * existing one was made by this layout for this deployment; called inside a transaction.
 */
function createOrCheckTables(
  db: Database.Database,
  layouts: ReadonlyMap<string, TableLayout>,
  options: StoreOptions,
): void {
  const ddl = [...metaDdl, ...[...layouts.values()].flatMap(tableDdl)];
  checkLayout(db, options.path, ddl);
  for (const statement of ddl) db.exec(statement);
  const stored = readInfo(db, 'deployment');
  if (stored === undefined) {
    db.prepare(`INSERT INTO "__info" VALUES ('deployment', ?)`).run(options.deployment);
    db.prepare(`INSERT INTO "__checkpoint" ("only", "number") VALUES (1, ?)`).run(options.startBlock - 1);
  } else if (stored !== options.deployment) {
    throw new Error(
      `${options.path} holds deployment ${stored}, not ${options.deployment}; use another DATA_DIR or delete the file`,
    );
  }
  db.prepare(`INSERT OR IGNORE INTO "__info" VALUES ('layout', ?)`).run(String(STORE_LAYOUT));
}

/** Opens (creating if needed) the store at `options.path` and prepares its statements. */
export function openStore(options: StoreOptions): IndexerStore {
  return new IndexerStore(options);
}

export class IndexerStore {
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
  private readonly wal: WalLimit;
  private committedCheckpoint: Checkpoint;
  private readonly historyBlocks: number;
  private earliest: number;

  constructor(options: StoreOptions) {
    this.layouts = buildLayouts(options.schema, options.fileEntityTypes);
    this.startBlock = options.startBlock;
    this.db = new Database(options.path);
    try {
      setUpWriterConnection(this.db);
      refuseIfDamaged(this.db);
      this.db.transaction(() => createOrCheckTables(this.db, this.layouts, options))();
    } catch (error) {
      // a store refused is closed at once: its caller gets no store to close
      this.db.close();
      throw error;
    }
    this.wal = new WalLimit(
      this.db,
      options.path,
      options.walLimitBytes ?? WAL_LIMIT_BYTES,
      options.log ?? ((line) => console.error(line)),
    );
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
      this.tables.set(layout.entity.name, prepareTableStatements(this.db, layout));
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
    this.wal.truncateIfPastLimit();
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
    this.wal.truncateAtNextBegin();
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
      this.revertEntityVersions(number);
      this.forgetRecordsAfter(number);
      this.unfailAfter(number);
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

  /** Deletes the versions written after block `number` and reopens those closed after it. */
  private revertEntityVersions(number: number): void {
    for (const { layout } of this.tables.values()) {
      this.db.prepare(`DELETE FROM ${layout.sql} WHERE "__from" > ?`).run(number);
      this.db
        .prepare(
          `UPDATE ${layout.sql} SET "__to" = ${OPEN_BLOCK} WHERE "__to" > ? AND "__to" <> ${OPEN_BLOCK}`,
        )
        .run(number);
    }
  }

  /**
   * Forgets what the blocks after `number` recorded beside their entities: their headers, the data
   * sources they created, the file handlers their passes ran, and their handler errors.
   */
  private forgetRecordsAfter(number: number): void {
    this.db.prepare(`DELETE FROM "__blocks" WHERE "number" > ?`).run(number);
    // back before the history kept (a reorg deeper than it): everything is indexed again
    if (number < this.earliest) this.db.exec(`DELETE FROM "__info" WHERE "key" = 'earliest_block'`);
    this.db.prepare(`DELETE FROM "__data_sources" WHERE "created_block" > ?`).run(number);
    this.db.prepare(`DELETE FROM "__file_data_sources" WHERE "created_block" > ?`).run(number);
    this.db.prepare(`UPDATE "__file_data_sources" SET "done_at" = NULL WHERE "done_at" > ?`).run(number);
    this.db.prepare(`DELETE FROM "__errors" WHERE "block" > ?`).run(number);
  }

  /** Clears the failure and the pause of a block after `number`, so that it is run again. */
  private unfailAfter(number: number): void {
    // a failed (or paused) block reverted is run again, as graph-node unfails a reverted failure
    if ((readFatalErrorContext(this.db).block ?? -Infinity) > number) {
      this.db.exec(`UPDATE "__checkpoint" SET "fatal_error" = NULL`);
      this.db.exec(`DELETE FROM "__info" WHERE "key" IN ('fatal_block', 'fatal_handler')`);
    }
    if ((readPausedAt(this.db) ?? -Infinity) > number) this.setPausedAt(null);
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
    this.wal.truncate();
    this.wal.stop();
    this.db.close();
  }
}
