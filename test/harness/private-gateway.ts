// A gateway over a private devnet (private-devnet.ts) and its own indexer, and the chain moves the
// suites that change that chain under the REST service make with it (live-chain, reorg-freshness):
// a transaction sent from any account and mined in a block of its own, whether the indexer holds a
// given block, and waiting until it holds the chain's head. One place, so that the suites cannot drift apart in how they build the
// service or move the chain.
import { parseAbi, type Hex } from 'viem';
import type { RpcClient } from '../../devnet/rpc.ts';
import { createGateway, type Gateway } from '../../gateway/server.ts';
import { loadRegistry } from '../../gateway/sources/registry.ts';
import { createIndexer, type Indexer } from '../../indexer/indexer.ts';
import { REGISTRY_FILE } from './stack.ts';
import type { SeededPrivateDevnet } from './private-devnet.ts';

/**
 * The devnet's own indexer, caught up with its scenario and reading the chain at `indexerRpcUrl`
 * (the devnet's, unless a suite puts a proxy between them), and a gateway over both.
 */
export async function indexedGateway(
  devnet: SeededPrivateDevnet,
  indexerRpcUrl = devnet.rpcUrl,
): Promise<{ indexer: Indexer; gateway: Gateway }> {
  const indexer = await createIndexer({
    rpcUrl: indexerRpcUrl,
    network: 'devnet',
    dataDir: devnet.dataDir,
    port: 0,
    pollIntervalMs: 50,
    log: () => {},
  });
  await indexer.start();
  await indexer.waitForBlock(devnet.ledger.endBlock);
  const gateway = createGateway({
    registry: loadRegistry(REGISTRY_FILE),
    subgraph: { url: indexer.queryUrl, timeoutMs: 10_000, maxBatch: 1000 },
    chain: { rpcUrl: devnet.rpcUrl, timeoutMs: 10_000, maxBatch: 200 },
    distributions: { base: devnet.dataDir, timeoutMs: 5_000, cacheSize: 8 },
    logError: () => {},
  });
  return { indexer, gateway };
}

/** Sends a transaction from any account (anvil impersonates), mines it in a block of its own; its receipt's status and block. */
export async function transact(
  rpc: RpcClient,
  from: string,
  to: string,
  data: Hex,
): Promise<{ status: string; blockNumber: number; blockHash: Hex }> {
  const hash = await rpc.request<Hex>('eth_sendTransaction', [
    { from, to, data, gas: '0x1e8480', gasPrice: '0x0' },
  ]);
  await rpc.request('evm_mine', []);
  const receipt = await rpc.request<{ status: string; blockNumber: Hex; blockHash: Hex }>(
    'eth_getTransactionReceipt',
    [hash],
  );
  return { status: receipt.status, blockNumber: Number(receipt.blockNumber), blockHash: receipt.blockHash };
}

/**
 * Whether the indexer holds block `hash` at `number`: reaching the number is not enough after a
 * reorg, where the indexer may still hold that number from the abandoned branch.
 */
export async function holdsBlock(indexer: Indexer, number: number, hash: Hex): Promise<boolean> {
  // graph-node's dialect answers a block given by hash only when it holds that very block
  const response = await fetch(indexer.queryUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `{ _meta(block: { hash: "${hash}" }) { block { number } } }` }),
  });
  const body = (await response.json()) as { data?: { _meta: { block: { number: number } } | null } | null };
  return body.data?._meta?.block.number === number;
}

/** The chain's head block. */
export async function chainHead(rpc: RpcClient): Promise<{ number: number; hash: Hex }> {
  const block = await rpc.request<{ number: Hex; hash: Hex }>('eth_getBlockByNumber', ['latest', false]);
  return { number: Number(block.number), hash: block.hash };
}

/**
 * Resolves with the chain's head once the indexer holds that very block (not another at its
 * height), within a minute. `mine`: mines a block while the head is not past the indexer's
 * checkpoint, since after evm_revert a new branch no longer than the abandoned one shows the
 * follower no reorg; left out, the chain is left as it is (a reorg to a shorter chain on a quiet
 * chain is what a suite may be testing).
 */
export async function indexedHead(
  rpc: RpcClient,
  indexer: Indexer,
  options: { mine?: boolean } = {},
): Promise<{ number: number; hash: Hex }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const block = await chainHead(rpc);
    if (await holdsBlock(indexer, block.number, block.hash)) return block;
    if (Date.now() > deadline)
      throw new Error(`the indexer did not reach block ${block.number} (${block.hash})`);
    if (options.mine && block.number <= indexer.status().checkpoint) await rpc.request('evm_mine', []);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The vault calls of its owner (the fund's multisig) the suites send to change what is indexed or read live. */
export const VAULT_OWNER_ABI = parseAbi([
  'function pause(uint8 module)',
  'function unpause(uint8 module)',
  'function setStrategy(address strategy, uint16 targetBps, uint16 capBps, bool active)',
]);
