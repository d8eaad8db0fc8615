// One vitest configuration: the suites share the devnet and indexed scenario that
// test/harness/global-setup.ts starts once per run; those that change a chain start a private one.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // graphql ships index.mjs ('module') and index.js ('main') without an exports map: Vite would pick
  // the .mjs for our sources while Node loads the .js for Pothos, Yoga and graphql-jit, and two
  // copies of graphql reject each other's schemas. One copy for everything, as under tsx.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 240_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
