// vitest globalSetup: starts the shared fixtures once per run and provides them to every suite.
// Each fixture lives in its own module (devnet.ts, ...) and is wired here.
import type { TestProject } from 'vitest/node';
import { startDevnetFixture } from './devnet.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const devnet = await startDevnetFixture();
  project.provide('devnet', devnet.fixture);
  return async () => {
    await devnet.stop();
  };
}
