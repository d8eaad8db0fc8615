// One writer per store. Two indexers writing the same SQLite store (the same DATA_DIR, network and
// deployment) would each commit their own view of the chain over the other's, and a restart would
// find a store neither of them wrote. The lock is the operating system's: `<store>.lock` is an empty
// SQLite database that the writer holds in an exclusive transaction for as long as it runs, a POSIX
// lock the kernel drops when the process ends, however it ends. No process id is compared, so an
// indexer that is process 1 of its container on every start takes its store back after a SIGKILL,
// and one in another PID namespace (a container sharing the volume) is refused while the writer
// lives. The file is never deleted: a second writer would lock a new file of the same name.
import Database from 'better-sqlite3';
import { accessSync, constants, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';

/**
 * The lock databases this process holds. better-sqlite3 closes a database whose object is garbage
 * collected, which would drop its lock: a caller that kept no reference (the function returned)
 * would lose the lock at some later collection, and a second writer would get it.
 */
const heldLocks = new Set<Database.Database>();

/** Takes the store's lock for this process; the function returned releases it. */
export function lockStore(storePath: string): () => void {
  const lockPath = `${storePath}.lock`;
  // SQLite opens a file this process may not write read-only, without a word, and the exclusive
  // transaction of a read-only connection excludes no other: two indexers would both hold the lock
  if (existsSync(lockPath)) {
    try {
      accessSync(lockPath, constants.R_OK | constants.W_OK);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw Object.assign(new Error(`its lock file may not be written, ${code}`), { code, path: lockPath });
    }
  }
  for (let attempt = 1; ; attempt++) {
    let db: Database.Database | undefined;
    try {
      // no waiting: a lock held is a refusal at once
      db = new Database(lockPath, { timeout: 0 });
      // nothing is ever written, so no journal file is needed beside it
      db.pragma('journal_mode = MEMORY');
      db.exec('BEGIN EXCLUSIVE');
      const held = db;
      heldLocks.add(held);
      return () => {
        heldLocks.delete(held);
        held.close();
      };
    } catch (error) {
      db?.close();
      const code = (error as { code?: string }).code;
      if (code === 'SQLITE_BUSY') throw new Error(refusal(storePath, lockPath));
      // what is no lock database is a process id the indexers before this lock wrote there: the
      // file is made empty (which would leave a lock held on it held) and taken again
      if ((code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT')) && attempt === 1) {
        writeFileSync(lockPath, '');
        continue;
      }
      throw Object.assign(new Error(`cannot lock ${lockPath}: ${(error as Error).message}`), {
        code,
        path: lockPath,
      });
    }
  }
}

function refusal(storePath: string, lockPath: string): string {
  const holder = lockHolder(lockPath);
  return holder === null
    ? `another indexer is writing the store ${storePath} (a process this one cannot see, in another container or on another host, holds ${lockPath}): stop it, or give this one another DATA_DIR`
    : `another indexer (process ${holder}) is writing the store ${storePath}: stop it, or give this one another DATA_DIR`;
}

/**
 * The process holding a POSIX lock on `path` as /proc/locks (Linux) shows it to this process, or
 * null: another system, or a holder outside this PID namespace (shown as 0) or on another host.
 */
function lockHolder(path: string): number | null {
  try {
    const { dev, ino } = statSync(path, { bigint: true });
    // glibc's dev_t, as the kernel prints it: major:minor in hex
    const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
    const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
    const file = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${ino}`;
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      // "1: POSIX  ADVISORY  WRITE 1234 fe:00:2301958 1073741824 1073742335"; a waiter's line has "->"
      const [, type, , , pid, lockedFile] = line.trim().split(/\s+/);
      if (type === 'POSIX' && lockedFile === file && Number(pid) > 0) return Number(pid);
    }
  } catch {
    // no /proc/locks here: the refusal is made without the process
  }
  return null;
}
