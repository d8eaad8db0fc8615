// The SQLite store on its own: a block's write buffer (EntityStoreTx) shows the block its own
// writes, a transaction that never commits leaves nothing behind, a revert restores exactly the
// versions of the ancestor block, and a file made for another deployment is refused.
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../indexer/store/sqlite-store.ts';
import {
  BI,
  createFixture,
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

  it('refuses a store file made for another deployment', () => {
    fixture = createFixture();
    expect(() => openStore({ path: fixture!.path, schema, startBlock: 10, deployment: 'Lother' })).toThrow(
      `holds deployment ${deployment}`,
    );
  });
});
