// The worker threads of the service and the indexer (query workers, the distribution verifier) run
// the bundles `npm run build:indexer` makes in build/, never TypeScript, also when the process runs
// from source (tsx, vitest): a thread that loaded TypeScript through tsx's require hook left a zombie
// esbuild process behind once it ended, and tsx lists its whole disk cache into the thread's heap as
// it loads (58,707 entries after a few days of edits ran a 16 MiB heap out of memory before any
// work). A missing bundle is refused before any thread is needed, saying how to make it.
// It imports nothing of the project.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Throws unless the bundle `script` exists: `what` names it ("the query worker's bundle"),
 * `builtFirstBy` the scripts that build it before they start ("npm start and npm test").
 */
export function checkThreadBundle(script: URL, what: string, builtFirstBy: string): void {
  if (!existsSync(script)) {
    throw new Error(
      `${what} ${fileURLToPath(script)} is missing: run npm run build (${builtFirstBy} run it first)`,
    );
  }
}
