// Directories the service's processes make and read. Making one a variable names (the indexer's
// DATA_DIR, the devnet's data dir), with its missing parents. Node 20's mkdirSync(path, { recursive: true }) never returns where a missing
// directory cannot be made in a parent that exists: under /proc, mkdir answers ENOENT, and Node
// takes that for a missing parent and tries again, forever, at full CPU and deaf to SIGTERM (one
// mistyped DATA_DIR hung `npm run indexer`). This makes the missing levels one at a time, so such a
// path fails with the error mkdir gave. Listing the files under one in an order that does not
// depend on the file system: what the subgraph build's input hash and the indexer's deployment id
// are computed over. It lives in common/ because the indexer and the devnet and subgraph scripts
// are separate processes, none of which may import another.
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Makes `path` and its missing parents; throws mkdir's error (ENOENT, EACCES, ENOTDIR, EROFS…) where one cannot be made. */
export function makeDirectory(path: string): void {
  const missing: string[] = [];
  for (let at = resolve(path); !existsSync(at); at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (error) {
      // made meanwhile by another process: fine if it is a directory
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) throw error;
    }
  }
}

/**
 * The files under `dir`, at any depth, following links: each directory's entries sorted by name,
 * a subdirectory's files in its place (`a/b` before `a.txt`).
 */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name);
      return statSync(full).isDirectory() ? filesUnder(full) : [full];
    });
}
