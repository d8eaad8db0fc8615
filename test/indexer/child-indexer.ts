// The indexer as a child process, for the tests that kill it (SIGKILL mid-sync) and start it again
// on the same store: `indexer/main.ts` as `npm run indexer` runs it, its query URL once it serves,
// the block its endpoint says it has indexed, its exit, and the scratch directories such a test
// makes, and the bundle copied into a tree of a test's own. Shared by test/indexer/kill-resume.test.ts,
// test/reliability/indexer-faults.test.ts and the suites that run the bundle elsewhere.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { queryAnswer, queryIndexer } from './graphql-client.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * The bundle of `npm run indexer` copied into `<root>/build`: its entry and the query worker it
 * starts from beside it. Returns the entry's path.
 */
export function copyIndexerBundle(root: string): string {
  mkdirSync(join(root, 'build'));
  for (const file of ['indexer-main.mjs', 'indexer-query-worker.mjs']) {
    copyFileSync(join(repoRoot, 'build', file), join(root, 'build', file));
  }
  return join(root, 'build', 'indexer-main.mjs');
}

/** Temporary directories made by `make`, each removed by the next `removeAll`. */
export function tempDirs(): { make(prefix: string): string; removeAll(): void } {
  const dirs: string[] = [];
  return {
    make(prefix) {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    removeAll() {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ChildIndexerOptions {
  rpcUrl: string;
  dataDir: string;
  /**
   * 'bundle': build/indexer-main.mjs, the bundle `npm run build` makes of indexer/main.ts (what
   * `npm run indexer` runs, minus the build); 'source': indexer/main.ts itself, through tsx.
   */
  entry: 'bundle' | 'source';
  /** INDEXER_* settings, over this process's environment and RPC_URL, NETWORK, DATA_DIR and PORT. */
  env: Record<string, string>;
  /** Where the child's stderr goes. */
  stderr: 'inherit' | 'ignore';
}

/** Child indexers started by `start`; `killAll` SIGKILLs those still running. */
export function childIndexers(): {
  start(options: ChildIndexerOptions): Promise<{ child: ChildProcess; url: string }>;
  killAll(): void;
} {
  const children = new Set<ChildProcess>();
  return {
    /** Starts the indexer and resolves with its query URL once it serves. */
    start({ rpcUrl, dataDir, entry, env, stderr }) {
      const args = entry === 'bundle' ? ['build/indexer-main.mjs'] : ['--import', 'tsx', 'indexer/main.ts'];
      const child = spawn(process.execPath, args, {
        cwd: repoRoot,
        env: { ...process.env, RPC_URL: rpcUrl, NETWORK: 'devnet', DATA_DIR: dataDir, PORT: '0', ...env },
        stdio: ['ignore', 'pipe', stderr],
      });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return new Promise((resolvePromise, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const m = /^query endpoint: (\S+)/.exec(line);
          if (m) resolvePromise({ child, url: m[1]! });
        });
        child.once('exit', (code) => reject(new Error(`indexer exited with ${code} before serving`)));
      });
    },
    killAll() {
      for (const child of children) child.kill('SIGKILL');
    },
  };
}

const META = '{ _meta { block { number } } }';
interface Meta {
  _meta: { block: { number: number } };
}

/** The block the indexer at `url` says it has indexed; an answer with errors fails the test. */
export async function indexedBlock(url: string): Promise<number> {
  return (await queryIndexer<Meta>(url, META))._meta.block.number;
}

/** The block the indexer at `url` says it has indexed, or -1 for an answer that names none. */
export async function indexedBlockOrNone(url: string): Promise<number> {
  const body = await queryAnswer<{ _meta: Meta['_meta'] | null }>(url, META);
  return body.data?._meta?.block.number ?? -1;
}

/** Resolves once `child` has exited (at once if it has). */
export function exited(child: ChildProcess): Promise<void> {
  return new Promise((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r()),
  );
}
