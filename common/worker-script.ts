// The JavaScript a worker thread runs for a TypeScript module, when the service runs from source
// (tsx, vitest). Loading the module through tsx's require hook in the thread, as before, had two
// costs that grew with the service's life: every thread left a zombie esbuild process behind (tsx
// starts one per thread, and nothing reaps it once the thread ends: one per distribution checked,
// one per idle query worker ended), and tsx lists its whole disk cache into the thread's heap as it
// loads (58,707 entries, 720 MB of cache, after a few days of edits), which alone ran a 16 MiB or
// 24 MiB heap out of memory before the thread did any work. A bundle made by esbuild's synchronous
// API (one esbuild process per build, reaped as it ends) loads with neither: the thread runs plain
// JavaScript, and only packages from node_modules are imported. The bundle is made once per process
// from the source as it is then, so a thread never runs older code than its parent; a bundled
// service (`npm run indexer`) starts its threads from the bundles `npm run build:indexer` made.
// It imports nothing of the project.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Esbuild from 'esbuild';

/** the directory bundles are written to: build/ is the project's (gitignored) output directory */
const BUNDLES = fileURLToPath(new URL('../build/workers/', import.meta.url));
const PROJECT = fileURLToPath(new URL('../', import.meta.url));

/** the bundle of each source module made by this process */
const made = new Map<string, URL>();

/**
 * The file a worker thread runs for the module at `source` (a .ts URL in the project): its bundle,
 * made on the first call in this process. Its name is the module's path, so processes running the
 * same source share one file; each writes it whole under another name first and renames it, so a
 * thread never loads a file half written.
 */
export function workerScript(source: URL): URL {
  const path = fileURLToPath(source);
  const known = made.get(path);
  if (known) return known;
  // loaded here, not at the top: a bundled service imports this module but never bundles anything
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof Esbuild;
  const name = relative(PROJECT, path).replace(/\.ts$/, '').replaceAll('/', '-');
  const target = `${BUNDLES}${name}.mjs`;
  const built = esbuild.buildSync({
    entryPoints: [path],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: target,
    write: false,
    logLevel: 'silent',
  });
  mkdirSync(BUNDLES, { recursive: true });
  const written = `${target}.${process.pid}`;
  writeFileSync(written, built.outputFiles[0]!.contents);
  renameSync(written, target);
  const script = pathToFileURL(target);
  made.set(path, script);
  return script;
}
