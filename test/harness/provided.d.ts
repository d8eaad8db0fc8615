// Types of the values test/harness/global-setup.ts provides to every suite (vitest inject()).
import type { DevnetFixture } from './devnet.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    devnet: DevnetFixture;
  }
}
