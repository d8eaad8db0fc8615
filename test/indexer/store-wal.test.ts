// The store's WAL: it stays within its limit however fast commits follow each other (it used to
// grow to many times the database, until a disk with room for the data was full), it is folded into
// the database file on close so that the file alone holds every commit, a query still reading it
// holds indexing no more than TRUNCATE_WAIT_MS, and a checkpoint that fails is told once per kind. The disk tests run on a small tmpfs of their own (small-disk.ts), as root.
import Database from 'better-sqlite3';
import { copyFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type IndexerStore } from '../../indexer/store/sqlite-store.ts';
import { TRUNCATE_WAIT_MS } from '../../indexer/store/wal-limit.ts';
import { tempDirs } from './child-indexer.ts';
import { mountSmallDisk, type SmallDisk } from './small-disk.ts';
import { deployment, header, protocolEvent, schema, vault1, writeFixture } from './store-fixture.ts';

const cleanups: (() => void)[] = [];
const dirs = tempDirs();
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  dirs.removeAll();
});

function smallDisk(sizeKiB: number): SmallDisk {
  const disk = mountSmallDisk(sizeKiB);
  cleanups.push(() => disk.remove());
  return disk;
}

/** A store at `dir`/store.sqlite, closed after the test; `log` collects what it tells. */
function store(dir: string, walLimitBytes?: number): { store: IndexerStore; path: string; log: string[] } {
  const path = join(dir, 'store.sqlite');
  const log: string[] = [];
  const opened = openStore({
    path,
    schema,
    startBlock: 10,
    deployment,
    walLimitBytes,
    log: (l) => log.push(l),
  });
  cleanups.push(() => opened.close());
  return { store: opened, path, log };
}

/** Commits block `block` with `events` protocol events of its own. */
function commitEvents(s: IndexerStore, block: number, events: number): void {
  const w = s.blockWriter(block);
  for (let i = 0; i < events; i++) {
    const index = block * 1000 + i;
    w.set(
      'ProtocolEvent',
      '0x' + index.toString(16).padStart(8, '0'),
      protocolEvent(index, block, 'Bulk', BigInt(index), vault1),
    );
  }
  w.flush();
  s.commit(header(block), block);
}

const walSize = (path: string) => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;

describe('store WAL', () => {
  it('is within its limit whenever a transaction begins, however fast commits follow each other', () => {
    const limit = 256 * 1024;
    const { store: s, path } = store(dirs.make('store-wal-'), limit);
    const atBegin: number[] = [];
    const atCommit: number[] = [];
    for (let block = 10; block < 310; block++) {
      s.begin();
      atBegin.push(walSize(path));
      commitEvents(s, block, 20);
      atCommit.push(walSize(path));
    }
    // the commits took it past the limit, again and again
    expect(atCommit.filter((size) => size > limit).length).toBeGreaterThan(10);
    expect(Math.max(...atBegin)).toBeLessThanOrEqual(limit);
  });

  it('is left for a later truncation when a query still reads it after TRUNCATE_WAIT_MS, rather than holding indexing', () => {
    const limit = 256 * 1024;
    const { store: s, path } = store(dirs.make('store-wal-'), limit);
    let block = 10;
    do {
      s.begin();
      commitEvents(s, block++, 20);
    } while (walSize(path) <= limit);
    // a query worker's read transaction over the WAL as it stands
    const reader = new Database(path, { readonly: true });
    cleanups.push(() => reader.close());
    reader.exec('BEGIN');
    reader.prepare(`SELECT "number" FROM "__checkpoint"`).get();
    const started = performance.now();
    s.begin();
    const waited = performance.now() - started;
    // the writer's busy timeout is 5 s: the wait is TRUNCATE_WAIT_MS, with room for a slow machine
    expect(TRUNCATE_WAIT_MS).toBe(250);
    expect(waited).toBeGreaterThanOrEqual(TRUNCATE_WAIT_MS - 10);
    expect(waited).toBeLessThan(2_500);
    expect(walSize(path)).toBeGreaterThan(limit);
    commitEvents(s, block++, 20);
    reader.exec('COMMIT');
    // once the WAL has grown by the limit again, with no reader in the way, it is truncated
    const atBegin: number[] = [];
    for (const last = block + 80; block < last; block++) {
      s.begin();
      atBegin.push(walSize(path));
      commitEvents(s, block, 20);
    }
    expect(atBegin).toContain(0);
  });

  it('is folded into the database file on close, which then holds every commit alone, though another connection is open', () => {
    const dir = dirs.make('store-wal-');
    const { store: s, path } = store(dir);
    writeFixture(s, 13);
    // a reader of the file (a backup, the query API of another process) keeps its connection
    const reader = new Database(path, { readonly: true });
    cleanups.push(() => reader.close());
    expect(reader.prepare(`SELECT "number" FROM "__checkpoint"`).pluck().get()).toBe(13);
    s.close();
    expect(walSize(path)).toBe(0);
    const copy = join(dirs.make('store-wal-'), 'copy.sqlite');
    copyFileSync(path, copy);
    const alone = new Database(copy, { readonly: true });
    expect(alone.prepare(`SELECT "number" FROM "__checkpoint"`).pluck().get()).toBe(13);
    alone.close();
  });

  it('leaves room on a small disk for data that fits it, as the WAL used to fill it', () => {
    // 4 MiB, where the store takes some 2.6 MiB: the WAL alone grew past 35 MiB over these commits
    const { store: s, path } = store(smallDisk(4096).dir);
    for (let block = 10; block < 310; block++) {
      s.begin();
      commitEvents(s, block, 20);
    }
    expect(s.committed().number).toBe(309);
    expect(statSync(path).size).toBeGreaterThan(2 * 1024 * 1024);
  });

  it('tells a WAL checkpoint that failed on a full disk once, however often it fails', () => {
    // room for the new store (some 0.65 MiB, as much again in its first WAL) and its first commits
    const disk = smallDisk(1536);
    const { store: s, path, log } = store(disk.dir);
    // past the WAL the store's creation left, which the next begin() would truncate
    s.begin();
    commitEvents(s, 10, 0);
    // a reader whose snapshot predates the next commit keeps the checkpoints from copying it
    const reader = new Database(path, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare(`SELECT "number" FROM "__checkpoint"`).get();
    s.begin();
    commitEvents(s, 11, 50);
    // then the disk fills up: the commit's pages, new ones, cannot be copied into the file
    disk.fill();
    reader.exec('COMMIT');
    reader.close();
    // a transaction rolled back, as after a failure, has the next one begin with a checkpoint
    for (let attempt = 0; attempt < 3; attempt++) {
      s.begin();
      s.rollback();
    }
    expect(log).toEqual([
      `store: the WAL of ${path} could not be checkpointed into it (database or disk is full, SQLITE_FULL); it grows until a checkpoint succeeds: free space on its disk. Failures of this kind are told once`,
    ]);
  });
});
