// A file system of its own for the tests of a full or read-only disk: a tmpfs of a given size
// mounted on a temporary directory, which these tests fill without touching anything else's.
// Mounting takes root, as test/reliability/indexer-faults.test.ts's small file system does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallDisk {
  /** the mount point */
  dir: string;
  /** fills it up, appending to a file of its own until there is no room left */
  fill(): void;
  /** unmounts it (at once, even while a connection still closes there) and removes the mount point */
  remove(): void;
}

/** A tmpfs of `sizeKiB`, read-only if asked, mounted on a new temporary directory. */
export function mountSmallDisk(sizeKiB: number, mode: 'rw' | 'ro' = 'rw'): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'small-disk-'));
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,${mode}`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (mount.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `this test needs a small disk of its own and must mount a tmpfs, as root: ${mount.stderr}`,
    );
  }
  return {
    dir,
    fill() {
      const file = join(dir, 'filler');
      for (const chunk of [Buffer.alloc(4096), Buffer.alloc(1)]) {
        try {
          for (;;) writeFileSync(file, chunk, { flag: 'a' });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        }
      }
    },
    remove() {
      spawnSync('umount', ['--lazy', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
