// A store damaged on disk, as a failing disk or a copy taken mid-write leaves it: the root page of
// its NavRecord table zeroed, on the test's own chain. SQLite reads a page only when a statement
// needs it, so nothing at start-up would meet this one. The indexer must refuse such a store at
// start-up, and, when the damage appears while it runs, answer the queries that meet it with the
// store and what to do, report health failed, and stop indexing at the first write that meets it
// rather than retry it for ever.
import Database from 'better-sqlite3';
import { closeSync, openSync, writeSync } from 'node:fs';
import type { ExecutionResult } from 'graphql';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import { buildApiSchema } from '../../indexer/query/api-schema.ts';
import { executeQuery } from '../../indexer/query/execute-query.ts';
import { buildQueryModel } from '../../indexer/query/sql-query.ts';
import { StoreReader } from '../../indexer/query/store-reader.ts';
import { buildLayouts } from '../../indexer/store/layout.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { ChainActions } from './chain-actions.ts';
import { devnetIndexers } from './devnet-indexers.ts';
import { indexingStatusOf, queryErrorOf } from './graphql-client.ts';
import { tempDirs } from './child-indexer.ts';
import { onStore } from './store-dump.ts';
import { schema } from './store-fixture.ts';

let devnet: PrivateDevnet;
let actions: ChainActions;
/** the last block of the chain before the tests write more: a NAV draft for every fund */
let drafted: number;
const indexers = devnetIndexers(() => devnetContracts(devnet.deployment), 'store-damage-');
const dirs = tempDirs();

/** What SQLite says of a page it cannot read. */
const MALFORMED = 'database disk image is malformed, SQLITE_CORRUPT';

/** What the indexer says of the store at `path` once it meets the damage. */
const damaged = (path: string, problem: string) =>
  `the store ${path} is damaged (${problem}): delete it and its -wal and -shm files while the indexer is stopped, to index again from the start block`;

/** Writes zeros over the root page of `table` in the store file, behind SQLite's back; returns the page. */
function zeroRootPage(storePath: string, table: string): number {
  const db = new Database(storePath, { readonly: true, fileMustExist: true });
  const root = db
    .prepare(`SELECT "rootpage" FROM sqlite_master WHERE "name" = ?`)
    .pluck()
    .get(table) as number;
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.close();
  const fd = openSync(storePath, 'r+');
  try {
    writeSync(fd, Buffer.alloc(pageSize), 0, pageSize, (root - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
  return root;
}

/** An indexer of the chain into `dataDir`, stopped once it holds the drafts: the store file holds every commit. */
async function indexedStore(dataDir: string): Promise<string> {
  const indexer = await indexers.start(devnet.rpcUrl, { dataDir });
  await indexer.waitForBlock(drafted);
  await indexer.stop();
  return indexer.storePath;
}

beforeAll(async () => {
  devnet = await startPrivateDevnet();
  actions = new ChainActions(devnet.rpcUrl, devnet.deployment);
  drafted = await actions.draftAll(1, 1_000_000n);
}, 120_000);

afterAll(async () => {
  await indexers.stopAll();
  await devnet?.stop();
  dirs.removeAll();
});

describe('a store with a damaged page, the indexer stopped', () => {
  let dataDir: string;
  let storePath: string;
  /** the page zeroed */
  let root: number;

  beforeAll(async () => {
    dataDir = dirs.make('store-damage-start-');
    storePath = await indexedStore(dataDir);
    root = zeroRootPage(storePath, 'NavRecord');
  });
  afterEach(() => vi.restoreAllMocks());

  it('is refused at start-up, with what SQLite found where, as SQLITE_CORRUPT', async () => {
    await expect(indexers.start(devnet.rpcUrl, { dataDir })).rejects.toMatchObject({
      code: 'SQLITE_CORRUPT',
      message: expect.stringMatching(
        new RegExp(
          `^PRAGMA quick_check found: Tree ${root} page ${root}: btreeInitPage\\(\\) returns error code 11`,
        ),
      ),
    });
    // refused, the store was closed and its lock given back: a second start is refused the same way
    await expect(indexers.start(devnet.rpcUrl, { dataDir })).rejects.toMatchObject({
      code: 'SQLITE_CORRUPT',
    });
  });

  /** The answers to `times` queries reading the damaged page, through one reader, as a query worker runs them. */
  function queryDamagedPage(times: number): ExecutionResult[] {
    const reader = new StoreReader(storePath, 'any', 1);
    try {
      const api = {
        schema: buildApiSchema(buildQueryModel(schema, buildLayouts(schema))),
        subgraphErrors: true,
      };
      return Array.from({ length: times }, () =>
        executeQuery({ ...api, reader, storePath }, { query: '{ navRecords(first: 1) { id } }' }),
      );
    } finally {
      reader.close();
    }
  }

  it('answers a query reading the damaged page with the store, the damage and what to do', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const [answer] = queryDamagedPage(1);
    expect(answer!.errors?.map((e) => e.message)).toEqual([damaged(storePath, MALFORMED)]);
  });

  it('logs the damage once, without a stack, however many queries meet it', () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    queryDamagedPage(3);
    expect(logged.mock.calls).toEqual([[`indexer query failed: ${damaged(storePath, MALFORMED)}`]]);
  });
});

describe('a running indexer whose store gets a damaged page', () => {
  let indexer: Indexer;
  const lines: string[] = [];

  beforeAll(async () => {
    const dataDir = dirs.make('store-damage-running-');
    await indexedStore(dataDir);
    // started again on the store whole, it resumes; then the page is damaged under it
    indexer = await indexers.start(devnet.rpcUrl, { dataDir, log: (line) => lines.push(line) });
    await indexer.waitForBlock(drafted);
    zeroRootPage(indexer.storePath, 'NavRecord');
    // commits of another connection's, which leave the store as it was: every connection drops the
    // pages it holds, as after any commit it did not make, and reads the damaged one from the file
    onStore(
      indexer.storePath,
      `INSERT INTO "__info" VALUES ('touched', '1'); DELETE FROM "__info" WHERE "key" = 'touched'`,
    );
  });

  it('answers a query that reads the damaged page with the damage and what to do', async () => {
    expect(await queryErrorOf(indexer.queryUrl, '{ navRecords(first: 1) { id } }')).toBe(
      damaged(indexer.storePath, MALFORMED),
    );
  });

  it('reports health failed in the status API, naming the store, once a query met the damage', async () => {
    await queryErrorOf(indexer.queryUrl, '{ navRecords(first: 1) { id } }');
    expect(
      await indexingStatusOf(
        indexer.queryUrl,
        'health fatalError { message deterministic block { number } }',
      ),
    ).toEqual({
      health: 'failed',
      fatalError: { message: damaged(indexer.storePath, MALFORMED), deterministic: false, block: null },
    });
  });

  it('stops indexing at the first write that meets the damage, saying what to do, without retrying', async () => {
    const next = await actions.draftAll(2, 1_100_000n);
    const message = damaged(indexer.storePath, MALFORMED);
    await expect(indexer.waitForBlock(next)).rejects.toThrow(message);
    expect(lines.filter((line) => line.startsWith('indexing stopped: '))).toEqual([
      `indexing stopped: ${message}`,
    ]);
    expect(lines.filter((line) => line.startsWith('indexer failed: '))).toEqual([]);
    expect(indexer.status()).toMatchObject({ checkpoint: drafted, fatalError: message });
  });
});
