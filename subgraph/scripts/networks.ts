// subgraph/networks.json: per network, the address and start block of each static data
// source, in the layout graph-cli's `--network` reads. The devnet entry is the deterministic
// devnet deployment; public networks are filled in by the operator before deploying.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readManifest, subgraphDir } from '../manifest.ts';

const networksPath = join(subgraphDir, 'networks.json');
const zeroAddress = '0x0000000000000000000000000000000000000000';

interface DataSourceNetwork {
  address: string;
  startBlock: number;
}

type NetworkConfig = Record<string, DataSourceNetwork>;
export type Networks = Record<string, NetworkConfig>;

/** the entry of the local anvil chain `npm run devnet` starts, which no hosted indexer can reach */
export const DEVNET_NETWORK = 'devnet';

export function readNetworks(): Networks {
  return JSON.parse(readFileSync(networksPath, 'utf8')) as Networks;
}

/**
 * The named network's entry of `networks` (subgraph/networks.json unless given), checked to give
 * every static data source an address and start block.
 */
export function readNetwork(network: string, networks: Networks = readNetworks()): NetworkConfig {
  const config = networks[network];
  if (config === undefined) {
    throw new Error(
      `network "${network}" is not in subgraph/networks.json (it has: ${Object.keys(networks).join(', ')})`,
    );
  }
  for (const source of readManifest().filter((s) => !s.template)) {
    const entry = config[source.name];
    if (
      entry === undefined ||
      !/^0x[0-9a-fA-F]{40}$/.test(entry.address) ||
      !Number.isInteger(entry.startBlock) ||
      entry.startBlock < 0
    ) {
      throw new Error(
        `subgraph/networks.json: "${network}" needs { "address": "0x…40 hex", "startBlock": integer >= 0 } for ${source.name}`,
      );
    }
  }
  return config;
}

/**
 * The named network's entry, refused while any static data source still has the zero address (not
 * yet deployed there): a build or deploy of it would index nothing, without a word.
 */
export function readDeployedNetwork(network: string, networks: Networks = readNetworks()): NetworkConfig {
  const config = readNetwork(network, networks);
  const unset = Object.entries(config)
    .filter(([, entry]) => entry.address.toLowerCase() === zeroAddress)
    .map(([name]) => name);
  if (unset.length > 0)
    throw new Error(
      `subgraph/networks.json: network "${network}" still has the zero address for ${unset.join(', ')}; ` +
        'set the deployed addresses and start blocks there before building or deploying it',
    );
  return config;
}
