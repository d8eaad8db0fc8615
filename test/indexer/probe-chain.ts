// A real chain for the host-probe subgraph: its own anvil with the ProbeEmitter contract deployed,
// probe(kind, input) mining one block that emits one Probe event, and blocks of any transactions,
// reverting ones included (for the call handlers, with a ProbeCaller to make inner calls); and an
// indexer of the probe subgraph over it. The end-to-end tests that run the probe subgraph through
// the chain follower (not through synthetic logs) share them.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, parseAbi, type Hex } from 'viem';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { compileSolidity } from '../../devnet/compile.ts';
import { createRpcClient, type RpcClient } from '../../devnet/rpc.ts';
import { createTxQueue } from '../../devnet/tx-queue.ts';
import { createIndexer, type Indexer, type IndexerConfig } from '../../indexer/indexer.ts';
import type { NetworkContract } from '../../indexer/runtime/manifest.ts';
import { buildProbeSubgraph, editedProbeBuild } from './probe-build.ts';

const contractFile = new URL('../fixtures/host-probe/contracts/ProbeEmitter.sol', import.meta.url).pathname;
const probeAbi = parseAbi([
  'function probe(uint8 kind, string input) payable',
  'function probeReceipt(uint8 tag)',
]);
/** anvil's first account; anvil signs for it */
export const probeSender: Hex = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';

export interface ProbeChain {
  anvil: AnvilInstance;
  rpc: RpcClient;
  /** the ProbeEmitter's address (lowercase) */
  emitter: Hex;
  deployBlock: number;
  /**
   * The probe subgraph's data sources on this chain, all from the deploy block: ProbeEmitter and
   * ProbeCalls at the emitter; the block handler ones (EveryBlock, PollingBlock) and DeclaredCalls
   * (which would write what ProbeEmitter writes) at addresses that emit nothing
   */
  contracts: Record<string, NetworkContract>;
  /** mines one block whose only transaction calls probe(kind, input), paying `value` wei; returns its number */
  probe(kind: number, input: string, value?: bigint): Promise<number>;
  /** mines one block whose only transaction emits ProbeReceipt(tag); returns the transaction hash */
  probeReceipt(tag: number): Promise<Hex>;
  /**
   * mines one block with a probe(kind, input) transaction per call, in order, each to `emitter`
   * (default the ProbeEmitter); returns the block number and the transaction hashes
   */
  probesInOneBlock(
    calls: { emitter?: Hex; kind: number; input: string }[],
  ): Promise<{ number: number; txHashes: Hex[] }>;
  /** deploys another ProbeEmitter (one block); returns its address (lowercase) */
  deployEmitter(): Promise<Hex>;
  /** deploys a ProbeCaller (one block); returns its address (lowercase) */
  deployCaller(): Promise<Hex>;
  /**
   * mines one block with these transactions from probeSender, in order, each with a fixed gas limit
   * and unchecked (they may revert); returns the block number and the transaction hashes
   */
  mine(txs: { to: Hex; data: Hex }[]): Promise<{ number: number; txHashes: Hex[] }>;
  stop(): Promise<void>;
}

export async function startProbeChain(): Promise<ProbeChain> {
  const compiled = compileSolidity({ 'ProbeEmitter.sol': { content: readFileSync(contractFile, 'utf8') } });
  const bytecode = `0x${compiled['ProbeEmitter.sol']!.ProbeEmitter!.evm.bytecode.object}` as Hex;
  const callerBytecode = `0x${compiled['ProbeEmitter.sol']!.ProbeCaller!.evm.bytecode.object}` as Hex;
  const anvil = await startAnvil();
  const rpc = createRpcClient(anvil.rpcUrl);
  // one block per transaction, mined through the devnet's checked queue (with automine a receipt
  // could be read before anvil stored it)
  const sendAll = async (txs: { to?: Hex; data: Hex; value?: bigint }[]) => {
    const latest = await rpc.request<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
    const queue = createTxQueue(rpc);
    await queue.send(
      txs.map((tx) => ({ from: probeSender, ...tx, label: tx.to ? 'probe' : 'deploy ProbeEmitter' })),
    );
    return queue.mine(BigInt(latest.timestamp) + 12n);
  };
  const send = (tx: { to?: Hex; data: Hex; value?: bigint }) => sendAll([tx]);
  const deployCode = async (code: Hex) =>
    (await send({ data: code })).txs[0]!.receipt.contractAddress!.toLowerCase() as Hex;
  const deploy = () => deployCode(bytecode);
  const probeData = (kind: number, input: string) =>
    encodeFunctionData({ abi: probeAbi, functionName: 'probe', args: [kind, input] });
  const emitter = await deploy();
  const deployBlock = Number(await rpc.request<Hex>('eth_blockNumber', []));
  return {
    anvil,
    rpc,
    emitter,
    deployBlock,
    contracts: {
      ProbeEmitter: { address: emitter, startBlock: deployBlock },
      EveryBlock: { address: `0x${'bb'.repeat(20)}`, startBlock: deployBlock },
      PollingBlock: { address: `0x${'cc'.repeat(20)}`, startBlock: deployBlock },
      ProbeCalls: { address: emitter, startBlock: deployBlock },
      DeclaredCalls: { address: `0x${'ee'.repeat(20)}`, startBlock: deployBlock },
    },
    async probe(kind, input, value) {
      return Number((await send({ to: emitter, data: probeData(kind, input), value })).number);
    },
    async probesInOneBlock(calls) {
      const block = await sendAll(
        calls.map((c) => ({ to: c.emitter ?? emitter, data: probeData(c.kind, c.input) })),
      );
      return { number: Number(block.number), txHashes: block.txs.map((t) => t.receipt.transactionHash) };
    },
    deployEmitter: deploy,
    deployCaller: () => deployCode(callerBytecode),
    async mine(txs) {
      const latest = await rpc.request<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
      const txHashes: Hex[] = [];
      for (const tx of txs)
        txHashes.push(
          await rpc.request<Hex>('eth_sendTransaction', [{ from: probeSender, ...tx, gas: '0x200000' }]),
        );
      await rpc.request('evm_mine', [Number(BigInt(latest.timestamp) + 12n)]);
      return { number: Number(await rpc.request<Hex>('eth_blockNumber', [])), txHashes };
    },
    async probeReceipt(tag) {
      const data = encodeFunctionData({ abi: probeAbi, functionName: 'probeReceipt', args: [tag] });
      return (await send({ to: emitter, data })).txs[0]!.receipt.transactionHash;
    },
    stop: () => anvil.stop(),
  };
}

/**
 * The probe subgraph's data sources on `chain` with handleProbe run at the emitter by `dataSource`:
 * ProbeEmitter (no calls declared) or DeclaredCalls (calls declared). Both would write the same
 * immutable ProbeResults, so the other one is put at an address that emits nothing.
 */
export function probeHandledBy(
  chain: ProbeChain,
  dataSource: 'ProbeEmitter' | 'DeclaredCalls',
): Record<string, NetworkContract> {
  const at = (address: string) => ({ address, startBlock: chain.deployBlock });
  return {
    ...chain.contracts,
    ProbeEmitter: at(dataSource === 'ProbeEmitter' ? chain.emitter : `0x${'aa'.repeat(20)}`),
    DeclaredCalls: at(dataSource === 'DeclaredCalls' ? chain.emitter : `0x${'ee'.repeat(20)}`),
  };
}

/**
 * The probe subgraph indexing `chain` through `rpcUrl` (anvil itself unless given, e.g. a proxy)
 * with `options`, started, in a temporary data directory unless `options.dataDir` names one (the
 * test's own, which a restart reuses); stop() stops it and removes the temporary directory.
 */
export async function startProbeIndexer(
  chain: ProbeChain,
  rpcUrl = chain.anvil.rpcUrl,
  options: Partial<
    Pick<
      IndexerConfig,
      'transactions' | 'log' | 'contracts' | 'files' | 'buildDir' | 'dataDir' | 'disableFailFast'
    >
  > = {},
): Promise<{ indexer: Indexer; stop(): Promise<void> }> {
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'probe-indexer-'));
  const indexer = await createIndexer({
    rpcUrl,
    network: 'devnet',
    port: 0,
    buildDir: buildProbeSubgraph(),
    contracts: chain.contracts,
    pollIntervalMs: 20,
    log: () => undefined,
    ...options,
    dataDir,
  });
  await indexer.start();
  return {
    indexer,
    async stop() {
      await indexer.stop();
      if (temporary) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The probe subgraph, its build edited as editedProbeBuild edits it, indexing `chain`, started;
 * stop() stops it and removes its build and data directories.
 */
export async function startEditedProbeIndexer(
  chain: ProbeChain,
  editManifest: (manifest: string) => string,
  editSchema?: (schema: string) => string,
): Promise<{ indexer: Indexer; stop(): Promise<void> }> {
  const buildDir = editedProbeBuild(editManifest, editSchema);
  const running = await startProbeIndexer(chain, undefined, { buildDir });
  return {
    indexer: running.indexer,
    async stop() {
      await running.stop();
      rmSync(buildDir, { recursive: true, force: true });
    },
  };
}
