// Crash safety: `npm run indexer`'s entry point runs as a child process and is killed with SIGKILL
// (no chance to clean up) again and again while it syncs. Each restart resumes from the store; the
// final store must hold exactly the entity versions of an uninterrupted run: nothing lost, nothing
// written twice.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndexer } from '../../indexer/indexer.ts';
import { startPrivateDevnet, type SeededPrivateDevnet } from '../harness/private-devnet.ts';
import { ChainActions } from './chain-actions.ts';
import { childIndexers, exited, indexedBlock, tempDirs } from './child-indexer.ts';
import { dumpEntityVersions } from './store-dump.ts';

let devnet: SeededPrivateDevnet;
let head: number;
const dirs = tempDirs();
const children = childIndexers();

/**
 * Starts the indexer as `npm run indexer` does, from the bundle `npm run build` made of
 * `indexer/main.ts` (minus the build), and resolves with its query URL.
 */
const startChild = (dataDir: string) =>
  children.start({
    rpcUrl: devnet.rpcUrl,
    dataDir,
    entry: 'bundle',
    env: { INDEXER_MAX_BLOCK_RANGE: '1', INDEXER_COMMIT_INTERVAL_MS: '0', INDEXER_POLL_INTERVAL_MS: '50' },
    stderr: 'inherit',
  });

beforeAll(async () => {
  devnet = await startPrivateDevnet({
    scenario: { epochs: 24, onboardingDays: 4, investorsPerFund: 12, roundInterval: 6, claimBps: 5000 },
    dirPrefix: 'indexer-kill-devnet-',
  });
  head = (await new ChainActions(devnet.rpcUrl, devnet.deployment).head()).number;
});

afterAll(async () => {
  children.killAll();
  await devnet?.stop();
  dirs.removeAll();
});

describe('indexer: crash safety', () => {
  it('resumes after SIGKILL mid-sync to exactly the state of an uninterrupted run', async () => {
    const dataDir = dirs.make('indexer-kill-');
    const killedAt: number[] = [];
    let reached = -1;
    while (reached < head) {
      const { child, url } = await startChild(dataDir);
      // let this run commit a few blocks beyond the previous one, then kill it without warning
      const target = Math.min(head, reached + 12);
      let at = await indexedBlock(url);
      while (at < target) at = await indexedBlock(url);
      child.kill('SIGKILL');
      await exited(child);
      killedAt.push(at);
      reached = at;
    }
    // several runs died before the head: the resumptions were real
    expect(killedAt.filter((b) => b < head).length).toBeGreaterThan(2);

    const { child, url } = await startChild(dataDir);
    expect(await indexedBlock(url)).toBe(head);
    child.kill('SIGTERM');
    await exited(child);

    const cleanDir = dirs.make('indexer-clean-');
    const clean = await createIndexer({
      rpcUrl: devnet.rpcUrl,
      network: 'devnet',
      dataDir: cleanDir,
      port: 0,
      log: () => undefined,
    });
    await clean.start();
    await clean.waitForBlock(head);
    await clean.stop();

    const killedStore = join(
      dataDir,
      'indexer',
      readdirSync(join(dataDir, 'indexer')).find((f) => f.endsWith('.sqlite'))!,
    );
    const cleanDump = dumpEntityVersions(clean.storePath);
    expect(cleanDump.ProtocolEvent!.length).toBeGreaterThan(100);
    expect(dumpEntityVersions(killedStore)).toEqual(cleanDump);
  }, 240_000);
});
