// Anvil writes the states of older blocks to disk and, stopped by a signal, never deletes them;
// left behind by every run, they once filled the disk CI runs on. startAnvil gives each anvil a
// home of its own and removes it when anvil stops, and a devnet that runs for hours caps them. An
// anvil ends with the process that started it, even one killed outright, and the home such a process
// could not remove is removed by the next anvil started in the same directory.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, vi } from 'vitest';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { createRpcClient } from '../../devnet/rpc.ts';

// more blocks with state changes than anvil keeps in memory, so some states go to disk
const BLOCKS = 700;

/** Mines BLOCKS blocks that each change the state; returns where anvil keeps the older states. */
async function mineStateChanges(anvil: AnvilInstance): Promise<string> {
  const rpc = createRpcClient(anvil.rpcUrl);
  const [from] = await rpc.request<string[]>('eth_accounts', []);
  for (let block = 0; block < BLOCKS; block++) {
    await rpc.request('eth_sendTransaction', [{ from, to: from, value: '0x1' }]);
  }
  return join(anvil.home, '.foundry', 'anvil', 'tmp');
}

describe('a stopped anvil', () => {
  it('leaves none of the block states it kept on disk', async () => {
    const anvil = await startAnvil({ automine: true });
    const stateDir = await mineStateChanges(anvil);
    expect(readdirSync(stateDir)).toHaveLength(1);
    await anvil.stop();
    expect(existsSync(anvil.home)).toBe(false);
  });
});

describe('a long-running anvil', () => {
  it('keeps no more older states on disk than it is allowed', async () => {
    const anvil = await startAnvil({ automine: true, maxPersistedStates: 3 });
    try {
      const stateDir = await mineStateChanges(anvil);
      const [states] = readdirSync(stateDir);
      // anvil writes a state before it deletes the oldest, so one more is on disk for a moment;
      // uncapped, about 400 would be there
      await vi.waitFor(() => expect(readdirSync(join(stateDir, states!)).length).toBeLessThanOrEqual(3), {
        timeout: 5_000,
      });
    } finally {
      await anvil.stop();
    }
  });
});

/** Whether a process `pid` runs (a zombie not yet reaped by its new parent counts as ended). */
function runs(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const state = /^State:\s+(\w)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return state !== 'Z';
}

/**
 * Starts an anvil (its home under `homeParent`, when given) in a child process and kills that process
 * outright; what anvil ran as, and where its home was.
 */
async function anvilOfKilledProcess(homeParent?: string): Promise<{ pid: number; home: string }> {
  const options = homeParent === undefined ? '' : JSON.stringify({ homeParent });
  const script = `import { startAnvil } from './devnet/anvil.ts'; const { pid, home } = await startAnvil(${options}); console.log(JSON.stringify({ pid, home }));`;
  const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const anvil = await new Promise<{ pid: number; home: string }>((found) =>
    createInterface({ input: parent.stdout }).once('line', (line) => found(JSON.parse(line))),
  );
  expect(runs(anvil.pid)).toBe(true);
  parent.kill('SIGKILL');
  await new Promise((ended) => parent.once('exit', ended));
  return anvil;
}

describe('an anvil whose process is killed outright', () => {
  it.runIf(process.platform === 'linux')('ends with it, where no exit handler runs', async () => {
    const anvil = await anvilOfKilledProcess();
    try {
      await vi.waitFor(() => expect(runs(anvil.pid)).toBe(false), { timeout: 10_000 });
    } finally {
      if (runs(anvil.pid)) process.kill(anvil.pid, 'SIGKILL');
      // its home is what the killed process would have removed
      rmSync(anvil.home, { recursive: true, force: true });
    }
  });

  it('leaves its home for the next anvil started in the same directory to remove, which keeps the homes of live ones', async () => {
    const homeParent = mkdtempSync(join(tmpdir(), 'anvil-homes-'));
    const killed = await anvilOfKilledProcess(homeParent);
    const live = await startAnvil({ homeParent });
    try {
      expect(existsSync(killed.home)).toBe(false);
      const next = await startAnvil({ homeParent });
      await next.stop();
      expect(readdirSync(homeParent)).toEqual([basename(live.home)]);
    } finally {
      await live.stop();
      if (runs(killed.pid)) process.kill(killed.pid, 'SIGKILL');
      rmSync(homeParent, { recursive: true, force: true });
    }
  });
});
