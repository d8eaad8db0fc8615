// Types of the values test/harness/global-setup.ts provides to every suite (vitest inject()).
import type { DevnetFixture } from './devnet.ts';
import type { IndexerFixture } from './indexer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    devnet: DevnetFixture;
    indexer: IndexerFixture;
  }
}
