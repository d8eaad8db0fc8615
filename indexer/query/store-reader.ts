// Read-only access to the indexer's SQLite file for the query API. It has its own connection, so
// queries see only committed blocks (WAL readers never see a half-written batch), and each request
// runs inside one read transaction, so all of its reads see the same snapshot even if the follower
// commits, or reverts a reorg, meanwhile.
import Database from 'better-sqlite3';
import { OPEN_BLOCK, type TableLayout } from '../store/layout.ts';
import { queryBytes } from './scalars.ts';
import {
  readCheckpoint,
  readEarliestBlock,
  readFatalErrorContext,
  readFirstErrorBlock,
  readHandlerErrors,
  readPausedAt,
  readStoredBlock,
  readSynced,
  type HandlerErrorRecord,
  type BlockHeader,
} from '../store/meta-tables.ts';
import { compileById, QueryError, type SqlFragment } from './sql-query.ts';

/** A `block` argument graph-node cannot locate: it fails the whole query (resolver.rs locate_blocks). */
export class BlockLocationError extends QueryError {}

export interface LatestBlock {
  number: number;
  header: BlockHeader | null;
  fatalError: string | null;
  /** the chain head the follower saw at its last commit */
  headSeen: number | null;
  /**
   * graph-node's earliest_block_number: the block before the first one indexed (min startBlock - 1,
   * at least 0), or the first block whose state the store holds once pruning removed older history
   */
  earliest: number;
  /** the first block with an indexing error, fatal or not; null if none */
  firstErrorBlock: number | null;
}

export interface BlockHeightArg {
  hash?: Buffer | null;
  number?: number | null;
  number_gte?: number | null;
}

export class StoreReader {
  private readonly db: Database.Database;

  constructor(
    path: string,
    readonly deployment: string,
    /** the first block the subgraph indexes (the smallest startBlock of its data sources) */
    private readonly startBlock: number,
  ) {
    this.db = new Database(path, { readonly: true, fileMustExist: true });
    this.db.defaultSafeIntegers(true);
    // sorts that spill stay in memory: the service writes no file outside its DATA_DIR
    this.db.pragma('temp_store = MEMORY');
  }

  /** Runs `fn` in one read transaction (a consistent snapshot). */
  read<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  latest(): LatestBlock {
    const checkpoint = readCheckpoint(this.db);
    return {
      number: checkpoint.number,
      header: checkpoint.block,
      fatalError: checkpoint.fatalError,
      headSeen: checkpoint.headSeen,
      earliest: readEarliestBlock(this.db) ?? Math.max(0, this.startBlock - 1),
      firstErrorBlock: readFirstErrorBlock(this.db, checkpoint),
    };
  }

  fatalErrorContext(): { block: number | null; handler: string | null } {
    return readFatalErrorContext(this.db);
  }

  /** The handler errors indexing went past (nonFatalErrors), in block order. */
  handlerErrors(): HandlerErrorRecord[] {
    return readHandlerErrors(this.db);
  }

  /** Whether the subgraph has ever caught up with the chain head (graph-node's `synced`). */
  synced(): boolean {
    return readSynced(this.db);
  }

  /** Where indexing is paused after a handler error; null if it is not. */
  pausedAt(): number | null {
    return readPausedAt(this.db);
  }

  /** The entities that exist now, over all the given tables. */
  entityCount(tables: Iterable<TableLayout>): bigint {
    let count = 0n;
    for (const table of tables) {
      count += this.db
        .prepare(`SELECT count(*) FROM ${table.sql} WHERE "__to" = ${OPEN_BLOCK}`)
        .pluck()
        .get() as bigint;
    }
    return count;
  }

  /** The versions block `number` wrote to a table. */
  versionsFrom(table: TableLayout, number: number): Record<string, unknown>[] {
    return this.db
      .prepare(`SELECT * FROM ${table.sql} WHERE "__from" = ? ORDER BY "id"`)
      .all(number) as Record<string, unknown>[];
  }

  /** The ids of a table's entities that block `number` removed (closed without writing a new version). */
  removedAt(table: TableLayout, number: number): unknown[] {
    return this.db
      .prepare(
        `SELECT t."id" FROM ${table.sql} t WHERE t."__to" = ? AND NOT EXISTS (SELECT 1 FROM ${table.sql} n WHERE n."id" = t."id" AND n."__from" = t."__to") ORDER BY t."id"`,
      )
      .pluck()
      .all(number);
  }

  storedBlock(number: number): BlockHeader | null {
    return readStoredBlock(this.db, number);
  }

  private blockNumberOfHash(hash: Buffer): number | null {
    const n = this.db.prepare(`SELECT "number" FROM "__blocks" WHERE "hash" = ?`).pluck().get(hash);
    return n === undefined ? null : Number(n);
  }

  /**
   * The block number a `block: Block_height` argument selects, with graph-node's errors
   * (resolver.rs locate_blocks): a block given by number or hash must be one the subgraph holds.
   */
  resolveBlock(arg: BlockHeightArg | null | undefined, latest: LatestBlock): number {
    if (!arg) return latest.number;
    const given = [arg.hash, arg.number, arg.number_gte].filter((v) => v !== undefined && v !== null);
    if (given.length !== 1) {
      throw new BlockLocationError(
        'Failed to decode `block` value: exactly one of `hash`, `number`, `number_gte` is required',
      );
    }
    if (arg.number_gte !== undefined && arg.number_gte !== null) {
      if (latest.number < arg.number_gte)
        throw this.notYetIndexed('block.number_gte', latest, arg.number_gte);
      return latest.number;
    }
    const number = arg.hash ? this.blockNumberOfHash(arg.hash) : arg.number!;
    if (number === null) {
      throw new BlockLocationError('Failed to decode `block.hash` value: `no block with that hash found`');
    }
    // graph-node's block_queryable, whose errors say `block.number` for a hash too
    if (number > latest.number) throw this.notYetIndexed('block.number', latest, number);
    if (number < latest.earliest) {
      throw new BlockLocationError(
        `Failed to decode \`block.number\` value: \`subgraph ${this.deployment} only has data starting at block number ${latest.earliest} and data for block number ${number} is therefore not available\``,
      );
    }
    return number;
  }

  private notYetIndexed(what: string, latest: LatestBlock, number: number): BlockLocationError {
    return new BlockLocationError(
      `Failed to decode \`${what}\` value: \`subgraph ${this.deployment} has only indexed up to block number ${latest.number} and data for block number ${number} is therefore not yet available\``,
    );
  }

  byId(table: TableLayout, id: unknown, block: number): Record<string, unknown> | undefined {
    return this.db.prepare(compileById(table, block)).get(id) as Record<string, unknown> | undefined;
  }

  all(fragment: SqlFragment): Record<string, unknown>[] {
    return this.db.prepare(fragment.sql).all(...fragment.params) as Record<string, unknown>[];
  }

  close(): void {
    this.db.close();
  }
}

/** An id argument as the SQL value of a table's id column. */
export function idArgument(table: TableLayout, id: string): unknown {
  if (table.idKind === 'Bytes') return queryBytes(id) ?? invalidId(table, id);
  if (table.idKind !== 'Int8') return id;
  try {
    return BigInt(id);
  } catch {
    return invalidId(table, id);
  }
}

function invalidId(table: TableLayout, id: string): never {
  throw new QueryError(`Failed to decode \`id\` value: \`${id}\` is not a valid ${table.idKind} id`);
}
