// One writer per store. Two indexers writing the same SQLite store (the same DATA_DIR, network and
// deployment) would each commit their own view of the chain over the other's, and a restart would
// find a store neither of them wrote. A lock file beside the store names the process holding it;
// one left behind by a process that died (killed, crashed) is taken over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // it exists, but belongs to another user
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the store's lock for this process; the function returned releases it. */
export function lockStore(storePath: string): () => void {
  const lockPath = `${storePath}.lock`;
  for (;;) {
    try {
      writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileSync(lockPath, 'utf8').trim());
    if (Number.isSafeInteger(holder) && holder > 0 && alive(holder)) {
      throw new Error(
        `another indexer (process ${holder}) is writing the store ${storePath}: stop it, or give this one another DATA_DIR`,
      );
    }
    rmSync(lockPath, { force: true });
  }
}
