// subgraph/networks.json must name the devnet's real deployment (the deterministic addresses and
// the deployment block the harness deploys), and give every network an entry per data source.
import { describe, expect, inject, it } from 'vitest';
import { readNetwork, readNetworks } from '../../subgraph/scripts/networks.ts';

describe('subgraph networks.json', () => {
  it('gives the devnet the addresses and start block of the deterministic deployment', () => {
    const { deployment } = inject('devnet');
    const at = (address: string) => ({ address: address.toLowerCase(), startBlock: deployment.startBlock });
    const devnet = Object.fromEntries(
      Object.entries(readNetwork('devnet')).map(([name, entry]) => [
        name,
        { address: entry.address.toLowerCase(), startBlock: entry.startBlock },
      ]),
    );
    expect(devnet).toEqual({
      FundRegistry: at(deployment.contracts.fundRegistry),
      NavOracle: at(deployment.contracts.navOracle),
      DividendDistributor: at(deployment.contracts.dividendDistributor),
    });
  });

  it('has a complete entry for the devnet and for sepolia', () => {
    expect(Object.keys(readNetworks()).sort()).toEqual(['devnet', 'sepolia']);
    for (const network of ['devnet', 'sepolia']) {
      expect(Object.keys(readNetwork(network)).sort(), network).toEqual([
        'DividendDistributor',
        'FundRegistry',
        'NavOracle',
      ]);
    }
  });
});
