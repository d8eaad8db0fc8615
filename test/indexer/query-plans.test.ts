// The plans SQLite makes of the SQL the query compiler writes, over the real store of the real
// schema: which index each kind of query reads, so that a page, a filter or a lookup costs what
// it reads rather than the size of its table. SQLite plans without statistics (the store runs no
// ANALYZE), so the fixture's few rows give the plans a store of any size gets.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildQueryModel,
  compileById,
  compileCollection,
  type CollectionArgs,
  type QueryModel,
  type SqlFragment,
} from '../../indexer/query/sql-query.ts';
import { openStore } from '../../indexer/store/sqlite-store.ts';
import { createFixture, schema, vault1, vault2, writeFixture, type Fixture } from './store-fixture.ts';

let fixture: Fixture;
let model: QueryModel;

beforeAll(() => {
  fixture = createFixture();
  writeFixture(fixture.store);
  model = buildQueryModel(schema, fixture.store.layouts);
});

afterAll(() => fixture?.cleanup());

/** The head of the fixture's history, and a block before most of it. */
const HEAD = 13;
const EARLY = 10;

/** EXPLAIN QUERY PLAN of `fragment`, one line per step. */
function planOf(fragment: SqlFragment): string[] {
  const rows = fixture.store.db.prepare(`EXPLAIN QUERY PLAN ${fragment.sql}`).all(...fragment.params) as {
    detail: string;
  }[];
  return rows.map((r) => r.detail);
}

function collectionPlan(entity: string, args: CollectionArgs, block: number): string[] {
  return planOf(compileCollection(model, model.layouts.get(entity)!, args, block));
}

describe('the first page of a collection ordered by an indexed column', () => {
  it('reads the column’s index in order at the head and at an early block, sorting only ties', () => {
    const args: CollectionArgs = { first: 1000, orderBy: 'sortKey', orderDirection: 'desc' };
    const plan = [
      'SCAN t0 USING INDEX ProtocolEvent__by_sortKey',
      'USE TEMP B-TREE FOR LAST TERM OF ORDER BY',
    ];
    expect(collectionPlan('ProtocolEvent', args, HEAD)).toEqual(plan);
    expect(collectionPlan('ProtocolEvent', args, EARLY)).toEqual(plan);
  });

  it('filtered by a reference, reads the reference’s index up to the block', () => {
    const args: CollectionArgs = { where: { fund: vault1 }, orderBy: 'epoch', orderDirection: 'desc' };
    expect(collectionPlan('NavRecord', args, EARLY)).toEqual([
      'SEARCH t0 USING INDEX NavRecord__ref_fund (fund=? AND __from<?)',
      'USE TEMP B-TREE FOR ORDER BY',
    ]);
  });
});

describe('an entity looked up by id at a block', () => {
  /** the newest version at or before the block, read from the end of its (id, __from) range */
  const seek = (alias: string) => `SEARCH ${alias} USING COVERING INDEX Fund__id_range (id=? AND __from<?)`;

  it('reads one entry of the (id, __from) index, the newest version at or before the block', () => {
    const sql = compileById(model.layouts.get('Fund')!, EARLY);
    expect(sql).toContain('ORDER BY t0."__from" DESC LIMIT 1');
    expect(planOf({ sql, params: [Buffer.from(vault1.slice(2), 'hex')] })).toEqual([
      'CO-ROUTINE (subquery-1)',
      'SEARCH t0 USING INDEX Fund__id_range (id=? AND __from<?)',
      'SCAN (subquery-1)',
    ]);
  });

  it('by an id filter, is that seek, then the version by its rowid', () => {
    expect(collectionPlan('Fund', { where: { id: vault1 } }, EARLY)).toEqual([
      'SEARCH t0 USING INTEGER PRIMARY KEY (rowid=?)',
      'SCALAR SUBQUERY 1',
      seek('t1'),
    ]);
  });

  it('by an id_in filter, is that seek for each id', () => {
    expect(collectionPlan('Fund', { where: { id_in: [vault1, vault2] } }, EARLY)).toEqual([
      'SEARCH t0 USING INTEGER PRIMARY KEY (rowid=?)',
      'LIST SUBQUERY 2',
      'SCAN j VIRTUAL TABLE INDEX 1:',
      'CORRELATED SCALAR SUBQUERY 1',
      seek('t1'),
      'CREATE BLOOM FILTER',
      'USE TEMP B-TREE FOR ORDER BY',
    ]);
  });
});

describe('a collection ordered by a field of the entity a reference names', () => {
  it('finds that entity’s version at the block once per row, by a seek', () => {
    for (const orderDirection of ['asc', 'desc'] as const) {
      expect(collectionPlan('Request', { orderBy: 'fund__slug', orderDirection }, HEAD)).toEqual([
        'SCAN t0',
        'CORRELATED SCALAR SUBQUERY 1',
        'SEARCH t1 USING INDEX Fund__id_range (id=? AND __from<?)',
        'USE TEMP B-TREE FOR ORDER BY',
      ]);
    }
  });
});

describe('a collection filtered by a String, Bytes, enum or Boolean attribute', () => {
  it('reads the index of a Bytes attribute’s prefix, for equality and _in', () => {
    expect(collectionPlan('Request', { where: { account: vault1 } }, HEAD)).toEqual([
      'SEARCH t0 USING INDEX Request__by_account (<expr>=?)',
      'USE TEMP B-TREE FOR ORDER BY',
    ]);
    expect(collectionPlan('Request', { where: { account_in: [vault1, vault2] } }, HEAD)[0]).toBe(
      'SEARCH t0 USING INDEX Request__by_account (<expr>=?)',
    );
  });

  it('reads the index of a String attribute’s prefix, for equality, _in and ranges', () => {
    const args = (where: Record<string, unknown>): CollectionArgs => ({
      where,
      orderBy: 'sortKey',
      orderDirection: 'desc',
    });
    expect(collectionPlan('ProtocolEvent', args({ eventName: 'FundClosed' }), HEAD)).toEqual([
      'SEARCH t0 USING INDEX ProtocolEvent__by_eventName (<expr>=?)',
      'USE TEMP B-TREE FOR ORDER BY',
    ]);
    expect(collectionPlan('ProtocolEvent', args({ eventName_in: ['A', 'B'] }), HEAD)[0]).toBe(
      'SEARCH t0 USING INDEX ProtocolEvent__by_eventName (<expr>=?)',
    );
    expect(collectionPlan('ProtocolEvent', args({ eventName_gt: 'A', eventName_lte: 'B' }), HEAD)[0]).toBe(
      'SEARCH t0 USING INDEX ProtocolEvent__by_eventName (<expr>>? AND <expr><?)',
    );
  });

  it('reads the index of an enum or a Boolean attribute', () => {
    expect(collectionPlan('Request', { where: { kind: 'Redemption' } }, HEAD)[0]).toBe(
      'SEARCH t0 USING INDEX Request__by_kind (kind=?)',
    );
    expect(collectionPlan('Fund', { where: { closed: true } }, HEAD)[0]).toBe(
      'SEARCH t0 USING INDEX Fund__by_closed (closed=?)',
    );
  });

  it('nested under a reference, reads the index of the referenced entity’s attribute', () => {
    expect(collectionPlan('Request', { where: { fund_: { slug: 'alpha-income' } } }, HEAD)).toContain(
      'SEARCH t1 USING INDEX Fund__by_slug (<expr>=?)',
    );
  });
});

describe('a store made before the attribute indexes', () => {
  it('gains them when it is opened', () => {
    const old = createFixture();
    const indexes = () =>
      old.store.db
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB '*__by_*' ORDER BY name`)
        .pluck()
        .all() as string[];
    const all = indexes();
    // the indexes an earlier store had: numbers' only
    const attributes = [...old.store.layouts.values()].flatMap((table) =>
      table.columns
        .filter((c) => !c.list && c.field.name !== 'id' && c.field.kind !== 'Entity')
        .filter((c) => c.prefix !== undefined || c.valueKind === 'String' || c.valueKind === 'Boolean')
        .map((c) => `${table.entity.name}__by_${c.field.name}`),
    );
    expect(attributes).toContain('ProtocolEvent__by_args');
    for (const name of attributes) old.store.db.exec(`DROP INDEX "${name}"`);
    expect(indexes()).toEqual(all.filter((name) => !attributes.includes(name)));
    old.store.close();
    const reopened = openStore({ path: old.path, schema, startBlock: 10, deployment: 'QmStoreFixture' });
    try {
      const names = reopened.db
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB '*__by_*' ORDER BY name`)
        .pluck()
        .all();
      expect(names).toEqual(all);
    } finally {
      reopened.close();
      rmSync(old.dir, { recursive: true, force: true });
    }
  });
});
