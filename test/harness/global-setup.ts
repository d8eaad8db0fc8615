// vitest globalSetup: starts the shared fixtures once per run and provides them to every suite.
// Each fixture lives in its own module (devnet.ts, ...) and is wired here.
import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { buildSubgraph } from '../../subgraph/scripts/build-subgraph.ts';
import { startDevnetFixture } from './devnet.ts';
import { startIndexerFixture } from './indexer.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Worker threads run the bundles in build/ (query workers, the distribution verifier) even when
  // the suites run from source: made again here, so that a suite never runs a thread's older code.
  execFileSync('npm', ['run', '-s', 'build:indexer'], { stdio: 'inherit' });
  const devnet = await startDevnetFixture();
  project.provide('devnet', devnet.fixture);
  try {
    // The indexer runs subgraph/build; building is a no-op when its inputs are unchanged.
    await buildSubgraph('devnet');
    const indexer = await startIndexerFixture(devnet.fixture);
    project.provide('indexer', indexer.fixture);
    return async () => {
      await indexer.stop();
      await devnet.stop();
    };
  } catch (error) {
    await devnet.stop();
    throw error;
  }
}
