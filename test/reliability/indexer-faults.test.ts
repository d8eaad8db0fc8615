// Indexer faults on the test's own chain: a store on a file system that fills up mid-sync (a small
// tmpfs of the test's own, which needs root to mount); then the RPC behind a flaky proxy that fails a
// fixed share of requests (connection resets and 503s): a sync through it, runs killed with SIGKILL
// at random blocks while it is flaky, and a reorg followed through it. Each time the store must hold
// exactly the entity versions (full table dumps) that a clean, uninterrupted run over a healthy RPC
// builds. Last, the indexer stopped with SIGTERM while its node holds a request unanswered: it must
// exit at once, not when the request times out.
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRandom } from '../../devnet/random.ts';
import { startPrivateDevnet, type SeededPrivateDevnet } from '../harness/private-devnet.ts';
import { ChainActions } from '../indexer/chain-actions.ts';
import { childIndexers, exited, indexedBlockOrNone, tempDirs } from '../indexer/child-indexer.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { devnetIndexers } from '../indexer/devnet-indexers.ts';
import { queryIndexer } from '../indexer/graphql-client.ts';
import { dumpEntityVersions } from '../indexer/store-dump.ts';
import { startFaultProxy, type FaultProxy } from './servers/fault-proxy.ts';

let devnet: SeededPrivateDevnet;
let actions: ChainActions;
let proxy: FaultProxy;
let head: number;
let cleanDump: ReturnType<typeof dumpEntityVersions>;
const dirs = tempDirs();
const mounts: string[] = [];
const children = childIndexers();
const indexers = devnetIndexers(() => devnetContracts(devnet.deployment), 'h6-indexer-');

/** One request in five reset, one in seven answered 503: every kind of RPC call meets failures. */
const flaky = (ordinal: number) => (ordinal % 5 === 2 ? 'reset' : ordinal % 7 === 3 ? 'status' : null);

const indexer = (rpcUrl: string) => indexers.start(rpcUrl, { pollIntervalMs: 50, maxRange: 8 });

async function cleanRunTo(block: number): Promise<ReturnType<typeof dumpEntityVersions>> {
  const clean = await indexer(devnet.rpcUrl);
  await clean.waitForBlock(block);
  await clean.stop();
  return dumpEntityVersions(clean.storePath);
}

beforeAll(async () => {
  devnet = await startPrivateDevnet({
    scenario: { epochs: 16, onboardingDays: 3, investorsPerFund: 8, roundInterval: 5, claimBps: 5000 },
    dirPrefix: 'h6-devnet-',
  });
  actions = new ChainActions(devnet.rpcUrl, devnet.deployment);
  head = (await actions.head()).number;
  proxy = await startFaultProxy(devnet.rpcUrl);
  cleanDump = await cleanRunTo(head);
  expect(cleanDump.ProtocolEvent?.length).toBeGreaterThan(50);
}, 240_000);

afterAll(async () => {
  children.killAll();
  await indexers.stopAll();
  await proxy?.close();
  await devnet?.stop();
  for (const m of mounts) spawnSync('umount', ['--lazy', m]);
  dirs.removeAll();
});

/** A new tmpfs of `bytes`: a file system this test can fill without touching anything else's. */
function smallFileSystem(bytes: number): string {
  const dir = dirs.make('h6-small-fs-');
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (mount.status !== 0) {
    throw new Error(`this test fills a tmpfs of its own and must mount one, as root: ${mount.stderr}`);
  }
  mounts.push(dir);
  return dir;
}

/**
 * A rewrite for a node whose chain ends at block `cap()`: eth_blockNumber, the only way the indexer
 * learns the head, answers no more than it.
 */
function headCappedAt(cap: () => number) {
  return (json: unknown, request: string): unknown => {
    const calls = [JSON.parse(request) as { id: number; method: string }].flat();
    const answers = [json as { id: number; result?: unknown }].flat().map((answer) => {
      const call = calls.find((c) => c.id === answer.id);
      if (call?.method !== 'eth_blockNumber' || typeof answer.result !== 'string') return answer;
      return { ...answer, result: `0x${Math.min(Number(answer.result), cap()).toString(16)}` };
    });
    return Array.isArray(json) ? answers : answers[0];
  };
}

/**
 * `indexer/main.ts` as `npm run indexer` runs it, against `rpcUrl` (the flaky proxy unless given);
 * resolves with its query URL.
 */
const startChild = (dataDir: string, rpcUrl = proxy.url) =>
  children.start({
    rpcUrl,
    dataDir,
    entry: 'source',
    env: {
      INDEXER_MAX_BLOCK_RANGE: '3',
      // one range at a time, so that the kills land mid-sync
      INDEXER_RANGES_AHEAD: '1',
      INDEXER_POLL_INTERVAL_MS: '50',
    },
    stderr: 'ignore',
  });

describe('indexer on a disk that fills up', () => {
  it('waits, serving what it committed, and goes on to exactly the clean store once space is freed', async () => {
    const dataDir = smallFileSystem(8 * 1024 * 1024);
    // room for the empty store (about 0.65 MB with its indexes) and part of the chain, never all of
    // it: the test waits for the store to fill the disk
    const filler = join(dataDir, 'filler');
    writeFileSync(filler, Buffer.alloc(8 * 1024 * 1024 - 1024 * 1024));
    const lines: string[] = [];
    const run = await indexers.start(devnet.rpcUrl, {
      dataDir,
      maxRange: 8,
      pollIntervalMs: 50,
      log: (line) => lines.push(line),
    });
    while (run.status().storeError === null) await sleep(20);

    expect(run.status().storeError).toBe('database or disk is full');
    const committed = run.status().checkpoint;
    expect(committed).toBeLessThan(head);
    expect(lines.find((l) => l.startsWith(`store: ${run.storePath} could not be written`))).toBe(
      `store: ${run.storePath} could not be written (database or disk is full); nothing after block ${committed} was kept, and indexing goes on from there in 1 s`,
    );
    const meta = await queryIndexer<{ _meta: { block: { number: number } } }>(
      run.queryUrl,
      '{ _meta { block { number } } }',
    );
    expect(meta._meta.block.number).toBe(committed);
    const status = await queryIndexer<{
      indexingStatuses: { health: string; fatalError: { message: string; deterministic: boolean } }[];
    }>(
      new URL('/graphql', run.queryUrl).href,
      '{ indexingStatuses { health fatalError { message deterministic } } }',
    );
    expect(status.indexingStatuses).toEqual([
      { health: 'failed', fatalError: { message: 'database or disk is full', deterministic: false } },
    ]);

    rmSync(filler);
    await run.waitForBlock(head);
    expect(run.status().storeError).toBeNull();
    await run.stop();
    expect(dumpEntityVersions(run.storePath)).toEqual(cleanDump);
  });
});

describe('indexer under RPC faults', () => {
  it('syncs through an RPC failing a fixed share of requests to exactly the clean store', async () => {
    proxy.set({ kind: 'flaky', fails: flaky });
    const failedBefore = proxy.failed;
    const run = await indexer(proxy.url);
    await run.waitForBlock(head);
    await run.stop();
    expect(proxy.failed - failedBefore).toBeGreaterThanOrEqual(2);
    expect(dumpEntityVersions(run.storePath)).toEqual(cleanDump);
  });

  it('resumes after SIGKILL at random blocks, with the RPC flaky, to exactly the clean store', async () => {
    // the same blocks every run; KILL_SEED=<n> tries others
    const seed = Number(process.env.KILL_SEED ?? 20_240_611);
    const random = createRandom(seed);
    const start = devnet.deployment.startBlock;
    const targets = [0, 1, 2].map(() => random.int(start, head - 2)).sort((a, b) => a - b);
    // While a run is to be killed, the node says the chain ends two ranges (INDEXER_MAX_BLOCK_RANGE
    // 3) past its target, and before the head: the run may still be mid-sync when it is killed, but
    // cannot index past that, however late its progress is seen. The flaky proxy stands in front.
    const caps = targets.map((target) => Math.min(target + 6, head - 1));
    let cap = Number.POSITIVE_INFINITY;
    const capped = await startFaultProxy(devnet.rpcUrl);
    capped.set({ kind: 'rewrite', rewrite: headCappedAt(() => cap) });
    const flakyRpc = await startFaultProxy(capped.url);
    flakyRpc.set({ kind: 'flaky', fails: flaky });
    console.log(`seed ${seed}: SIGKILL at blocks ${targets.join(', ')} (of ${start}..${head})`);
    try {
      const dataDir = dirs.make('h6-killed-');
      const seenAtKill: number[] = [];
      for (const [i, target] of targets.entries()) {
        cap = caps[i]!;
        const { child, url } = await startChild(dataDir, flakyRpc.url);
        let at = await indexedBlockOrNone(url);
        while (at < target) at = await sleep(20).then(() => indexedBlockOrNone(url));
        child.kill('SIGKILL');
        await exited(child);
        seenAtKill.push(at);
      }
      // each run killed at or past its target, short of the head (targets and caps only grow, so a
      // run resumed past its target is still within its cap)
      const context = `seed ${seed}, targets ${targets}, caps ${caps}, seen at kill ${seenAtKill}`;
      expect(
        seenAtKill.map((at, i) => at >= targets[i]! && at <= caps[i]!),
        context,
      ).toEqual([true, true, true]);
      expect(Math.max(...caps), context).toBeLessThan(head);
      cap = Number.POSITIVE_INFINITY;
      const { child, url } = await startChild(dataDir, flakyRpc.url);
      while ((await indexedBlockOrNone(url)) < head) await sleep(50);
      child.kill('SIGTERM');
      await exited(child);
      expect(flakyRpc.failed, context).toBeGreaterThan(0);
      const store = readdirSync(join(dataDir, 'indexer')).find((f) => f.endsWith('.sqlite'))!;
      expect(dumpEntityVersions(join(dataDir, 'indexer', store)), context).toEqual(cleanDump);
    } finally {
      await flakyRpc.close();
      await capped.close();
    }
  }, 180_000);

  it('follows a reorg through a flaky RPC to the store a fresh run builds', async () => {
    proxy.set({ kind: 'flaky', fails: flaky });
    const follower = await indexer(proxy.url);
    await follower.waitForBlock(head);
    const snapshot = await actions.snapshot();
    await actions.draftAll(101, 1_100_000n);
    const lostHead = await actions.draftAll(102, 1_300_000n);
    await follower.waitForBlock(lostHead);
    await actions.revert(snapshot);
    await actions.draftAll(101, 1_200_000n);
    await actions.draftAll(103, 1_400_000n);
    const newHead = await actions.draftAll(104, 1_500_000n);
    expect(newHead).toBeGreaterThan(lostHead);
    await follower.waitForBlock(newHead);
    await follower.stop();
    proxy.set({ kind: 'pass' });
    expect(dumpEntityVersions(follower.storePath)).toEqual(await cleanRunTo(newHead));
  });
});

describe('indexer stopped while its node does not answer', () => {
  it('exits on SIGTERM without waiting for the request under way to time out', async () => {
    const hanging = await startFaultProxy(devnet.rpcUrl);
    try {
      const { number: at } = await actions.head();
      const { child, url } = await startChild(dirs.make('h6-stopped-'), hanging.url);
      const lines: string[] = [];
      const output = createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line));
      const outputEnded = once(output, 'close');
      while ((await indexedBlockOrNone(url)) < at) await sleep(50);
      hanging.set({ kind: 'hang' });
      // the head, polled every 50 ms, is asked for and not answered (viem would wait 60 s)
      const asked = hanging.requests;
      while (hanging.requests === asked) await sleep(20);
      child.kill('SIGTERM');
      // far less than the request's timeout, and than the 10 s Docker waits before SIGKILL
      const exitedInTime = await Promise.race([
        exited(child).then(() => true),
        sleep(9_000).then(() => false),
      ]);
      expect(exitedInTime).toBe(true);
      expect(child.exitCode).toBe(0);
      await outputEnded;
      expect(lines.at(-1)).toBe(`indexer: stopped (SIGTERM) at block ${at}`);
    } finally {
      await hanging.close();
    }
  });
});
