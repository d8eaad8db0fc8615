// Crash safety: `npm run indexer`'s entry point runs as a child process and is killed with SIGKILL
// (no chance to clean up) again and again while it syncs. Each restart resumes from the store; the
// final store must hold exactly the entity versions of an uninterrupted run: nothing lost, nothing
// written twice.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { compileContracts } from '../../devnet/compile.ts';
import { deployProtocol } from '../../devnet/deploy.ts';
import { runScenario } from '../../devnet/scenario.ts';
import { defaultScenarioParams } from '../../devnet/scenario-params.ts';
import { createIndexer } from '../../indexer/indexer.ts';
import { ChainActions } from './chain-actions.ts';
import { queryIndexer } from './graphql-client.ts';
import { dumpEntityVersions } from './store-dump.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
let anvil: AnvilInstance;
let head: number;
const dirs: string[] = [];
const children = new Set<ChildProcess>();

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/**
 * Starts the indexer as `npm run indexer` does, from the bundle `npm run build` made of
 * `indexer/main.ts` (minus the build), and resolves with its query URL.
 */
function startChild(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['build/indexer-main.mjs'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      RPC_URL: anvil.rpcUrl,
      NETWORK: 'devnet',
      DATA_DIR: dataDir,
      PORT: '0',
      INDEXER_MAX_BLOCK_RANGE: '1',
      INDEXER_COMMIT_INTERVAL_MS: '0',
      INDEXER_POLL_INTERVAL_MS: '50',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((resolvePromise, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /^query endpoint: (\S+)/.exec(line);
      if (m) resolvePromise({ child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`indexer exited with ${code} before serving`)));
  });
}

async function indexedBlock(url: string): Promise<number> {
  return (await queryIndexer<{ _meta: { block: { number: number } } }>(url, '{ _meta { block { number } } }'))
    ._meta.block.number;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r()),
  );
}

beforeAll(async () => {
  compileContracts();
  anvil = await startAnvil();
  const deployment = await deployProtocol(anvil.rpcUrl);
  await runScenario(anvil.rpcUrl, deployment, {
    ...defaultScenarioParams,
    epochs: 24,
    onboardingDays: 4,
    investorsPerFund: 12,
    roundInterval: 6,
    claimBps: 5000,
    dataDir: tempDir('indexer-kill-devnet-'),
  });
  head = (await new ChainActions(anvil.rpcUrl, deployment).head()).number;
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await anvil?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('indexer: crash safety', () => {
  it('resumes after SIGKILL mid-sync to exactly the state of an uninterrupted run', async () => {
    const dataDir = tempDir('indexer-kill-');
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

    const cleanDir = tempDir('indexer-clean-');
    const clean = await createIndexer({
      rpcUrl: anvil.rpcUrl,
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
