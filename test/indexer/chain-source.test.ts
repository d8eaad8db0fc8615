// The chain source's adaptive eth_getLogs span, against a loopback node serving a chosen number of
// logs per block: it follows the density toward the target number of logs per range, grows at most
// twofold per range, shrinks at once, and halves when the node refuses a range, delivering every log
// once whatever the ranges were; and it allows several ranges at once only over sparse stretches.
// A refusal that states a limit on the block span caps the span there for good; one of an answer's
// size lowers the number of logs ranges aim at for good. Blocks read with their transactions keep
// only those asked for, a few batches at a time.
import { HttpRequestError, type Hex, type Log } from 'viem';
import { afterEach, describe, expect, it } from 'vitest';
import { ChainSource, StoppedError } from '../../indexer/follower/chain-source.ts';
import type { LogFilter } from '../../indexer/follower/log-filters.ts';
import { effectiveGasPrice } from '../../indexer/follower/rpc-answers.ts';
import {
  describeRpcError,
  rateLimit,
  statedBlockLimit,
  statedResultLimit,
} from '../../indexer/follower/rpc-errors.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { startLogDensityNode, transactionHashOf, type LogDensityNode } from './log-density-node.ts';
import { devnetIndexers } from './devnet-indexers.ts';
import { startScriptedNode, type ScriptedAnswer } from './scripted-node.ts';
import { SYNTHETIC_CONTRACTS } from './synthetic-funds.ts';

const filter = { addresses: null, topics: [`0x${'11'.repeat(32)}` as const] };
let node: LogDensityNode | null = null;

let proxy: FaultProxy | null = null;

afterEach(async () => {
  await proxy?.close();
  await node?.close();
  node = null;
  proxy = null;
});

const widths = (ranges: [number, number][]) => ranges.map(([from, to]) => to - from + 1);

/** Logs of [from, to] in consecutive ranges of the chain source's span, as the follower fetches. */
async function allLogs(chain: ChainSource, logFilter: LogFilter, from: number, to: number): Promise<Log[]> {
  const out: Log[] = [];
  for (let start = from; start <= to; ) {
    const end = Math.min(to, start + chain.range - 1);
    const logs = await chain.logsInRange(logFilter, start, end);
    if (logs === 'too-large') continue;
    out.push(...logs);
    start = end + 1;
  }
  return out;
}

describe('the chain source splitting eth_getLogs into ranges', () => {
  it('grows the span at most twofold per range until ranges hold about the target number of logs', async () => {
    node = await startLogDensityNode(() => 100);
    const chain = new ChainSource({ rpcUrl: node.url, initialRange: 1, targetLogsPerRange: 1_000 });
    const logs = await allLogs(chain, filter, 1, 75);
    expect(logs).toHaveLength(7_500);
    expect(widths(node.ranges)).toEqual([1, 2, 4, 8, 10, 10, 10, 10, 10, 10]);
  });

  it('keeps a steady density at the target instead of at half of it', async () => {
    // 650 logs a block, target 5,000: 7 blocks (4,550 logs) a range, not 4 (2,600)
    node = await startLogDensityNode(() => 650);
    const chain = new ChainSource({ rpcUrl: node.url, initialRange: 4, targetLogsPerRange: 5_000 });
    await allLogs(chain, filter, 1, 60);
    expect(widths(node.ranges)).toEqual([4, 7, 7, 7, 7, 7, 7, 7, 7]);
  });

  it('shrinks the span in proportion as soon as a range holds more logs than the target', async () => {
    node = await startLogDensityNode((n) => (n <= 40 ? 10 : 500));
    const chain = new ChainSource({ rpcUrl: node.url, initialRange: 16, targetLogsPerRange: 1_000 });
    const logs = await allLogs(chain, filter, 1, 61);
    expect(logs).toHaveLength(40 * 10 + 21 * 500);
    // 16 blocks hold 160 logs: grow twofold; 17-48 hold 4,240: shrink to 32 * 1000 / 4240 = 7 blocks;
    // 49-55 hold 3,500: shrink to 2; two blocks hold the target exactly: stay
    expect(widths(node.ranges)).toEqual([16, 32, 7, 2, 2, 2]);
  });

  it('halves a range the node refuses and delivers every log once', async () => {
    node = await startLogDensityNode(() => 100, { maxLogs: 1_500 });
    const chain = new ChainSource({ rpcUrl: node.url, initialRange: 32, targetLogsPerRange: 5_000 });
    const logs = await allLogs(chain, filter, 1, 40);
    expect(logs.map((l) => `${l.blockNumber}:${l.logIndex}`)).toEqual(
      Array.from({ length: 40 }, (_, b) => Array.from({ length: 100 }, (_, i) => `${b + 1}:${i}`)).flat(),
    );
    expect(node.ranges.slice(0, 3)).toEqual([
      [1, 32],
      [1, 16],
      [1, 8],
    ]);
  });

  it('fetches a narrower filter’s logs in ranges of the span without sizing the span by them', async () => {
    // one log a block from a new vault among 99 from the tracked contract
    const topic = filter.topics[0]!;
    node = await startLogDensityNode(() => 100, {
      logAt: (_, i) => ({
        address: i === 0 ? `0x${'01'.repeat(20)}` : `0x${'02'.repeat(20)}`,
        topics: [topic],
        data: '0x',
      }),
    });
    const chain = new ChainSource({ rpcUrl: node.url, initialRange: 10, targetLogsPerRange: 1_000 });
    await chain.logsInRange(filter, 1, 10); // 1,000 logs: the span stays at 10
    const added = await chain.narrowerLogs({ addresses: [`0x${'01'.repeat(20)}`], topics: [topic] }, 11, 40);
    expect(added.map((l) => Number(l.blockNumber))).toEqual(Array.from({ length: 30 }, (_, i) => 11 + i));
    expect(widths(node.ranges)).toEqual([10, 10, 10, 10]);
    expect(chain.range).toBe(10);
    expect(chain.concurrentRanges(4)).toBe(1);
  });

  it('splits a long address list over several requests and returns their logs once each, in chain order', async () => {
    const topic = filter.topics[0]!;
    const addresses = Array.from(
      { length: 5 },
      (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}` as Hex,
    );
    // block n's i-th log comes from the (n + i) % 6-th address: one in six is not tracked
    const at = (n: number, i: number) => `0x${((n + i) % 6).toString(16).padStart(40, '0')}`;
    node = await startLogDensityNode(() => 12, {
      logAt: (n, i) => ({ address: at(n, i), topics: [topic], data: '0x' }),
      recordFilters: true,
    });
    const chain = new ChainSource({ rpcUrl: node.url, maxAddressesPerRequest: 2 });
    const logs = await chain.getLogs({ addresses, topics: [topic] }, 1, 4);
    expect(node.filters.map((f) => f.addresses)).toEqual([
      addresses.slice(0, 2),
      addresses.slice(2, 4),
      addresses.slice(4),
    ]);
    const tracked = Array.from({ length: 4 }, (_, b) =>
      Array.from({ length: 12 }, (_, i) => ((b + 1 + i) % 6 === 0 ? [] : [`${b + 1}:${i}`])).flat(),
    ).flat();
    expect(logs.map((l) => `${l.blockNumber}:${l.logIndex}`)).toEqual(tracked);
  });

  it('asks for the logs of any address by topic filters beside the tracked addresses, each log once', async () => {
    const topic = filter.topics[0]!;
    const tracked = `0x${'0a'.repeat(20)}` as Hex;
    const recipient = `0x${'00'.repeat(31)}01` as Hex;
    // block n's i-th log: from the tracked address when i is even, to the recipient when i % 3 is 0
    node = await startLogDensityNode(() => 6, {
      logAt: (n, i) => ({
        address: i % 2 === 0 ? tracked : `0x${(n * 10 + i).toString(16).padStart(40, '0')}`,
        topics: [topic, i % 3 === 0 ? recipient : `0x${'00'.repeat(31)}02`],
        data: '0x',
      }),
      recordFilters: true,
    });
    const chain = new ChainSource({ rpcUrl: node.url });
    const logs = await chain.getLogs(
      { addresses: [tracked], topics: [topic], anyAddressTopics: [[[topic], [recipient]]] },
      1,
      2,
    );
    expect(node.filters.map((f) => [f.addresses, f.laterTopics])).toEqual([
      [[tracked], []],
      [null, [[recipient]]],
    ]);
    // i = 0, 2, 3, 4 of each block: tracked, or to the recipient (i = 0 is both, and comes once)
    expect(logs.map((l) => `${l.blockNumber}:${l.logIndex}`)).toEqual([
      '1:0',
      '1:2',
      '1:3',
      '1:4',
      '2:0',
      '2:2',
      '2:3',
      '2:4',
    ]);
  });

  it('allows several ranges at once only with the span at its bound and ranges holding few logs', async () => {
    node = await startLogDensityNode((n) => (n <= 300 ? 1 : 400));
    const chain = new ChainSource({
      rpcUrl: node.url,
      initialRange: 50,
      maxRange: 100,
      targetLogsPerRange: 1_000,
    });
    await chain.logsInRange(filter, 1, 50); // 50 logs, the span grows to 100
    expect(chain.concurrentRanges(4)).toBe(4);
    await chain.logsInRange(filter, 51, 150); // 100 logs: 4 ranges hold 400 of the 1,000
    expect(chain.concurrentRanges(4)).toBe(4);
    expect(chain.concurrentRanges(20)).toBe(1); // 20 would hold 2,000
    await chain.logsInRange(filter, 251, 350); // 50 + 20,000 logs: the span shrinks to 4
    expect(chain.concurrentRanges(4)).toBe(1);
  });

  it('never asks for more blocks than maxRange', async () => {
    node = await startLogDensityNode(() => 0);
    const chain = new ChainSource({ rpcUrl: node.url, initialRange: 16, maxRange: 100 });
    await allLogs(chain, filter, 1, 1_000);
    expect(Math.max(...widths(node.ranges))).toBe(100);
    expect(widths(node.ranges).slice(0, 5)).toEqual([16, 32, 64, 100, 100]);
  });
});

/** What providers answer when a range spans too many blocks (see statedBlockLimit). */
const providerRefusals: [string, string, number][] = [
  ['Infura', 'range 1000000 exceeds limit of 10000', 10_000],
  ['QuickNode', 'eth_getLogs is limited to a 10,000 range', 10_000],
  [
    'Alchemy',
    'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response.',
    2_000,
  ],
  ['a geth fork', 'exceed maximum block range: 5000', 5_000],
  ['morph', 'block range is larger than max block range, block range = 5120, max block range = 5000', 5_000],
  ['cdk-erigon', 'block range too large, max range: 1000', 1_000],
  ['Tenderly', 'range 9009594 is bigger than range limit 2000', 2_000],
  ['Avalanche', 'requested too many blocks from 0 to 16383, maximum is set to 2048', 2_048],
  ['dRPC', 'ranges over 10000 blocks are not supported on freetier', 10_000],
  ['Cronos', 'maximum [from, to] blocks distance: 2000', 2_000],
];

describe('the chain source meeting a node that limits the block span', () => {
  it.each(providerRefusals)('reads the limit %s states', (_provider, message, blocks) => {
    expect(statedBlockLimit(message)).toBe(blocks);
  });

  it.each(providerRefusals)(
    'caps the span where %s refuses a range, and is refused once',
    async (_p, message, blocks) => {
      node = await startLogDensityNode(() => 0, { maxBlocks: { blocks, message } });
      const chain = new ChainSource({ rpcUrl: node.url, initialRange: 16_384, maxRange: 16_384 });
      await allLogs(chain, filter, 1, 16_384 + 3 * blocks);
      expect(widths(node.ranges).filter((w) => w > blocks)).toEqual([16_384]);
    },
  );

  it('waits for a node behind the head that refuses a range past it, without capping the span', async () => {
    node = await startLogDensityNode(() => 1);
    proxy = await startFaultProxy(node.url);
    let refusals = 2;
    proxy.set({
      kind: 'rewrite',
      rewrite: (json) => {
        const answer = [json as { result?: unknown; error?: unknown }].flat()[0]!;
        if (Array.isArray(answer.result) && refusals-- > 0) {
          delete answer.result;
          answer.error = {
            code: -32602,
            message: 'invalid params: block range extends beyond current head block',
          };
        }
        return json;
      },
    });
    const limits: number[] = [];
    const retried: string[] = [];
    const chain = new ChainSource({
      rpcUrl: proxy.url,
      initialRange: 64,
      retryDelayMs: 1,
      onRangeLimit: (limit) => limits.push(limit),
      onRetry: (what) => retried.push(what),
    });
    expect(await chain.logsInRange(filter, 1, 64)).toHaveLength(64);
    expect({ limits, retried, range: chain.range }).toEqual({
      limits: [],
      retried: ['eth_getLogs', 'eth_getLogs'],
      range: 128,
    });
  });

  it('reads no limit where a refusal is about the number of results', () => {
    expect(statedBlockLimit('query returned more than 10000 results')).toBeNull();
  });

  it('asks for no wider range than the limit a refusal states, and is refused once', async () => {
    node = await startLogDensityNode(() => 0, {
      maxBlocks: { blocks: 500, message: 'You can make eth_getLogs requests with up to a 500 block range.' },
    });
    const limits: number[] = [];
    const chain = new ChainSource({ rpcUrl: node.url, onRangeLimit: (blocks) => limits.push(blocks) });
    await allLogs(chain, filter, 1, 20_000);
    const refused = widths(node.ranges).filter((w) => w > 500);
    expect(refused).toEqual([512]);
    expect(limits).toEqual([500]);
    expect(widths(node.ranges).slice(-5, -1)).toEqual([500, 500, 500, 500]); // the last is what remains
    expect(chain.concurrentRanges(4)).toBe(4); // the limit is the span's bound now
  });

  it('caps the span at half the refused range when the refusal names the block span but no number', async () => {
    node = await startLogDensityNode(() => 0, {
      maxBlocks: { blocks: 300, message: 'block range is bigger than maxBlockRange' },
    });
    const chain = new ChainSource({ rpcUrl: node.url });
    await allLogs(chain, filter, 1, 10_000);
    expect(widths(node.ranges).filter((w) => w > 300)).toEqual([512]);
    expect(Math.max(...widths(node.ranges).slice(-10))).toBe(256);
  });

  it('reads the limit where a node gives it in the error data, as Tenderly does', async () => {
    node = await startLogDensityNode(() => 0, {
      maxBlocks: {
        blocks: 2_000,
        message: 'invalid params',
        data: { error_id: 'e1', payload: 'range 4096 is bigger than range limit 2000' },
      },
    });
    const chain = new ChainSource({ rpcUrl: node.url, initialRange: 4_096, retryDelayMs: 1 });
    await allLogs(chain, filter, 1, 20_000);
    expect(widths(node.ranges).filter((w) => w > 2_000)).toEqual([4_096]);
    expect(Math.max(...widths(node.ranges).slice(1))).toBe(2_000);
  });
});

describe('the chain source meeting a node that limits the number of logs in an answer', () => {
  it('reads the number of logs a refusal of an answer’s size states, as providers word it', () => {
    expect(statedResultLimit('query returned more than 10000 results')).toBe(10_000);
    expect(
      statedResultLimit(
        'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response.',
      ),
    ).toBe(10_000);
    expect(statedResultLimit('query exceeds max results 1,000')).toBe(1_000);
    expect(statedResultLimit('block range is too wide')).toBeNull();
    expect(statedResultLimit('response size should not greater than 10000000 bytes')).toBeNull();
  });

  /**
   * 300 blocks of 100 logs from a node refusing answers of more than 1,500 logs (with `message`, or
   * Infura's words): every log, the targets the refusals set, and how many requests were refused.
   */
  async function underLogLimit(message?: string) {
    node = await startLogDensityNode(() => 100, { maxLogs: 1_500, maxLogsMessage: message });
    const limits: number[] = [];
    const chain = new ChainSource({
      rpcUrl: node.url,
      initialRange: 32,
      onLogLimit: (logs) => limits.push(logs),
    });
    const logs = await allLogs(chain, filter, 1, 300);
    return { logs, limits, refused: widths(node.ranges).filter((w) => w * 100 > 1_500).length };
  }

  it('aims below the number of logs a refusal states, and is then refused no more', async () => {
    const { logs, limits, refused } = await underLogLimit();
    expect(logs).toHaveLength(30_000);
    expect(limits).toEqual([1_200]);
    // 32 and 16 blocks refused, 8 blocks (800 logs) taken; then 12 blocks, 1,200 logs, every range
    expect(widths(node!.ranges).slice(0, 5)).toEqual([32, 16, 8, 12, 12]);
    expect(refused).toBe(2);
  });

  it('halves the logs it aims at for each refusal of an answer’s size that states no number', async () => {
    const { logs, limits, refused } = await underLogLimit('Log response size exceeded');
    expect(logs).toHaveLength(30_000);
    expect(limits).toEqual([2_500, 1_250]);
    expect(refused).toBe(2);
  });

  it('grows the span again after a refusal about the number of results', async () => {
    node = await startLogDensityNode((n) => (n <= 64 ? 100 : 0), { maxLogs: 1_500 });
    const chain = new ChainSource({ rpcUrl: node.url, initialRange: 32 });
    await allLogs(chain, filter, 1, 5_000);
    expect(Math.max(...widths(node.ranges).slice(-3))).toBeGreaterThan(1_000);
  });
});

describe('the chain source reading answers up to a size', () => {
  // the node's 100 logs a block are some 40 KB of JSON: a range of 25 blocks is about this much
  const MAX_ANSWER_BYTES = 1_000_000;

  it('asks for an eth_getLogs range whose answer is over the limit in smaller ones, lowering the logs it aims at', async () => {
    node = await startLogDensityNode(() => 100);
    const limits: [number, string][] = [];
    const chain = new ChainSource({
      rpcUrl: node.url,
      initialRange: 64,
      maxAnswerBytes: MAX_ANSWER_BYTES,
      onLogLimit: (logs, reason) => limits.push([logs, reason]),
    });
    const logs = await allLogs(chain, filter, 1, 300);
    expect(new Set(logs.map((log) => `${log.blockNumber}:${log.logIndex}`)).size).toBe(30_000);
    // 64 and 32 blocks refused (2.5 and 1.3 MB); 16 taken, then 12 (1,200 logs) every range
    expect(widths(node.ranges).slice(0, 6)).toEqual([64, 32, 16, 12, 12, 12]);
    expect(limits.map(([target]) => target)).toEqual([2_500, 1_250]);
    expect(limits[0]![1]).toBe(
      "the node's answer exceeds 1000000 bytes, the most the indexer reads of one: response size too large",
    );
  });

  it('sends a batch whose answer is over the limit again in halves, until each answer is under it', async () => {
    node = await startLogDensityNode(() => 100);
    // a block whole with its 100 transactions is some 40 KB: 5 of them fit under 300,000 bytes
    const chain = new ChainSource({ rpcUrl: node.url, maxAnswerBytes: 300_000 });
    const numbers = Array.from({ length: 20 }, (_, i) => i + 1);
    const five = (n: number) => new Set(Array.from({ length: 5 }, (_, i) => transactionHashOf(n, i) as Hex));
    const headers = await chain.headers(numbers, new Map(numbers.map((n) => [n, five(n)])));
    expect(numbers.every((n) => headers.get(n)?.transactions?.size === 5)).toBe(true);
    expect(node.fullBlockBatches.toSorted((a, b) => b - a)).toEqual([20, 10, 10, 5, 5, 5, 5]);
  });

  it('refuses a single answer over the limit, saying so in the retry line', async () => {
    node = await startLogDensityNode(() => 0, { head: 7 });
    const stop = new AbortController();
    const retries: string[] = [];
    const chain = new ChainSource({
      rpcUrl: node.url,
      maxAnswerBytes: 10,
      signal: stop.signal,
      onRetry: (what, error) => {
        retries.push(`${what}: ${describeRpcError(error)}`);
        stop.abort();
      },
    });
    await expect(chain.headNumber()).rejects.toBeInstanceOf(StoppedError);
    expect(retries).toEqual([
      "eth_blockNumber: HTTP request failed: the node's answer exceeds 10 bytes, the most the indexer reads of one: response size too large",
    ]);
  });
});

describe('the chain source reading blocks with their transactions', () => {
  it('reads the few transactions wanted from a block one by one, with their fields as the node reports them', async () => {
    node = await startLogDensityNode(() => 50);
    const chain = new ChainSource({ rpcUrl: node.url });
    const wanted = new Map([[7, new Set<Hex>([transactionHashOf(7, 3) as Hex])]]);
    const headers = await chain.headers([6, 7], wanted);
    expect(node.fullBlockBatches).toEqual([]);
    expect(node.transactionsByHash).toBe(1);
    expect(headers.get(6)?.transactions).toBeUndefined();
    expect([...headers.get(7)!.transactions!]).toEqual([
      [
        transactionHashOf(7, 3),
        {
          from: `0x${'ab'.repeat(20)}`,
          to: null,
          value: 3n,
          gasLimit: 21_000n,
          gasPrice: 9n, // base fee 7 + priority fee 2, under the cap of 100
          nonce: 7n,
          input: '0x',
          index: 3n,
        },
      ],
    ]);
  });

  it('reads whole blocks where many are wanted, 20 at a time with at most four such requests under way, keeping only those', async () => {
    node = await startLogDensityNode(() => 8, { blockDelayMs: 20 });
    const chain = new ChainSource({ rpcUrl: node.url });
    const numbers = Array.from({ length: 130 }, (_, i) => i + 1);
    const five = (n: number) => new Set(Array.from({ length: 5 }, (_, i) => transactionHashOf(n, i) as Hex));
    const headers = await chain.headers(numbers, new Map(numbers.map((n) => [n, five(n)])));
    expect(numbers.every((n) => headers.get(n)?.transactions?.size === 5)).toBe(true);
    expect(node.transactionsByHash).toBe(0);
    expect(node.fullBlockBatches.toSorted((a, b) => b - a)).toEqual([20, 20, 20, 20, 20, 20, 10]);
    expect(node.peakFullBlockBatches).toBe(4);
  });

  it('prices gas as graph-node does: the gas price, or the base fee plus the tip under the fee cap', () => {
    expect(effectiveGasPrice({ gasPrice: '0x64' }, 7n)).toBe(100n);
    expect(effectiveGasPrice({ maxFeePerGas: '0x64', maxPriorityFeePerGas: '0x2' }, 7n)).toBe(9n);
    expect(effectiveGasPrice({ maxFeePerGas: '0x8', maxPriorityFeePerGas: '0x2' }, 7n)).toBe(8n);
    expect(effectiveGasPrice({ maxFeePerGas: '0x64', maxPriorityFeePerGas: '0x2' }, undefined)).toBe(100n);
  });
});

describe('the chain source reading calls from trace_filter', () => {
  const tracked = `0x${'0a'.repeat(20)}`;
  const other = `0x${'0b'.repeat(20)}`;
  /** in block n: one call to `to` in transaction n, then a trace of each kind graph-node leaves out */
  const tracesOf = (n: number) => {
    const call = (to: string, input: string, extra: object = {}) => ({
      type: 'call',
      action: { callType: 'call', from: `0x${'cc'.repeat(20)}`, to, input, value: '0x0', gas: '0x0' },
      result: { output: '0x01', gasUsed: '0x10' },
      traceAddress: [0],
      transactionHash: transactionHashOf(n, 0),
      transactionPosition: 0,
      subtraces: 0,
      ...extra,
    });
    return [
      call(tracked, `0x12345678${n.toString(16).padStart(64, '0')}`),
      call(other, '0x12345678'),
      call(tracked, '0x12345678', { error: 'Reverted', result: null, traceAddress: [1] }),
      call(tracked, '0x', { traceAddress: [2] }), // a plain value transfer: no selector
      call(tracked, '0x12345678', { type: 'create', traceAddress: [3] }),
      call(tracked, '0x12345678', { transactionHash: null, transactionPosition: null }), // a block reward
    ];
  };

  it('keeps the successful calls with a selector, in chain order, asking in halves where the span is refused', async () => {
    node = await startLogDensityNode(() => 1, { traces: { of: tracesOf, maxBlocks: 2 } });
    const chain = new ChainSource({ rpcUrl: node.url });
    const calls = await chain.callsInRange([tracked as Hex], 1, 6);
    expect(calls.map((c) => [c.blockNumber, c.input.slice(-2), c.to, c.transactionIndex, c.gasUsed])).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => [n, `0${n}`, tracked, 0, 16n]),
    );
    expect(node.traceRanges).toEqual([
      [1, 6],
      [1, 3],
      [1, 2],
      [3, 3],
      [4, 6],
      [4, 5],
      [6, 6],
    ]);
  });

  it('names what call handlers need when the node does not serve trace_filter, and keeps asking', async () => {
    node = await startLogDensityNode(() => 0);
    const abort = new AbortController();
    const retried: { what: string; error: string }[] = [];
    const chain = new ChainSource({
      rpcUrl: node.url,
      retryDelayMs: 1,
      signal: abort.signal,
      onRetry: (what, error) => {
        retried.push({ what, error: (error as Error).message });
        if (retried.length === 2) abort.abort();
      },
    });
    await expect(chain.callsInRange([tracked as Hex], 1, 4)).rejects.toThrow(StoppedError);
    expect(retried[0]?.what).toBe(
      'trace_filter (call handlers need a node that serves it: erigon, reth, Nethermind, anvil)',
    );
    expect(retried[0]?.error).toContain('method not found');
  });
});

describe('the chain source meeting a node that answers eth_getLogs wrongly', () => {
  /**
   * A chain source reading 3 logs a block through a proxy that changes the first eth_getLogs answer
   * with `change` (the answer's logs, the request's params), and the messages of its retries.
   */
  async function behindProxy(change: (logs: { blockNumber: string }[] | null, params: unknown) => unknown) {
    node = await startLogDensityNode(() => 3);
    proxy = await startFaultProxy(node.url);
    let changed = false;
    proxy.set({
      kind: 'rewrite',
      rewrite: (json, request) => {
        const answers = [json as { result: { blockNumber: string }[] | null }].flat();
        const calls = [JSON.parse(request) as { method: string; params: unknown[] }].flat();
        if (!changed && calls[0]!.method === 'eth_getLogs') {
          changed = true;
          answers[0]!.result = change(answers[0]!.result, calls[0]!.params[0]) as never;
        }
        return json;
      },
    });
    const retried: string[] = [];
    const chain = new ChainSource({
      rpcUrl: proxy.url,
      retryDelayMs: 1,
      onRetry: (_what, error) => retried.push((error as Error).message),
    });
    return { chain, retried };
  }

  const positions = (logs: Log[]) => logs.map((l) => `${l.blockNumber}:${l.logIndex}`);

  it('runs a log the node repeats in one answer once', async () => {
    const { chain } = await behindProxy((logs) => [logs![0], ...logs!]);
    const logs = await chain.logsInRange(filter, 5, 6);
    expect(positions(logs as Log[])).toEqual(['5:0', '5:1', '5:2', '6:0', '6:1', '6:2']);
  });

  it('refuses an answer holding a log of a block before or after the range, and asks again', async () => {
    const { chain, retried } = await behindProxy((logs) => [
      { ...logs![0], blockNumber: '0x4' },
      ...logs!,
      { ...logs![0], blockNumber: '0x7' },
    ]);
    const logs = await chain.logsInRange(filter, 5, 6);
    expect(positions(logs as Log[])).toEqual(['5:0', '5:1', '5:2', '6:0', '6:1', '6:2']);
    expect(retried).toEqual([
      expect.stringMatching(/^the node answered eth_getLogs of blocks 5 to 6 with a log of block 4 /),
    ]);
  });

  it('says the node answered null where it gave no list of logs, and asks again', async () => {
    const { chain, retried } = await behindProxy(() => null);
    expect(await chain.logsInRange(filter, 5, 6)).toHaveLength(6);
    expect(retried).toEqual(['the node answered eth_getLogs with null, not a list of logs']);
  });
});

describe('the chain source meeting a provider’s rate limit', () => {
  const INFURA = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    error: { code: -32005, message: 'project ID request rate exceeded', data: { backoff_seconds: 1 } },
  });
  const ALCHEMY = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    error: {
      code: 429,
      message:
        'Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message.',
    },
  });
  const NGINX =
    '<html>\r\n<head><title>429 Too Many Requests</title></head>\r\n<body>\r\n<center><h1>429 Too Many Requests</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
  const CLOUDFLARE_524 = `<!DOCTYPE html><html lang="en-US"><head><title>rpc.example.org | 524: A timeout occurred</title></head><body><p>This typically happens when a request to the origin server exceeds its limit. Connection timeout exceeded.</p>${'x'.repeat(3_000)}</body></html>`;
  const html = { 'content-type': 'text/html' };

  it.each<[string, ScriptedAnswer]>([
    [
      'a bare 429 with Retry-After',
      {
        status: 429,
        body: 'Too Many Requests',
        headers: { 'content-type': 'text/plain', 'retry-after': '1' },
      },
    ],
    ['Infura’s -32005 rate limit', { status: 429, body: INFURA }],
    ['Alchemy’s compute units', { status: 429, body: ALCHEMY }],
    ['nginx’s HTML 429', { status: 429, body: NGINX, headers: html }],
    ['Cloudflare’s HTML 524 that says "exceeded"', { status: 524, body: CLOUDFLARE_524, headers: html }],
  ])('waits out %s without shrinking the span or the logs aimed at', async (_, refusal) => {
    node = await startLogDensityNode(() => 1);
    let refusals = 2;
    const scripted = await startScriptedNode(node.url, ({ calls }) =>
      calls.some((c) => c.method === 'eth_getLogs') && refusals-- > 0 ? refusal : null,
    );
    const limits: number[] = [];
    const retries: { line: string; delay: number }[] = [];
    const chain = new ChainSource({
      rpcUrl: scripted.url,
      initialRange: 64,
      retryDelayMs: 1,
      onRangeLimit: (limit) => limits.push(limit),
      onLogLimit: (logs) => limits.push(logs),
      onRetry: (_what, error, delay) => retries.push({ line: describeRpcError(error), delay }),
    });
    try {
      expect(await chain.logsInRange(filter, 1, 64)).toHaveLength(64);
    } finally {
      await scripted.close();
    }
    expect({ limits, range: chain.range, retries: retries.length }).toEqual({
      limits: [],
      range: 128,
      retries: 2,
    });
    // Retry-After is waited; the log line quotes no whole page
    if (refusal.headers?.['retry-after']) expect(retries.map((r) => r.delay)).toEqual([1_000, 1_000]);
    for (const { line } of retries) expect(line.length).toBeLessThan(400);
  });

  it('reads Retry-After as seconds or a date, at most a minute', () => {
    const limited = (retryAfter: string) =>
      rateLimit(
        new HttpRequestError({
          url: 'http://127.0.0.1',
          status: 429,
          headers: new Headers({ 'retry-after': retryAfter }),
        }),
      );
    expect(limited('2')).toEqual({ retryAfterMs: 2_000 });
    expect(limited('3600')).toEqual({ retryAfterMs: 60_000 });
    expect(limited(new Date(Date.now() + 600_000).toUTCString())).toEqual({ retryAfterMs: 60_000 });
    expect(limited('soon')).toEqual({ retryAfterMs: null });
    expect(rateLimit(new HttpRequestError({ url: 'http://127.0.0.1', status: 503 }))).toBeNull();
  });
});

describe('the chain source meeting a node that refuses with a non-2xx status and a batch answer', () => {
  it('reads the node’s words from the answer’s list, not the status text alone', async () => {
    node = await startLogDensityNode(() => 1);
    // a proxy answering HTTP 413 with the node's own batch answer, as some providers' gateways do
    const scripted = await startScriptedNode(node.url, ({ calls }) => {
      const call = calls.find((c) => c.method === 'eth_getLogs');
      if (!call) return null;
      const { fromBlock, toBlock } = call.params[0] as { fromBlock: string; toBlock: string };
      if (Number(toBlock) - Number(fromBlock) + 1 <= 10) return null;
      const error = { code: -32602, message: 'query exceeds max block range 10' };
      return { status: 413, body: JSON.stringify(calls.map((c) => ({ jsonrpc: '2.0', id: c.id, error }))) };
    });
    const stop = new AbortController();
    const limits: number[] = [];
    const chain = new ChainSource({
      rpcUrl: scripted.url,
      initialRange: 64,
      signal: stop.signal,
      onRangeLimit: (limit) => limits.push(limit),
      // a refusal read as a failure would be retried forever
      onRetry: () => stop.abort(),
    });
    try {
      expect(await chain.logsInRange(filter, 1, 64)).toBe('too-large');
    } finally {
      await scripted.close();
    }
    expect({ limits, range: chain.range }).toEqual({ limits: [10], range: 10 });
  });
});

describe('the chain source meeting a node that limits JSON-RPC batches', () => {
  const refused = (message: string) => ({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
  // the node's limit, the refusal, and the first limit the chain source tries (half of 45 calls
  // where the refusal states none)
  it.each<[string, number, (ids: number[]) => ScriptedAnswer, number]>([
    [
      'geth’s "batch too large" for the first call alone',
      10,
      (ids) => ({ status: 200, body: JSON.stringify([{ ...refused('batch too large'), id: ids[0] }]) }),
      22,
    ],
    [
      'an object stating the limit',
      10,
      () => ({ status: 200, body: JSON.stringify(refused('batch size exceeds the limit of 10')) }),
      10,
    ],
    [
      'HTTP 413 for the batch',
      10,
      () => ({ status: 413, body: JSON.stringify(refused('batch size exceeds 10')) }),
      10,
    ],
  ])('sends smaller batches after %s, and says so once', async (_, max, refusal, firstLimit) => {
    node = await startLogDensityNode(() => 1, { head: 100 });
    const scripted = await startScriptedNode(node.url, ({ calls, batch }) =>
      batch && calls.length > max ? refusal(calls.map((c) => c.id)) : null,
    );
    const limits: { limit: number; words: string }[] = [];
    const chain = new ChainSource({
      rpcUrl: scripted.url,
      onBatchLimit: (limit, words) => limits.push({ limit, words }),
    });
    try {
      const numbers = Array.from({ length: 45 }, (_, i) => i + 1);
      const headers = await chain.headers(numbers);
      expect(numbers.filter((n) => headers.get(n)?.number !== n)).toEqual([]);
      // the next batches are split before they are sent
      const before = scripted.requests.length;
      await chain.headers(numbers.map((n) => n + 50));
      const sent = scripted.requests.slice(before).map((r) => r.calls.length);
      expect({ calls: sent.reduce((a, b) => a + b), largest: Math.max(...sent) <= max }).toEqual({
        calls: 45,
        largest: true,
      });
    } finally {
      await scripted.close();
    }
    expect(limits).toHaveLength(1);
    expect(limits[0]!.limit).toBe(firstLimit);
    expect(limits[0]!.words).toMatch(/batch/);
  });

  it('sends calls one by one to a node that refuses batches, from the chain id at start-up on', async () => {
    node = await startLogDensityNode(() => 1, { head: 100 });
    const scripted = await startScriptedNode(node.url, ({ batch }) =>
      batch ? { status: 200, body: JSON.stringify(refused('Batch requests are not supported')) } : null,
    );
    const limits: number[] = [];
    const chain = new ChainSource({ rpcUrl: scripted.url, onBatchLimit: (limit) => limits.push(limit) });
    try {
      expect(await chain.chainId()).toBe(31337);
      expect([...(await chain.headers([1, 2, 3])).keys()]).toEqual([1, 2, 3]);
    } finally {
      await scripted.close();
    }
    expect(limits).toEqual([0]);
  });
});

describe('an indexer meeting an eth_getLogs refusal it cannot read', () => {
  it('retries it and says INDEXER_MAX_BLOCK_RANGE can set the limit', async () => {
    node = await startLogDensityNode(() => 0, { head: 20 });
    let refusals = 2;
    const scripted = await startScriptedNode(node.url, ({ calls }) => {
      if (!calls.some((c) => c.method === 'eth_getLogs') || refusals-- <= 0) return null;
      const error = { code: -32000, message: 'your plan allows a narrower window' };
      return { status: 200, body: JSON.stringify(calls.map((c) => ({ jsonrpc: '2.0', id: c.id, error }))) };
    });
    const indexers = devnetIndexers(() => SYNTHETIC_CONTRACTS, 'indexer-unread-refusal-');
    const lines: string[] = [];
    try {
      const indexer = await indexers.start(scripted.url, { log: (line) => lines.push(line) });
      await indexer.waitForBlock(20);
    } finally {
      await indexers.stopAll();
      await scripted.close();
    }
    const retries = lines.filter((l) => l.startsWith('rpc eth_getLogs failed'));
    expect(retries).toHaveLength(2);
    for (const line of retries)
      expect(line).toMatch(
        /your plan allows a narrower window.*; retrying in \d+ ms; if the node limits the blocks an eth_getLogs range spans, INDEXER_MAX_BLOCK_RANGE can set that limit$/,
      );
  });
});
