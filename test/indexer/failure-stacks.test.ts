// What the log shows of an error that keeps indexing from going on (not the store's: a bug's),
// while indexing starts again after each: the stack of each distinct error once, also when two
// errors take turns, so that the restarts (forever, up to one a minute) do not bury the log in
// stacks. The errors are a trigger in the test's own store, swapped between restarts, on the
// test's own chain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { ChainActions } from './chain-actions.ts';
import { devnetIndexers, waitFor } from './devnet-indexers.ts';
import { onStore } from './store-dump.ts';

let devnet: PrivateDevnet;
let actions: ChainActions;
const indexers = devnetIndexers(() => devnetContracts(devnet.deployment), 'failure-stacks-');

/** Makes every NavRecord insert fail with `message`, in place of the trigger there was, in one transaction. */
function refuseNavWith(storePath: string, message: string): void {
  onStore(
    storePath,
    `BEGIN;
      DROP TRIGGER IF EXISTS "refuse_nav";
      CREATE TRIGGER "refuse_nav" BEFORE INSERT ON "NavRecord" BEGIN SELECT RAISE(ABORT, '${message}'); END;
      COMMIT;`,
  );
}

/** The failures logged, in order: the error's message, and whether its stack followed. */
const failuresIn = (lines: string[]) =>
  lines
    .filter((l) => l.startsWith('indexer failed: '))
    .map((l) => ({ message: l.slice('indexer failed: '.length).split(';')[0], stack: l.includes('\n') }));

beforeAll(async () => {
  devnet = await startPrivateDevnet();
  actions = new ChainActions(devnet.rpcUrl, devnet.deployment);
  await actions.draftAll(1, 1_000_000n);
}, 120_000);

afterAll(async () => {
  await indexers.stopAll();
  await devnet?.stop();
});

describe('an indexer that fails again and again with errors that take turns', () => {
  it("prints each error's stack the first time only", async () => {
    const { number: indexed } = await actions.head();
    const lines: string[] = [];
    const indexer = await indexers.start(devnet.rpcUrl, { log: (line) => lines.push(line) });
    await indexer.waitForBlock(indexed);
    refuseNavWith(indexer.storePath, 'first bug');
    await actions.draftAll(2, 1_100_000n);
    const logged = (message: string, times: number) =>
      waitFor(() =>
        expect(failuresIn(lines).filter((f) => f.message === message).length).toBeGreaterThanOrEqual(times),
      );
    await logged('first bug', 1);
    refuseNavWith(indexer.storePath, 'second bug');
    await logged('second bug', 1);
    refuseNavWith(indexer.storePath, 'first bug');
    await logged('first bug', 2);
    await indexer.stop();

    const failures = failuresIn(lines);
    const firstOfItsMessage = failures.map(
      (f, i) => failures.findIndex((g) => g.message === f.message) === i,
    );
    expect(failures.map((f) => f.stack)).toEqual(firstOfItsMessage);
    expect(failures.filter((f) => f.stack).map((f) => f.message)).toEqual(['first bug', 'second bug']);
  }, 60_000);
});
