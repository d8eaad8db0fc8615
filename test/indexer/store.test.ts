// The SQLite store on its own: a block's write buffer (EntityStoreTx) shows the block its own
// writes, a transaction that never commits leaves nothing behind, a revert restores exactly the
// versions of the ancestor block (and forgets the errors of the blocks it removes), a failed
// handler's or block's writes can be taken back alone, and a file made for another deployment or
// another layout is refused. A store keeping a few blocks of history reverts within them, and
// starts over after a reorg deeper than them.
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { OPEN_BLOCK } from '../../indexer/store/layout.ts';
import {
  STORE_LAYOUT,
  readEarliestBlock,
  readFirstErrorBlock,
  readHandlerErrors,
} from '../../indexer/store/meta-tables.ts';
import { openStore, type IndexerStore } from '../../indexer/store/sqlite-store.ts';
import {
  BI,
  I,
  S,
  commitBlock,
  createFixture,
  entity,
  deployment,
  fund,
  header,
  navId,
  schema,
  vault1,
  vault2,
  writeFixture,
  type Fixture,
} from './store-fixture.ts';
import { dumpEntityVersions } from './store-dump.ts';
import { parseSubgraphSchema } from '../../indexer/subgraph-schema.ts';

let fixture: Fixture | undefined;
afterEach(() => {
  fixture?.cleanup();
  fixture = undefined;
});

describe('indexer store', () => {
  it('lets a block read its own writes and removals, whatever the case of a Bytes id', () => {
    fixture = createFixture();
    const { store } = fixture;
    store.begin();
    const w = store.blockWriter(10);
    expect(w.get('Fund', vault1)).toBeNull();
    w.set('Fund', vault1.toUpperCase().replace('0X', '0x'), fund(vault1, 'a', false, [], 10));
    expect(w.get('Fund', vault1)?.get('slug')).toEqual({ kind: 'String', value: 'a' });
    w.remove('Fund', vault1);
    expect(w.get('Fund', vault1)).toBeNull();
    w.set('Fund', vault2, fund(vault2, 'b', false, [], 10));
    expect(() => w.get('Fund', '0xzz')).toThrow('invalid Bytes id');
    w.flush();
    store.commit(header(10), 10);
    expect(store.getCurrent('Fund', vault1)).toBeNull();
    expect(store.getCurrent('Fund', vault2)?.get('registeredAtBlock')).toEqual(BI(10n));
  });

  it('leaves no trace of a transaction that never committed', () => {
    fixture = createFixture();
    writeFixture(fixture.store, 11);
    const before = dumpEntityVersions(fixture.path);
    fixture.store.begin();
    const w = fixture.store.blockWriter(12);
    w.set('Fund', vault2, fund(vault2, 'changed', true, [], 12));
    w.flush();
    fixture.store.close(); // the process dies here: no commit
    const reopened = openStore({ path: fixture.path, schema, startBlock: 10, deployment });
    expect(reopened.checkpoint().number).toBe(11);
    reopened.close();
    expect(dumpEntityVersions(fixture.path)).toEqual(before);
    fixture.store = openStore({ path: fixture.path, schema, startBlock: 10, deployment });
  });

  it('reverts to an ancestor: newer versions and data sources go, closed versions reopen', () => {
    fixture = createFixture();
    writeFixture(fixture.store, 11);
    const at11 = dumpEntityVersions(fixture.path);
    writeFixture(fixture.store, 13, 12);
    fixture.store.begin();
    fixture.store.recordDataSource({
      template: 'FundVault',
      address: vault2,
      context: null,
      createdAtBlock: 12,
    });
    fixture.store.commit(header(14), 14);
    fixture.store.revertTo(fixture.store.storedBlock(11));
    expect(fixture.store.checkpoint().number).toBe(11);
    expect(fixture.store.checkpoint().block?.hash).toBe(header(11).hash);
    expect(fixture.store.dataSources()).toEqual([]);
    expect(fixture.store.storedBlock(12)).toBeNull();
    expect(dumpEntityVersions(fixture.path)).toEqual(at11);
    expect(fixture.store.getCurrent('NavRecord', navId(vault1, 1))?.get('status')).toEqual({
      kind: 'String',
      value: 'Published',
    });
  });

  it("takes back a failed handler's writes to a block's buffer, and only those made since its mark", () => {
    fixture = createFixture();
    const { store } = fixture;
    store.begin();
    const w = store.blockWriter(10);
    w.set('Fund', vault1, fund(vault1, 'kept', false, [], 10));
    w.mark();
    w.set('Fund', vault1, fund(vault1, 'changed', false, [], 10));
    w.set('Fund', vault2, fund(vault2, 'added', false, [], 10));
    w.remove('Fund', vault1);
    w.undo();
    expect(w.get('Fund', vault1)?.get('slug')).toEqual({ kind: 'String', value: 'kept' });
    expect(w.get('Fund', vault2)).toBeNull();
    w.flush();
    store.commit(header(10), 10);
    expect(store.getCurrent('Fund', vault1)?.get('slug')).toEqual({ kind: 'String', value: 'kept' });
    expect(store.getCurrent('Fund', vault2)).toBeNull();
  });

  it("drops one block's writes from the open transaction, keeping the blocks' before it", () => {
    fixture = createFixture();
    const { store } = fixture;
    writeFixture(store, 10);
    store.begin();
    store.beginBlockWrites();
    const w = store.blockWriter(11);
    w.set('Fund', vault2, fund(vault2, 'from-11', false, [], 11));
    w.flush();
    store.beginBlockWrites();
    const failed = store.blockWriter(12);
    failed.set('Fund', vault1, fund(vault1, 'from-12', false, [], 12));
    failed.flush();
    store.dropBlockWrites();
    store.commit(header(12), 12);
    expect(store.getCurrent('Fund', vault2)?.get('slug')).toEqual({ kind: 'String', value: 'from-11' });
    expect(store.getCurrent('Fund', vault1)?.get('slug')).toEqual({ kind: 'String', value: 'alpha-income' });
    const versions = Object.values(dumpEntityVersions(fixture.path)).flat();
    expect(versions.filter((v) => Number(v.__from) === 12)).toEqual([]);
    expect(versions.filter((v) => Number(v.__from) === 11)).toHaveLength(1);
  });

  it('forgets the errors, the failure and the pause of the blocks a revert removes, and keeps those before', () => {
    fixture = createFixture();
    const { store } = fixture;
    writeFixture(store, 13);
    const error = (message: string) => [{ dataSource: 'FundVault', handler: 'handleNav', message }];
    store.begin();
    store.recordHandlerErrors(header(11), error('at 11'));
    store.recordHandlerErrors(header(13), error('at 13'));
    store.setPausedAt(13);
    store.recordFatalError('failed at 13', 13, 'handleNav');
    store.commit(header(13), 13);
    const db = new Database(fixture.path, { readonly: true });
    try {
      const firstError = () => readFirstErrorBlock(db, store.checkpoint());
      expect([firstError(), store.fatalErrorBlock, store.pausedAt]).toEqual([11, 13, 13]);
      store.revertTo(store.storedBlock(12));
      expect(readHandlerErrors(db).map((e) => [e.block, e.message])).toEqual([[11, 'at 11']]);
      expect([firstError(), store.fatalErrorBlock, store.pausedAt]).toEqual([11, null, null]);
      expect(store.checkpoint().fatalError).toBeNull();
      store.revertTo(store.storedBlock(10));
      expect(firstError()).toBeNull();
    } finally {
      db.close();
    }
  });

  it('drops a later block’s insert of an immutable entity marked skipDuplicates, keeping the first', () => {
    const sales = parseSubgraphSchema(
      'type Sale @entity(immutable: true, skipDuplicates: true) { id: ID! price: Int! }',
    );
    fixture = createFixture({ schema: sales });
    const { store } = fixture;
    const writes: [block: number, price: number][] = [
      [10, 1],
      [11, 2],
    ];
    for (const [block, price] of writes) {
      commitBlock(store, header(block), 11, (w) =>
        w.set('Sale', 's', entity({ id: S('s'), price: I(price) })),
      );
    }
    expect(store.getCurrent('Sale', 's')?.get('price')).toEqual(I(1));
    expect(store.checkpoint().number).toBe(11);
  });

  it('refuses a store file made for another deployment', () => {
    fixture = createFixture();
    expect(() => openStore({ path: fixture!.path, schema, startBlock: 10, deployment: 'Lother' })).toThrow(
      `holds deployment ${deployment}`,
    );
  });

  it('refuses a store of another layout, naming it and what to do', () => {
    const path = storeChangedBy(`UPDATE "__info" SET "value" = '0' WHERE "key" = 'layout'`);
    expect(() => openStore({ path, schema, startBlock: 10, deployment })).toThrow(
      `the store ${path} has layout 0, and this indexer keeps layout ${STORE_LAYOUT}: delete it and its -wal and -shm files to index again from the start block, or give this indexer another DATA_DIR`,
    );
  });

  it('takes a store made before its layout was kept for this layout when its tables are as this one makes them', () => {
    const path = storeChangedBy(`DELETE FROM "__info" WHERE "key" = 'layout'`);
    openStore({ path, schema, startBlock: 10, deployment }).close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare(`SELECT "value" FROM "__info" WHERE "key" = 'layout'`).pluck().get()).toBe(
      String(STORE_LAYOUT),
    );
    db.close();
  });

  it('refuses a store made before its layout was kept whose tables differ, naming the table', () => {
    const path = storeChangedBy(
      `DELETE FROM "__info" WHERE "key" = 'layout'; DROP INDEX "ProtocolEvent__by_fund"; ALTER TABLE "ProtocolEvent" DROP COLUMN "fund"`,
    );
    expect(() => openStore({ path, schema, startBlock: 10, deployment })).toThrow(
      `the store ${path} was made by an earlier indexer: its table "ProtocolEvent" is not as this one makes it: delete it and its -wal and -shm files to index again from the start block, or give this indexer another DATA_DIR`,
    );
  });
});

/** The path of the fixture's store, closed, then changed by `sql`. */
function storeChangedBy(sql: string): string {
  fixture = createFixture();
  writeFixture(fixture.store, 11);
  fixture.store.close();
  const db = new Database(fixture.path);
  db.exec(sql);
  db.close();
  return fixture.path;
}

/** Blocks 10..`last`, each renaming fund 1 after its block (`f<block>`). */
function renameEachBlock(store: IndexerStore, last: number): void {
  for (let block = 10; block <= last; block++) {
    commitBlock(store, header(block), last, (w) =>
      w.set('Fund', vault1, fund(vault1, `f${block}`, false, [], 10)),
    );
  }
}

function earliestIn(path: string): number | null {
  const db = new Database(path, { readonly: true });
  try {
    return readEarliestBlock(db);
  } finally {
    db.close();
  }
}

describe('indexer store keeping 5 blocks of history', () => {
  it('keeps the versions the blocks from 5 before its checkpoint see, and no older ones', () => {
    fixture = createFixture({ historyBlocks: 5 });
    renameEachBlock(fixture.store, 20);
    // pruned at 17 (to 12) and 19 (to 14): each time the history held passed 6 blocks
    expect(earliestIn(fixture.path)).toBe(14);
    expect(dumpEntityVersions(fixture.path).Fund!.map((v) => [v.slug, v.__from, v.__to])).toEqual([
      ['f14', 14, 15],
      ['f15', 15, 16],
      ['f16', 16, 17],
      ['f17', 17, 18],
      ['f18', 18, 19],
      ['f19', 19, 20],
      ['f20', 20, OPEN_BLOCK],
    ]);
  });

  it('reverts a reorg within that history as a store keeping all of it does', () => {
    fixture = createFixture({ historyBlocks: 5 });
    renameEachBlock(fixture.store, 20);
    fixture.store.revertTo(fixture.store.storedBlock(16));
    expect(fixture.store.getCurrent('Fund', vault1)?.get('slug')).toEqual({ kind: 'String', value: 'f16' });
    expect(earliestIn(fixture.path)).toBe(14);
  });

  it('starts over from its start block after a reorg deeper than that history', () => {
    fixture = createFixture({ historyBlocks: 5 });
    renameEachBlock(fixture.store, 20);
    expect(fixture.store.storedBlock(13)).toBeNull();
    fixture.store.revertTo(null);
    expect(fixture.store.checkpoint().number).toBe(9);
    expect(earliestIn(fixture.path)).toBeNull();
    expect(fixture.store.earliestBlock).toBe(10);
    expect(dumpEntityVersions(fixture.path).Fund).toEqual([]);
    renameEachBlock(fixture.store, 12);
    expect(dumpEntityVersions(fixture.path).Fund).toHaveLength(3);
  });
});
