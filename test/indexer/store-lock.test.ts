// The store's lock between real processes: a second indexer is refused while the first lives, in
// whatever PID namespace it runs; the lock of a process killed with SIGKILL is taken at once, also
// by a process with the same pid (process 1 of a container started again); of processes racing for
// it, exactly one gets it. Each contender is a child process running lockStore
// (store-lock-contender.ts); `unshare` (as root) gives one a PID namespace of its own, as a
// container does.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockStore } from '../../indexer/store/store-lock.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const contenderScript = join(import.meta.dirname, 'store-lock-contender.ts');

interface Contender {
  child: ChildProcess;
  /** its pid as it sees it (1 in a PID namespace of its own) and as this process does */
  pids: Promise<{ own: number; here: number }>;
  /** tells it to take the lock; resolves with its answer */
  go(): Promise<string>;
  exited: Promise<void>;
}

let dir: string;
let storePath: string;
const contenders: Contender[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'store-lock-'));
  storePath = join(dir, 'devnet-L0.sqlite');
});

afterEach(async () => {
  for (const c of contenders.splice(0)) {
    c.child.stdin!.end();
    await c.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A child process that takes the lock when told, in a PID namespace of its own if asked. */
function contender(ownPidNamespace = false): Contender {
  const node = [process.execPath, '--import', 'tsx', contenderScript, storePath];
  // --kill-child: the namespace's process 1 goes with unshare, whatever ends it
  const [command, ...args] = ownPidNamespace
    ? ['unshare', '-p', '-f', '--mount-proc', '--kill-child=SIGKILL', ...node]
    : node;
  const child = spawn(command!, args, { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => (await lines.next()).value as string;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const pids = next().then((ready) => {
    expect(ready).toBe('ready');
    // the node process: unshare's child in a namespace of its own
    const here = ownPidNamespace
      ? Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim())
      : child.pid!;
    return { own: ownPidNamespace ? 1 : child.pid!, here };
  });
  const c: Contender = {
    child,
    pids,
    go: async () => {
      await pids;
      child.stdin!.write('go\n');
      return next();
    },
    exited,
  };
  contenders.push(c);
  return c;
}

/** Kills the contender's node process with SIGKILL and waits for it to be gone. */
async function killHard(c: Contender): Promise<void> {
  process.kill((await c.pids).here, 'SIGKILL');
  await c.exited;
  contenders.splice(contenders.indexOf(c), 1);
}

const refusal = (pid: number) =>
  `refused: another indexer (process ${pid}) is writing the store ${storePath}: stop it, or give this one another DATA_DIR`;

describe('store lock', () => {
  it('refuses a second process while the first holds the lock, naming the store and the process holding it', async () => {
    const first = contender();
    expect(await first.go()).toBe(`holds ${first.child.pid}`);
    expect(await contender().go()).toBe(refusal(first.child.pid!));
  });

  it('gives the lock of a process 1 killed with SIGKILL to the next process 1, as a container started again is', async () => {
    const killed = contender(true);
    expect(await killed.go()).toBe('holds 1');
    await killHard(killed);
    expect(await contender(true).go()).toBe('holds 1');
  });

  it('refuses a process in another PID namespace while the writer lives, naming the lock file it cannot see the holder of', async () => {
    const writer = contender();
    expect(await writer.go()).toBe(`holds ${writer.child.pid}`);
    expect(await contender(true).go()).toBe(
      `refused: another indexer is writing the store ${storePath} (a process this one cannot see, in another container or on another host, holds ${storePath}.lock): stop it, or give this one another DATA_DIR`,
    );
  });

  it('takes the lock file an indexer before this lock left, naming this very process', async () => {
    writeFileSync(`${storePath}.lock`, String(process.pid));
    const release = lockStore(storePath);
    try {
      expect(await contender().go()).toBe(refusal(process.pid));
    } finally {
      release();
    }
  });

  it('gives the lock to exactly one of six processes racing for it', async () => {
    const racing = Array.from({ length: 6 }, () => contender());
    await Promise.all(racing.map((c) => c.pids));
    const answers = await Promise.all(racing.map((c) => c.go()));
    const holders = racing.filter((_, i) => answers[i]!.startsWith('holds '));
    expect(holders).toHaveLength(1);
    const holder = holders[0]!.child.pid!;
    expect(answers.filter((a) => a === refusal(holder))).toHaveLength(5);
  });
});
