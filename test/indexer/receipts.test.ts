// `receipt: true` event handlers on a real chain: the follower fetches the receipts of the
// transactions whose logs such a handler gets (and only those), and the handler sees the receipt
// and the block as the node reports them. The probe subgraph's handleProbeReceipt reports them.
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import { queryIndexer } from './graphql-client.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

let chain: ProbeChain;
let running: { indexer: Indexer; stop(): Promise<void> };
let txHash: Hex;
let output: string;

beforeAll(async () => {
  chain = await startProbeChain();
  txHash = await chain.probeReceipt(7);
  await chain.probe(5, '1'); // a later block: the receipt must come from its own
  running = await startProbeIndexer(chain);
  const { indexer } = running;
  await indexer.waitForHead();
  ({
    probeResult: { output },
  } = await queryIndexer<{ probeResult: { output: string } }>(
    indexer.queryUrl,
    `{ probeResult(id: "${txHash}-0") { output } }`,
  ));
}, 180_000);

afterAll(async () => {
  await running?.stop();
  await chain?.stop();
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
