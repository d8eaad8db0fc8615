// Logs of our protocol's FundRegistry and FundVaults as the log-density node serves them: a chain
// without contracts on which the real subgraph registers as many funds as a test or benchmark
// needs (anvil would deploy each vault), each registration creating a FundVault data source.
import { encodeAbiParameters, pad, toEventSelector, type Hex } from 'viem';
import type { NetworkContract } from '../../indexer/runtime/manifest.ts';
import type { SyntheticLog } from './log-density-node.ts';

export const REGISTRY: Hex = '0x00000000000000000000000000000000000f0001';

/** The subgraph's static data sources, all from block 1; only the registry emits logs. */
export const SYNTHETIC_CONTRACTS: Record<string, NetworkContract> = {
  FundRegistry: { address: REGISTRY, startBlock: 1 },
  NavOracle: { address: '0x00000000000000000000000000000000000f0002', startBlock: 1 },
  DividendDistributor: { address: '0x00000000000000000000000000000000000f0003', startBlock: 1 },
};

export const FUND_REGISTERED = toEventSelector('FundRegistered(address,address,address,string)');
const SUBSCRIPTION_REQUESTED = toEventSelector('SubscriptionRequested(address,uint64,uint256)');

/** The vault of the `fund`-th fund. */
export const vaultOf = (fund: number): Hex => `0xfa${fund.toString(16).padStart(38, '0')}`;

/** The registry's FundRegistered of the `fund`-th fund. */
export function fundRegistered(fund: number): SyntheticLog {
  return {
    address: REGISTRY,
    topics: [FUND_REGISTERED, pad(vaultOf(fund)), pad(vaultOf(fund + 1_000_000)), pad(REGISTRY)],
    data: encodeAbiParameters([{ type: 'string' }], [`fund-${fund}`]),
  };
}

/** A SubscriptionRequested of the `fund`-th fund's vault: `request` picks investor and amount. */
export function subscriptionRequested(fund: number, request: number, epoch: number): SyntheticLog {
  return {
    address: vaultOf(fund),
    topics: [
      SUBSCRIPTION_REQUESTED,
      pad(vaultOf(2_000_000 + (request % 500))),
      pad(`0x${epoch.toString(16)}`),
    ],
    data: encodeAbiParameters([{ type: 'uint256' }], [BigInt(request + 1) * 10n ** 15n]),
  };
}
