// One vitest configuration: every suite shares the devnet and indexed scenario that
// test/harness/global-setup.ts starts once per run.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 240_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
