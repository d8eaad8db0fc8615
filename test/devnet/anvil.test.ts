// Anvil writes the states of older blocks to disk and, stopped by a signal, never deletes them;
// left behind by every run, they once filled the disk CI runs on. startAnvil gives each anvil a
// home of its own and removes it when anvil stops.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAnvil } from '../../devnet/anvil.ts';
import { createRpcClient } from '../../devnet/rpc.ts';

// more blocks with state changes than anvil keeps in memory, so some states go to disk
const BLOCKS = 700;

describe('a stopped anvil', () => {
  it('leaves none of the block states it kept on disk', async () => {
    const anvil = await startAnvil({ automine: true });
    const rpc = createRpcClient(anvil.rpcUrl);
    const [from] = await rpc.request<string[]>('eth_accounts', []);
    for (let block = 0; block < BLOCKS; block++) {
      await rpc.request('eth_sendTransaction', [{ from, to: from, value: '0x1' }]);
    }
    const stateDir = join(anvil.home, '.foundry', 'anvil', 'tmp');
    expect(readdirSync(stateDir)).toHaveLength(1);
    await anvil.stop();
    expect(existsSync(anvil.home)).toBe(false);
  });
});
