// The subgraph's committed ABIs must be the devnet contracts' compile output: the contracts
// are the one source of truth, and `npm run subgraph:abis` is how the copies follow them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compiledAbi, driftedAbis, manifestAbis, renderAbi } from '../../subgraph/scripts/abi-sync.ts';

describe('subgraph ABIs', () => {
  it('declares the ABIs of FundRegistry, NavOracle, DividendDistributor and FundVault', () => {
    expect(manifestAbis().map((abi) => abi.name)).toEqual([
      'FundRegistry',
      'NavOracle',
      'DividendDistributor',
      'FundVault',
    ]);
  });

  it('keeps every committed ABI equal to the devnet compile output (fix: npm run subgraph:abis)', () => {
    expect(driftedAbis()).toEqual([]);
  });

  it('stores each ABI exactly as the sync script writes it', () => {
    for (const { name, path } of manifestAbis()) {
      expect(readFileSync(path, 'utf8'), name).toBe(renderAbi(compiledAbi(name)));
    }
  });
});
