// A store that refuses a write with a SQLite error no wait would explain (a trigger in the test's own
// store that fails every NavRecord insert), on the test's own chain. The indexer must not keep
// serving its last block as healthy: the index-node status API reports the failure (health failed,
// a non-deterministic fatalError, as graph-node reports such errors), indexing starts again after a
// wait, and once the store takes the write it goes on to exactly the store a clean run builds. (A
// damaged store, which no retry mends, stops indexing instead: store-damage.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { ChainActions } from './chain-actions.ts';
import { devnetIndexers, waitFor } from './devnet-indexers.ts';
import { indexingStatusOf, queryIndexer } from './graphql-client.ts';
import { dumpEntityVersions, onStore } from './store-dump.ts';

let devnet: PrivateDevnet;
let actions: ChainActions;
const indexers = devnetIndexers(() => devnetContracts(devnet.deployment), 'indexer-failure-');

/** what the trigger fails each NavRecord insert with (SQLITE_CONSTRAINT_TRIGGER) */
const REFUSED = 'the test refuses every NavRecord insert';

interface Status {
  health: string;
  fatalError: { message: string; deterministic: boolean; block: unknown; handler: unknown } | null;
}

const statusOf = (queryUrl: string) =>
  indexingStatusOf<Status>(queryUrl, 'health fatalError { message deterministic block { number } handler }');

const metaOf = async (queryUrl: string) =>
  (
    await queryIndexer<{ _meta: { block: { number: number }; hasIndexingErrors: boolean } }>(
      queryUrl,
      '{ _meta { block { number } hasIndexingErrors } }',
    )
  )._meta;

beforeAll(async () => {
  devnet = await startPrivateDevnet();
  actions = new ChainActions(devnet.rpcUrl, devnet.deployment);
  await actions.draftAll(1, 1_000_000n);
}, 120_000);

afterAll(async () => {
  await indexers.stopAll();
  await devnet?.stop();
});

describe('an indexer whose store fails a write with an error no wait explains', () => {
  let indexer: Indexer;
  const lines: string[] = [];
  /** the last block indexed before the store refused the write */
  let indexed: number;
  /** the block of the writes the store refuses */
  let drafted: number;
  const failure = `indexer failed: ${REFUSED};`;

  beforeAll(async () => {
    indexed = (await actions.head()).number;
    indexer = await indexers.start(devnet.rpcUrl, { log: (line) => lines.push(line) });
    await indexer.waitForBlock(indexed);
    onStore(
      indexer.storePath,
      `CREATE TRIGGER "refuse_nav" BEFORE INSERT ON "NavRecord" BEGIN SELECT RAISE(ABORT, '${REFUSED}'); END`,
    );
    drafted = await actions.draftAll(2, 1_100_000n);
    const failed = `${failure} nothing after block ${indexed} was kept, and indexing goes on from there in 1 s`;
    await waitFor(() => expect(lines.some((l) => l.split('\n')[0] === failed)).toBe(true));
  });

  it('reports health failed with the error, serving its last block', async () => {
    expect(await statusOf(indexer.queryUrl)).toEqual({
      health: 'failed',
      fatalError: { message: REFUSED, deterministic: false, block: null, handler: null },
    });
    expect(indexer.status()).toMatchObject({
      checkpoint: indexed,
      indexingError: REFUSED,
      storeError: null,
    });
    // as in graph-node, _meta's flag counts deterministic errors only
    expect(await metaOf(indexer.queryUrl)).toEqual({ block: { number: indexed }, hasIndexingErrors: false });
  });

  it('starts indexing again after a wait, failing the same write again', async () => {
    await waitFor(() => expect(lines.filter((l) => l.startsWith(failure)).length).toBeGreaterThanOrEqual(2));
  });

  it('goes on once the store takes the write, healthy again', async () => {
    onStore(indexer.storePath, `DROP TRIGGER "refuse_nav"`);
    await indexer.waitForBlock(drafted);
    expect(await statusOf(indexer.queryUrl)).toEqual({ health: 'healthy', fatalError: null });
    expect(indexer.status()).toMatchObject({ indexingError: null, storeError: null });
    expect(lines).toContain(`indexer: indexing went on past the failure (${REFUSED})`);
  });

  it('ends with exactly the store a clean run builds', async () => {
    const clean = await indexers.start(devnet.rpcUrl);
    await clean.waitForBlock(drafted);
    await Promise.all([indexer.stop(), clean.stop()]);
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(clean.storePath));
  });
});
