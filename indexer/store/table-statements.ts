// The prepared statements each entity table is read and written through on the hot path: a
// handler's load of the current version, the close of that version and the insert of the next.
// Apart from the store class because they follow from the table's layout alone (layout.ts), its
// causality-region column included, and the store only keeps one set per entity type.
import type Database from 'better-sqlite3';
import { OPEN_BLOCK, type TableLayout } from './layout.ts';

export interface TableStatements {
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

/** Prepares the statements of the table `layout` describes. */
export function prepareTableStatements(db: Database.Database, layout: TableLayout): TableStatements {
  const cols = ['"__from"', '"__to"'];
  if (layout.regioned) cols.push('"__region"');
  for (const c of layout.columns) {
    cols.push(c.sql);
    if (c.keySql) cols.push(c.keySql);
  }
  const current = `"id" = ? AND "__to" = ${OPEN_BLOCK}`;
  const region = (sql: string) => (layout.regioned ? ` AND "__region" = ${sql}` : '');
  return {
    layout,
    getCurrent: db.prepare(`SELECT * FROM ${layout.sql} WHERE ${current}${region('0')}`),
    hasCurrent: db.prepare(`SELECT 1 FROM ${layout.sql} WHERE ${current}${region('0')}`).pluck(),
    close: db.prepare(`UPDATE ${layout.sql} SET "__to" = ? WHERE ${current}${region('?')}`),
    insert: db.prepare(
      `INSERT INTO ${layout.sql} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
    ),
    otherRegion: layout.regioned
      ? db
          .prepare(
            `SELECT "__region" FROM ${layout.sql} WHERE "id" = ? AND "__to" = ${OPEN_BLOCK} AND "__region" <> ?`,
          )
          .pluck()
      : null,
  };
}
