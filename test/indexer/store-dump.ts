// Reads every entity version of an indexer store file (read-only) into plain, comparable data:
// per table, rows without the storage-internal vid, ordered by id and block range. Two stores that
// indexed the same chain must dump identically, however their runs were interrupted or reorged.
// Also runs SQL on a store file, for the tests that make a running indexer's store fail.
import Database from 'better-sqlite3';

/** The names of a store's entity tables (the store's own tables start with `__`). */
export function entityTables(db: Database.Database): string[] {
  return db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_\\_%' ESCAPE '\\'`)
    .pluck()
    .all() as string[];
}

export function dumpEntityVersions(storePath: string): Record<string, Record<string, unknown>[]> {
  const db = new Database(storePath, { readonly: true, fileMustExist: true });
  try {
    const tables = entityTables(db);
    const out: Record<string, Record<string, unknown>[]> = {};
    for (const table of tables.sort()) {
      const rows = db.prepare(`SELECT * FROM "${table}" ORDER BY "id", "__from"`).all() as Record<
        string,
        unknown
      >[];
      out[table] = rows.map((row) => {
        const plain: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(row)) {
          if (k === '__vid') continue;
          plain[k] = Buffer.isBuffer(v) ? '0x' + v.toString('hex') : v;
        }
        return plain;
      });
    }
    return out;
  } finally {
    db.close();
  }
}

/** Runs `sql` on the store file through a connection of the test's own, as another process would. */
export function onStore(storePath: string, sql: string): void {
  const db = new Database(storePath, { fileMustExist: true });
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}
