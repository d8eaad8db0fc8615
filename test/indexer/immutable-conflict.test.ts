// An immutable entity written again by a later block, met by the chain follower on a real chain.
// While following, store.set does not look a new immutable entity up; the store's unique id index
// refuses the repeated insert and the follower runs the block again with the lookups, so the
// subgraph fails exactly as graph-node words it, naming the handler, and keeps the earlier block.
// The host-probe subgraph (kind 28 writes the immutable ProbeResult `fixed`) runs over a contract
// that emits its events on the test's own anvil.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, parseAbi, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { compileSolidity } from '../../devnet/compile.ts';
import { createRpcClient, type RpcClient } from '../../devnet/rpc.ts';
import { createTxQueue } from '../../devnet/tx-queue.ts';
import { createIndexer, type Indexer } from '../../indexer/indexer.ts';
import { queryIndexer } from './graphql-client.ts';
import { buildProbeSubgraph } from './runtime/runtime-harness.ts';

const contractFile = new URL('../fixtures/host-probe/contracts/ProbeEmitter.sol', import.meta.url).pathname;
const probeAbi = parseAbi(['function probe(uint8 kind, string input)']);
/** anvil's first account; anvil signs for it */
const sender = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

let anvil: AnvilInstance;
let rpc: RpcClient;
let indexer: Indexer;
let dataDir: string;
let emitter: Hex;
let deployBlock: number;

/** Mines one block holding `tx` (through the devnet's checked transaction queue). */
async function send(tx: {
  to?: Hex;
  data: Hex;
}): Promise<{ blockNumber: number; contractAddress: Hex | null }> {
  const latest = await rpc.request<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
  const queue = createTxQueue(rpc);
  await queue.send([{ from: sender, ...tx, label: tx.to ? 'probe' : 'deploy ProbeEmitter' }]);
  const block = await queue.mine(BigInt(latest.timestamp) + 12n);
  return { blockNumber: Number(block.number), contractAddress: block.txs[0]!.receipt.contractAddress };
}

const probe = (kind: number, input: string) =>
  send({
    to: emitter,
    data: encodeFunctionData({ abi: probeAbi, functionName: 'probe', args: [kind, input] }),
  });

beforeAll(async () => {
  const buildDir = buildProbeSubgraph();
  const compiled = compileSolidity({ 'ProbeEmitter.sol': { content: readFileSync(contractFile, 'utf8') } });
  const bytecode = `0x${compiled['ProbeEmitter.sol']!.ProbeEmitter!.evm.bytecode.object}` as Hex;
  anvil = await startAnvil();
  rpc = createRpcClient(anvil.rpcUrl);
  const deployed = await send({ data: bytecode });
  emitter = deployed.contractAddress!;
  deployBlock = deployed.blockNumber;
  dataDir = mkdtempSync(join(tmpdir(), 'indexer-immutable-'));
  indexer = await createIndexer({
    rpcUrl: anvil.rpcUrl,
    network: 'devnet',
    dataDir,
    port: 0,
    buildDir,
    contracts: { ProbeEmitter: { address: emitter, startBlock: deployBlock } },
    pollIntervalMs: 20,
    log: () => undefined,
  });
  await indexer.start();
}, 180_000);

afterAll(async () => {
  await indexer?.stop();
  await anvil?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('indexer: an immutable entity written again by a later block', () => {
  it('fails the subgraph naming the handler and keeps the state of the block before', async () => {
    const first = await probe(28, 'first');
    await indexer.waitForBlock(first.blockNumber);
    const second = await probe(28, 'second');
    await expect(indexer.waitForBlock(second.blockNumber)).rejects.toThrow(
      `Handler handleProbe of data source ProbeEmitter failed at block ${second.blockNumber}`,
    );
    const status = indexer.status();
    expect(status.fatalError).toContain(
      'Entity ProbeResult[fixed] is immutable and was inserted at an earlier block; it cannot be updated',
    );
    expect(status.checkpoint).toBe(first.blockNumber);
    const stored = await queryIndexer<{
      probeResult: { input: string };
      _meta: { hasIndexingErrors: boolean };
    }>(indexer.queryUrl, '{ probeResult(id: "fixed") { input } _meta { hasIndexingErrors } }');
    expect(stored).toEqual({ probeResult: { input: 'first' }, _meta: { hasIndexingErrors: true } });
  });
});
