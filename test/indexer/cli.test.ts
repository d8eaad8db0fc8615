// `npm run indexer` as its users meet it: the bundle `npm run build:indexer` makes of indexer/main.ts
// runs as a child process against the harness's devnet. It says where it resumes and where it
// stopped (also when stopped during start-up), which stores earlier subgraph builds left, never
// prints the RPC URL's path or query, and refuses what it cannot start with in one line naming what
// to fix (exit 2 for a variable refused as read, 1 for a start-up failure: a damaged store, a store
// file another user owns, a DATA_DIR on a full or read-only disk among them), with no stack trace.
// The npm script execs node, so a SIGTERM to the script's shell reaches the indexer. The disk tests
// mount a small tmpfs of their own (small-disk.ts), and one runs the indexer as nobody: as root.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { copyIndexerBundle, tempDirs } from './child-indexer.ts';
import { mountSmallDisk } from './small-disk.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const bundle = join(repoRoot, 'build', 'indexer-main.mjs');
const dirs = tempDirs();
const scratchDir = () => dirs.make('indexer-cli-');
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  dirs.removeAll();
});

interface Run {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** resolves with the exit code (null if a signal ended it) */
  exit: Promise<number | null>;
  /** resolves once a stdout line matches */
  line(pattern: RegExp): Promise<RegExpExecArray>;
}

/** A user to run the indexer as, other than this process's. */
interface RunAs {
  uid: number;
  gid: number;
}

/**
 * Runs `command` (the bundle by default) with the environment `npm run indexer` would see, plus
 * `env`, as this process's user or as `user`.
 */
function run(
  env: Record<string, string>,
  command: [string, string[]] = [process.execPath, [bundle]],
  user?: RunAs,
): Run {
  const child = spawn(command[0], command[1], {
    ...user,
    cwd: repoRoot,
    env: {
      ...process.env,
      RPC_URL: inject('devnet').rpcUrl,
      NETWORK: 'devnet',
      PORT: '0',
      INDEXER_MAX_BLOCK_RANGE: '5',
      INDEXER_COMMIT_INTERVAL_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiting = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (l) => {
    stdout.push(l);
    for (const w of [...waiting]) w();
  });
  createInterface({ input: child.stderr! }).on('line', (l) => stderr.push(l));
  const exit = new Promise<number | null>((r) =>
    child.once('exit', (code) => {
      children.delete(child);
      // let readline hand over the last lines
      setImmediate(() => r(code));
    }),
  );
  const line = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolveLine, reject) => {
      const check = () => {
        for (const l of stdout) {
          const m = pattern.exec(l);
          if (m) {
            waiting.delete(check);
            return resolveLine(m);
          }
        }
      };
      waiting.add(check);
      check();
      void exit.then(() => {
        waiting.delete(check);
        reject(new Error(`exited before printing ${pattern}: ${[...stdout, ...stderr].join('\n')}`));
      });
    });
  return { child, stdout, stderr, exit, line };
}

/**
 * The indexer run into `dataDir` until it prints a line matching `until` (by default: once it
 * serves), then stopped; resolves with its store's path.
 */
async function indexedStore(dataDir: string, until = /^query endpoint: /): Promise<string> {
  const r = run({ DATA_DIR: dataDir });
  const [, storePath] = await r.line(/^indexer: devnet via .*; store (.+)$/);
  await r.line(until);
  r.child.kill('SIGTERM');
  expect(await r.exit).toBe(0);
  return storePath!;
}

/** The user the tests run the indexer as where it must not be root, who may write anything. */
const NOBODY: RunAs = { uid: 65534, gid: 65534 };

/** The one stderr line of a refused start, checked for being one line with no stack trace. */
async function refusal(r: Run): Promise<{ code: number | null; message: string }> {
  const code = await r.exit;
  const lines = r.stderr.filter((l) => !/^npm warn/.test(l));
  expect(lines).toHaveLength(1);
  expect(lines[0]).not.toMatch(/^\s+at /);
  return { code, message: lines[0]! };
}

describe('npm run indexer', () => {
  it('says at which block it stopped on SIGTERM, and exits 0', async () => {
    const r = run({ DATA_DIR: scratchDir() });
    await r.line(/^query endpoint: /);
    r.child.kill('SIGTERM');
    expect(await r.exit).toBe(0);
    expect(r.stdout.at(-1)).toMatch(/^indexer: stopped \(SIGTERM\) at block \d+$/);
  });

  it('says it stopped before indexing began on a SIGTERM during start-up, and exits 0', async () => {
    // a node that takes the request and never answers: the start-up check waits some 20 s on it
    const silent = createHttpServer();
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const asked = new Promise<void>((r) => silent.once('request', () => r()));
      const rpcUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
      const r = run({ DATA_DIR: scratchDir(), RPC_URL: rpcUrl });
      await asked;
      r.child.kill('SIGTERM');
      expect(await r.exit).toBe(0);
      expect(r.stdout).toEqual(['indexer: stopped (SIGTERM) before indexing began']);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('names the store an earlier subgraph build left, its size and last block, when it starts a new one and when it resumes', async () => {
    const dataDir = scratchDir();
    const first = run({ DATA_DIR: dataDir });
    const [, storePath] = await first.line(/^indexer: devnet via .*; store (.+)$/);
    await first.line(/^indexing block|^synced/);
    first.child.kill('SIGTERM');
    await first.exit;
    const stopped = Number(/at block (\d+)$/.exec(first.stdout.at(-1)!)![1]);
    // what a build with other mappings left: a store under another deployment id
    const earlier = join(dataDir, 'indexer', `devnet-L${'0'.repeat(45)}.sqlite`);
    renameSync(storePath!, earlier);
    const bytes = statSync(earlier).size;
    const left = `the previous store ${earlier} (${(bytes / 1e6).toFixed(1)} MB, indexed to block ${stopped}) is left: delete it and its -wal and -shm files once the new one has caught up`;

    const second = run({ DATA_DIR: dataDir });
    await second.line(/^indexing block|^synced/);
    second.child.kill('SIGTERM');
    await second.exit;
    expect(second.stdout).toContain(
      `indexer: the subgraph build changed: indexing from block 1 into a new store ${storePath}; ${left}`,
    );
    expect(second.stdout).not.toContain('indexer: new store, indexing from block 1');

    const third = run({ DATA_DIR: dataDir });
    await third.line(/^indexer: resuming after block /);
    await third.line(/^query endpoint: /);
    third.child.kill('SIGTERM');
    await third.exit;
    expect(third.stdout).toContain(`indexer: ${left}`);
    // left as it was: nothing is deleted for the user
    expect(statSync(earlier).size).toBe(bytes);
  });

  it('says it starts a new store the first time, and resumes after the block it stopped at the next', async () => {
    const dataDir = scratchDir();
    const first = run({ DATA_DIR: dataDir });
    await first.line(/^indexer: new store, indexing from block 1$/);
    await first.line(/^indexing block|^synced/);
    first.child.kill('SIGINT');
    await first.exit;
    const stopped = Number(/at block (\d+)$/.exec(first.stdout.at(-1)!)![1]);
    expect(stopped).toBeGreaterThan(0);

    const second = run({ DATA_DIR: dataDir });
    const [, block, store] = await second.line(
      /^indexer: resuming after block (\d+), the last one in the store \((.+)\)$/,
    );
    expect(Number(block)).toBe(stopped);
    expect(store).toContain(join(dataDir, 'indexer'));
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);
  });

  it('prints the RPC URL as its scheme and host only, hiding an API key in its query', async () => {
    const rpcUrl = `${inject('devnet').rpcUrl}/?apikey=MYAPIKEY123`;
    const r = run({ DATA_DIR: scratchDir(), RPC_URL: rpcUrl });
    await r.line(/^query endpoint: /);
    r.child.kill('SIGTERM');
    await r.exit;
    expect(r.stdout.find((l) => l.startsWith('indexer: devnet via '))).toMatch(
      /^indexer: devnet via http:\/\/127\.0\.0\.1:\d+\/…; store /,
    );
    expect([...r.stdout, ...r.stderr].join('\n')).not.toContain('MYAPIKEY123');
  });

  it('refuses a NETWORK networks.json lacks as a configuration error listing the networks, exit 2', async () => {
    const { code, message } = await refusal(run({ DATA_DIR: scratchDir(), NETWORK: 'nosuch' }));
    expect(code).toBe(2);
    expect(message).toBe(
      'configuration error: NETWORK must be a network of subgraph/networks.json (devnet, sepolia), got "nosuch"',
    );
  });

  it('refuses a PORT that is not decimal digits as a configuration error, exit 2', async () => {
    const { code, message } = await refusal(run({ DATA_DIR: scratchDir(), PORT: '0x1F40' }));
    expect(code).toBe(2);
    expect(message).toBe(
      'configuration error: PORT must be an integer from 0 to 65535 in decimal digits, got "0x1F40"',
    );
  });

  it('refuses a PORT in use in one line naming PORT, exit 1', async () => {
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const { code, message } = await refusal(run({ DATA_DIR: scratchDir(), PORT: String(port) }));
      expect(code).toBe(1);
      expect(message).toBe(
        `start-up error: PORT: 127.0.0.1:${port} is already in use (another indexer still running?); set PORT to a free port (decimal, 1-65535), or 0 to pick one`,
      );
    } finally {
      server.close();
    }
  });

  it('refuses a DATA_DIR that is a file in one line naming DATA_DIR, exit 1', async () => {
    const file = join(scratchDir(), 'not-a-directory');
    writeFileSync(file, '');
    const { code, message } = await refusal(run({ DATA_DIR: file }));
    expect(code).toBe(1);
    expect(message).toMatch(/^start-up error: DATA_DIR: cannot create or write /);
    expect(message).toContain(
      `DATA_DIR must name a writable directory (the store lives in <DATA_DIR>/indexer), now ${file}`,
    );
  });

  it('refuses a damaged store in one line naming it and what to do, exit 1', async () => {
    const dataDir = scratchDir();
    const storePath = await indexedStore(dataDir);
    writeFileSync(storePath, 'no SQLite database\n'.repeat(1000));
    for (const suffix of ['-wal', '-shm']) rmSync(storePath + suffix, { force: true });
    const { code, message } = await refusal(run({ DATA_DIR: dataDir }));
    expect(code).toBe(1);
    expect(message).toBe(
      `start-up error: the store ${storePath} is damaged (file is not a database, SQLITE_NOTADB): delete it and its -wal and -shm files while the indexer is stopped, to index again from the start block`,
    );
  });

  it('refuses a store with a damaged page no start-up read reaches in one line naming it and what to do, exit 1', async () => {
    const dataDir = scratchDir();
    const storePath = await indexedStore(dataDir, /^synced to block /);
    const db = new Database(storePath, { readonly: true, fileMustExist: true });
    const root = db
      .prepare(`SELECT "rootpage" FROM sqlite_master WHERE "name" = 'NavRecord'`)
      .pluck()
      .get() as number;
    db.close();
    const fd = openSync(storePath, 'r+');
    writeSync(fd, Buffer.alloc(4096), 0, 4096, (root - 1) * 4096);
    closeSync(fd);
    const { code, message } = await refusal(run({ DATA_DIR: dataDir }));
    expect(code).toBe(1);
    expect(message).toMatch(
      new RegExp(
        `^start-up error: the store ${storePath} is damaged \\(PRAGMA quick_check found: Tree ${root} page ${root}: btreeInitPage\\(\\) returns error code 11; .*, SQLITE_CORRUPT\\): delete it and its -wal and -shm files while the indexer is stopped, to index again from the start block$`,
      ),
    );
  });

  /**
   * A data directory whose store root indexed and then stopped with `signal`, given to nobody but
   * for the files `keptByRoot` names (by their suffix after the store's path; those that exist).
   */
  async function storeGivenToNobody(
    signal: NodeJS.Signals,
    keptByRoot: string[],
  ): Promise<{ dataDir: string; storePath: string }> {
    const scratch = scratchDir();
    chmodSync(scratch, 0o755);
    const dataDir = join(scratch, 'data');
    const first = run({ DATA_DIR: dataDir });
    const [, storePath] = await first.line(/^indexer: devnet via .*; store (.+)$/);
    await first.line(/^query endpoint: /);
    first.child.kill(signal);
    await first.exit;
    const files = ['', '-wal', '-shm', '.lock'].filter((suffix) => !keptByRoot.includes(suffix));
    for (const path of [
      dataDir,
      join(dataDir, 'indexer'),
      ...files.map((suffix) => `${storePath}${suffix}`),
    ]) {
      if (existsSync(path)) chownSync(path, NOBODY.uid, NOBODY.gid);
    }
    return { dataDir, storePath: storePath! };
  }

  it('names the -wal file another user left that it may not write, with owner and mode, exit 1', async () => {
    // killed, so its -wal and -shm are left
    const { dataDir, storePath } = await storeGivenToNobody('SIGKILL', ['-wal', '-shm']);
    const { code, message } = await refusal(run({ DATA_DIR: dataDir }, undefined, NOBODY));
    expect(code).toBe(1);
    expect(message).toBe(
      `start-up error: DATA_DIR: cannot write the store ${storePath} (attempt to write a readonly database): ${storePath}-wal is owned by root (uid 0), group 0, mode 0644, and the indexer runs as nobody (uid ${NOBODY.uid}), who may not write it; give it to that user (chown), or run the indexer as its owner`,
    );
  });

  it('names the lock file another user left that it may not write, rather than take a lock that excludes no one, exit 1', async () => {
    const { dataDir, storePath } = await storeGivenToNobody('SIGTERM', ['.lock']);
    const { code, message } = await refusal(run({ DATA_DIR: dataDir }, undefined, NOBODY));
    expect(code).toBe(1);
    expect(message).toBe(
      `start-up error: DATA_DIR: cannot write the store ${storePath} (its lock file may not be written, EACCES): ${storePath}.lock is owned by root (uid 0), group 0, mode 0644, and the indexer runs as nobody (uid ${NOBODY.uid}), who may not write it; give it to that user (chown), or run the indexer as its owner`,
    );
  });

  it('says the file system of a store that was indexed is now mounted read-only, exit 1', async () => {
    const disk = mountSmallDisk(32 * 1024);
    try {
      const storePath = await indexedStore(disk.dir);
      expect(spawnSync('mount', ['-o', 'remount,ro', disk.dir]).status).toBe(0);
      const { code, message } = await refusal(run({ DATA_DIR: disk.dir }));
      expect(code).toBe(1);
      expect(message).toBe(
        `start-up error: DATA_DIR: cannot write the store ${storePath} (its lock file may not be written, EROFS): the file system holding ${join(disk.dir, 'indexer')} is mounted read-only; mount it read-write, or set DATA_DIR to a directory on a writable one, now ${disk.dir}`,
      );
    } finally {
      disk.remove();
    }
  });

  it('refuses a DATA_DIR on a full disk in one line saying so, exit 1', async () => {
    const disk = mountSmallDisk(1024);
    try {
      const dataDir = join(disk.dir, 'data');
      mkdirSync(dataDir);
      disk.fill();
      const { code, message } = await refusal(run({ DATA_DIR: dataDir }));
      expect(code).toBe(1);
      const store = readdirSync(join(dataDir, 'indexer')).find((f) => f.endsWith('.sqlite'))!;
      expect(message).toBe(
        `start-up error: DATA_DIR: the disk is full: the store ${join(dataDir, 'indexer', store)} cannot be written (SQLITE_FULL); free space on it, or set DATA_DIR to a directory on a disk with room, now ${dataDir}`,
      );
    } finally {
      disk.remove();
    }
  });

  it('refuses a DATA_DIR on a read-only file system in one line naming DATA_DIR, exit 1', async () => {
    const disk = mountSmallDisk(64, 'ro');
    try {
      const { code, message } = await refusal(run({ DATA_DIR: disk.dir }));
      expect(code).toBe(1);
      expect(message).toBe(
        `start-up error: DATA_DIR: cannot create or write ${join(disk.dir, 'indexer')} (the file system is read-only); DATA_DIR must name a writable directory (the store lives in <DATA_DIR>/indexer), now ${disk.dir}`,
      );
    } finally {
      disk.remove();
    }
  });

  it('refuses a DATA_DIR under /proc in one line, where Node would try to make it forever, exit 1', async () => {
    const { code, message } = await refusal(run({ DATA_DIR: '/proc/no-such-dir' }));
    expect(code).toBe(1);
    expect(message).toBe(
      'start-up error: DATA_DIR: cannot create or write /proc/no-such-dir (the file system there makes no directories); DATA_DIR must name a writable directory (the store lives in <DATA_DIR>/indexer), now /proc/no-such-dir',
    );
  });

  it('says to run npm run build:subgraph when the subgraph build is missing, exit 1', async () => {
    // a copy of the bundle one level below a tree without subgraph/build
    const root = scratchDir();
    const entry = copyIndexerBundle(root);
    mkdirSync(join(root, 'subgraph'));
    copyFileSync(join(repoRoot, 'subgraph', 'networks.json'), join(root, 'subgraph', 'networks.json'));
    symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
    const r = run({ DATA_DIR: join(root, 'data') }, [process.execPath, [entry]]);
    const { code, message } = await refusal(r);
    expect(code).toBe(1);
    expect(message).toBe(
      `start-up error: the subgraph build is missing ${join(root, 'subgraph', 'build', 'subgraph.yaml')}: run \`npm run build:subgraph\` (or \`npm run build\`)`,
    );
  });

  it("passes a SIGTERM to the script's shell on to the indexer: the script execs node after the build", async () => {
    const script = (
      JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts.indexer!;
    const [build, last] = script.split(/ && (?=[^&]*$)/);
    expect(build).toBe('npm run build');
    // the script as npm runs it, in its shell, with the build replaced by `true` (the build rewrites
    // build/, which other suites run)
    const r = run({ DATA_DIR: scratchDir() }, ['sh', ['-c', `true && ${last!}`]]);
    await r.line(/^query endpoint: /);
    r.child.kill('SIGTERM');
    // the shell's pid is the indexer's: it stops cleanly instead of the shell dying under it
    expect(await r.exit).toBe(0);
    expect(r.stdout.at(-1)).toMatch(/^indexer: stopped \(SIGTERM\) at block \d+$/);
  });
});
