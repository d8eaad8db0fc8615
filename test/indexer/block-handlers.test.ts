// Block handlers on a real chain: the follower runs the blocks where they fire even when those
// blocks have no logs, and hands each handler the block's header as the node gave it. The probe
// subgraph's EveryBlock and PollingBlock data sources (from the emitter's deploy block) record the
// blocks they saw; most blocks here are mined empty.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import { queryIndexer } from './graphql-client.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

interface Seen {
  handler: string;
  number: string;
  gasLimit: string;
  author: string;
}

let chain: ProbeChain;
let running: { indexer: Indexer; stop(): Promise<void> };
let head: number;
let seen: Seen[];

beforeAll(async () => {
  chain = await startProbeChain();
  for (let i = 0; i < 5; i++) await chain.rpc.request('evm_mine', []);
  await chain.probe(5, '1');
  for (let i = 0; i < 3; i++) await chain.rpc.request('evm_mine', []);
  head = Number(await chain.rpc.request<string>('eth_blockNumber', []));
  running = await startProbeIndexer(chain);
  const { indexer } = running;
  await indexer.waitForBlock(head);
  ({ blockSeens: seen } = await queryIndexer<{ blockSeens: Seen[] }>(
    indexer.queryUrl,
    '{ blockSeens(first: 1000, orderBy: sequence) { handler number gasLimit author } }',
  ));
}, 180_000);

afterAll(async () => {
  await running?.stop();
  await chain?.stop();
});

const blocksOf = (handler: string) => seen.filter((s) => s.handler === handler).map((s) => Number(s.number));
const range = (from: number, to: number, step = 1) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

describe('indexer: block handlers on a real chain', () => {
  it('runs the unfiltered handler on every block from the start block, logs or not', () => {
    expect(blocksOf('every')).toEqual(range(chain.deployBlock, head));
  });

  it('runs `once` at the start block and `polling` every 3 blocks from it', () => {
    expect(blocksOf('once')).toEqual([chain.deployBlock]);
    expect(blocksOf('polling')).toEqual(range(chain.deployBlock, head, 3));
  });

  it('hands each handler the header fields of its block as the node reports them', async () => {
    const block = await chain.rpc.request<{ gasLimit: string; miner: string }>('eth_getBlockByNumber', [
      `0x${head.toString(16)}`,
      false,
    ]);
    const last = seen.find((s) => s.handler === 'every' && Number(s.number) === head)!;
    expect(last.gasLimit).toBe(BigInt(block.gasLimit).toString());
    expect(last.author).toBe(block.miner.toLowerCase());
  });
});
