// `receipt: true` event handlers on a real chain: the follower fetches the receipts of the
// transactions whose logs such a handler gets (and only those), and the handler sees the receipt
// and the block as the node reports them. The probe subgraph's handleProbeReceipt reports them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndexer, type Indexer } from '../../indexer/indexer.ts';
import { queryIndexer } from './graphql-client.ts';
import { startProbeChain, type ProbeChain } from './probe-chain.ts';
import { buildProbeSubgraph } from './runtime/runtime-harness.ts';

let chain: ProbeChain;
let indexer: Indexer;
let dataDir: string;
let txHash: Hex;
let output: string;

beforeAll(async () => {
  const buildDir = buildProbeSubgraph();
  chain = await startProbeChain();
  txHash = await chain.probeReceipt(7);
  await chain.probe(5, '1'); // a later block: the receipt must come from its own
  dataDir = mkdtempSync(join(tmpdir(), 'indexer-receipts-'));
  indexer = await createIndexer({
    rpcUrl: chain.anvil.rpcUrl,
    network: 'devnet',
    dataDir,
    port: 0,
    buildDir,
    contracts: chain.contracts,
    pollIntervalMs: 20,
    log: () => undefined,
  });
  await indexer.start();
  await indexer.waitForHead();
  ({
    probeResult: { output },
  } = await queryIndexer<{ probeResult: { output: string } }>(
    indexer.queryUrl,
    `{ probeResult(id: "${txHash}-0") { output } }`,
  ));
}, 180_000);

afterAll(async () => {
  await indexer?.stop();
  await chain?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('indexer: receipt: true handlers on a real chain', () => {
  it('gives the handler the transaction’s receipt as the node reports it', async () => {
    const receipt = await chain.rpc.request<{ gasUsed: Hex; status: Hex; logs: unknown[] }>(
      'eth_getTransactionReceipt',
      [txHash],
    );
    expect(receipt.logs).toHaveLength(1);
    expect(output).toContain(
      `;receipt:${BigInt(receipt.gasUsed)},${BigInt(receipt.status)},1,${chain.emitter},1,0`,
    );
  });

  it('gives the handler its block’s number, timestamp and parent hash', async () => {
    const receipt = await chain.rpc.request<{ blockNumber: Hex }>('eth_getTransactionReceipt', [txHash]);
    const block = await chain.rpc.request<{ timestamp: Hex; parentHash: Hex }>('eth_getBlockByNumber', [
      receipt.blockNumber,
      false,
    ]);
    expect(output).toContain(
      `;block:${BigInt(receipt.blockNumber)},${BigInt(block.timestamp)},${block.parentHash};`,
    );
  });
});
