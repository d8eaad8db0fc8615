// A process that takes a store's lock, for store-lock.test.ts: run as `node --import tsx
// store-lock-contender.ts <store path>`, it says `ready`, tries lockStore when it reads `go`, says
// `holds <its pid>` or `refused: <the message>`, and lives (holding what it took) until its stdin
// ends.
import { createInterface } from 'node:readline';
import { lockStore } from '../../indexer/store/store-lock.ts';

const storePath = process.argv[2]!;
const input = createInterface({ input: process.stdin });
input.once('line', () => {
  try {
    lockStore(storePath);
    console.log(`holds ${process.pid}`);
  } catch (error) {
    console.log(`refused: ${(error as Error).message}`);
  }
});
input.once('close', () => process.exit(0));
console.log('ready');
