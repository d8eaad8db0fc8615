// The chain id each network name stands for, for the networks graph-node and graph-cli name this way
// (The Graph's networks registry) and for the project's own devnet (anvil's default chain id). The
// indexer asks its node for the chain id at start-up and refuses one of another chain, which would
// otherwise be indexed as if it were the network named: on the wrong addresses, finding nothing.
export const NETWORK_CHAIN_IDS: Readonly<Record<string, number>> = {
  devnet: 31337,
  mainnet: 1,
  sepolia: 11155111,
  holesky: 17000,
  gnosis: 100,
  matic: 137,
  'polygon-amoy': 80002,
  'arbitrum-one': 42161,
  'arbitrum-sepolia': 421614,
  optimism: 10,
  'optimism-sepolia': 11155420,
  base: 8453,
  'base-sepolia': 84532,
  bsc: 56,
  avalanche: 43114,
  linea: 59144,
  celo: 42220,
  fantom: 250,
  scroll: 534352,
  'zksync-era': 324,
};
