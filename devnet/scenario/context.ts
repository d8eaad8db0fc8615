// What every part of the scenario shares, in one object passed explicitly: the chain clients, the
// deployment, the parameters, the one random source, the per-fund state and the ledger being
// written. The parts are plain functions of this context, so each one can be read on its own and
// the day loop in ../scenario.ts shows the order in which they touch the chain and the random source.
import { encodeFunctionData, toEventSelector, type Abi, type AbiEvent, type Address, type Hex } from 'viem';
import { abiOf, type Deployment } from '../deploy.ts';
import { createAbiLogDecoder, type AbiLogDecoder } from '../abi-log-decoder.ts';
import type { Ledger, TxRef } from '../ledger.ts';
import { createRandom, type Random } from '../random.ts';
import { createRpcClient, type RpcClient } from '../rpc.ts';
import type { ScenarioParams } from '../scenario-params.ts';
import { createTxQueue, type MinedBlock, type TxLog, type TxQueue, type TxRequest } from '../tx-queue.ts';
import { createFunds, type FundRun } from './funds.ts';

export const USDC = 1_000_000n;

export interface ScenarioContext {
  params: ScenarioParams;
  deployment: Deployment;
  rpc: RpcClient;
  queue: TxQueue;
  /**
   * The only source of randomness. Determinism rests on its draws happening in the same order on
   * every run: a part that draws earlier or later than before changes the whole chain after it.
   */
  random: Random;
  funds: FundRun[];
  /** Investors are shared between funds and use the faucet once, before their first subscription. */
  fundedInvestors: Set<Address>;
  abis: Record<'usdc' | 'vault' | 'share' | 'oracle' | 'distributor', Abi>;
  decodeVaultLog: AbiLogDecoder;
  decodeDistributorLog: AbiLogDecoder;
  ledger: Ledger;
}

export function createScenarioContext(
  rpcUrl: string,
  deployment: Deployment,
  params: ScenarioParams,
): ScenarioContext {
  const rpc = createRpcClient(rpcUrl);
  const random = createRandom(params.seed);
  // The ABIs are read here rather than at import: devnet/main.ts imports the scenario before it compiles.
  const abis = {
    usdc: abiOf('MockUSDC'),
    vault: abiOf('FundVault'),
    share: abiOf('FundShareToken'),
    oracle: abiOf('NavOracle'),
    distributor: abiOf('DividendDistributor'),
  };
  return {
    params,
    deployment,
    rpc,
    queue: createTxQueue(rpc),
    random,
    funds: createFunds(random, deployment, params),
    fundedInvestors: new Set(),
    abis,
    decodeVaultLog: createAbiLogDecoder(abis.vault),
    decodeDistributorLog: createAbiLogDecoder(abis.distributor),
    ledger: {
      params,
      startBlock: deployment.startBlock,
      endBlock: 0,
      endTimestamp: 0,
      txCount: 0,
      seedingMs: 0,
      funds: [],
      settlements: [],
      requests: [],
      navRecords: [],
      rounds: [],
      claims: [],
      allocations: [],
      moduleChanges: [],
      eventCounts: {},
      eventCountsByAddress: {},
      totalEvents: 0,
      trackedEvents: 0,
    },
  };
}

export function contractCall(
  from: Address,
  to: Address,
  abi: Abi,
  functionName: string,
  args: readonly unknown[],
  label: string,
): TxRequest {
  return { from, to, data: encodeFunctionData({ abi, functionName, args }), label };
}

export function eventTopic(abi: Abi, name: string): Hex {
  return toEventSelector(abi.find((e) => e.type === 'event' && e.name === name) as AbiEvent);
}

export function txRef(block: MinedBlock, hash: Hex): TxRef {
  return { txHash: hash, blockNumber: Number(block.number), timestamp: Number(block.timestamp) };
}

/** Every log of a mined block in chain order, with its transaction; only those of `hashes` when given. */
export function* minedLogs(
  block: MinedBlock,
  hashes?: Set<Hex>,
): Generator<{ request: TxRequest; log: TxLog; ref: TxRef }> {
  for (const { request, hash, receipt } of block.txs) {
    if (hashes && !hashes.has(hash)) continue;
    for (const log of receipt.logs) yield { request, log, ref: txRef(block, hash) };
  }
}
