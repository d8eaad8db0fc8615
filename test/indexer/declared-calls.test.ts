// Declared eth calls on a real chain. The probe subgraph's DeclaredCalls data source runs the same
// handler as ProbeEmitter (kind 29 calls probes(), pair(), echo() and fail('no') on the emitter)
// with probes(), pair(), fail(event.params.input) and lengthOf(event.params.input) declared. Indexed through a loopback proxy (in a
// process of its own: a chain read blocks the indexer's thread) that records every JSON-RPC
// request, the subgraph must store what it stores without declarations, while the declared reads
// reach the node once each, in batches made with the range, and never again from the handlers.
import { encodeFunctionData, parseAbi, toFunctionSelector, type Hex } from 'viem';
import { createChainReader } from '../../indexer/follower/chain-reader.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RpcRequest } from '../reliability/servers/fault-proxy.ts';
import { startFaultProxyProcess, type DataFault } from '../reliability/servers/fault-proxy-process.ts';
import { queryIndexer } from './graphql-client.ts';
import { probeHandledBy, startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

let chain: ProbeChain;
/** blocks with Probe events, by what they hold */
const blocks: Record<'first' | 'second' | 'pair' | 'plain', number> = {
  first: 0,
  second: 0,
  pair: 0,
  plain: 0,
};

const selector = {
  probes: toFunctionSelector('probes()'),
  pair: toFunctionSelector('pair()'),
  fail: toFunctionSelector('fail(string)'),
  lengthOf: toFunctionSelector('lengthOf(string)'),
};

interface IndexRun {
  /** kind-29 ProbeResults: output by input */
  outputs: Map<string, string>;
  /** the HTTP requests that carried eth_calls, each as its calls' (block hash, data) */
  ethCallRequests: { blockHash: Hex; data: Hex }[][];
  lines: string[];
  failed: number;
}

/** Indexes the probe chain through a recording proxy, handleProbe running from `dataSource`. */
async function indexThroughProxy(
  dataSource: 'ProbeEmitter' | 'DeclaredCalls',
  fault?: DataFault,
): Promise<IndexRun> {
  const proxy = await startFaultProxyProcess(chain.anvil.rpcUrl);
  if (fault) await proxy.set(fault);
  const lines: string[] = [];
  const running = await startProbeIndexer(chain, proxy.url, {
    log: (line) => lines.push(line),
    contracts: probeHandledBy(chain, dataSource),
  });
  try {
    await running.indexer.waitForHead();
    const { probeResults } = await queryIndexer<{ probeResults: { input: string; output: string }[] }>(
      running.indexer.queryUrl,
      '{ probeResults(where: { kind: 29 }) { input output } }',
    );
    const calls = (request: RpcRequest) =>
      request.flatMap((c) => {
        if (c.method !== 'eth_call') return [];
        const [{ data }, { blockHash }] = c.params as [{ data: Hex }, { blockHash: Hex }];
        return [{ blockHash, data }];
      });
    return {
      outputs: new Map(probeResults.map((r) => [r.input, r.output])),
      ethCallRequests: (await proxy.rpcRequests()).map(calls).filter((c) => c.length > 0),
      lines,
      failed: await proxy.failed(),
    };
  } finally {
    await running.stop();
    await proxy.close();
  }
}

async function blockHashOf(on: ProbeChain, number: number): Promise<Hex> {
  return (await on.rpc.request<{ hash: Hex }>('eth_getBlockByNumber', [`0x${number.toString(16)}`, false]))
    .hash;
}

const blockHash = (number: number) => blockHashOf(chain, number);

beforeAll(async () => {
  chain = await startProbeChain();
  blocks.first = await chain.probe(29, '-3|first');
  blocks.second = await chain.probe(29, '7|second');
  blocks.pair = (
    await chain.probesInOneBlock([
      { kind: 29, input: '1|a' },
      { kind: 29, input: '2|b' },
    ])
  ).number;
  blocks.plain = await chain.probe(0, '1|1');
}, 180_000);

afterAll(async () => {
  await chain?.stop();
});

describe('declared eth calls on a real chain', () => {
  let plain: IndexRun;
  let declared: IndexRun;

  beforeAll(async () => {
    plain = await indexThroughProxy('ProbeEmitter');
    declared = await indexThroughProxy('DeclaredCalls');
  }, 180_000);

  it('leave what the handlers store unchanged', () => {
    expect(plain.outputs.size).toBe(4);
    expect(plain.outputs.get('-3|first')).toMatch(/^probes:1;.*;fail:reverted;pair:10,pair$/);
    expect(declared.outputs).toEqual(plain.outputs);
  });

  it('are made with the range, in batches, and never again by the handlers', async () => {
    const reads = (run: IndexRun) =>
      run.ethCallRequests.flatMap((calls) =>
        calls
          .filter((c) => c.data === selector.probes || c.data === selector.pair)
          .map((c) => ({ read: `${c.blockHash} ${c.data}`, batched: calls.length > 1 })),
      );
    // without declarations, handlers ask for probes() and pair() one request at a time (once per
    // block: the reader keeps answers)
    expect(reads(plain).filter((r) => !r.batched)).toHaveLength(6);
    // with them, each block's reads are made once, in batches, before any handler asks
    const hashes = await Promise.all([blocks.first, blocks.second, blocks.pair, blocks.plain].map(blockHash));
    const expected = hashes.flatMap((hash) => [`${hash} ${selector.probes}`, `${hash} ${selector.pair}`]);
    expect(
      reads(declared)
        .map((r) => r.read)
        .sort(),
    ).toEqual(expected.sort());
    expect(reads(declared).every((r) => r.batched)).toBe(true);
    // the range's blocks in one request: made while the range was fetched, not block by block
    expect(declared.ethCallRequests.some((calls) => new Set(calls.map((c) => c.blockHash)).size > 1)).toBe(
      true,
    );
  });

  it('make each read once, however many events of a block declare it', async () => {
    const made = declared.ethCallRequests.flat().map((c) => `${c.blockHash} ${c.data}`);
    expect(new Set(made).size).toBe(made.length);
    const pairHash = await blockHash(blocks.pair);
    const inPairBlock = declared.ethCallRequests.flat().filter((c) => c.blockHash === pairHash);
    expect(inPairBlock.filter((c) => c.data === selector.probes)).toHaveLength(1);
    expect(inPairBlock.filter((c) => c.data.startsWith(selector.lengthOf))).toHaveLength(2);
  });

  it('log the declared calls that reverted, by label, for each block', () => {
    const warnings = declared.lines.filter((l) => l.includes('Declared calls failed'));
    expect(warnings).toEqual([
      `mapping warning: Declared calls failed at block ${blocks.first} (data source DeclaredCalls): fail (1 time)`,
      `mapping warning: Declared calls failed at block ${blocks.second} (data source DeclaredCalls): fail (1 time)`,
      `mapping warning: Declared calls failed at block ${blocks.pair} (data source DeclaredCalls): fail (2 times)`,
      `mapping warning: Declared calls failed at block ${blocks.plain} (data source DeclaredCalls): fail (1 time)`,
    ]);
  });

  it('are made by the block processor where the node failed them ahead, and change no result', async () => {
    const retried = await indexThroughProxy('DeclaredCalls', {
      kind: 'fail-method',
      method: 'eth_call',
      times: 1,
    });
    expect(retried.failed).toBe(1);
    expect(retried.outputs).toEqual(plain.outputs);
    expect(retried.lines.filter((l) => l.includes('Declared calls failed'))).toEqual(
      declared.lines.filter((l) => l.includes('Declared calls failed')),
    );
  }, 120_000);
});

describe('a batch of declared calls while this thread waits for it', () => {
  it('is answered however much anvil logs meanwhile (its log must not need this thread to drain it)', async () => {
    const reader = createChainReader({ rpcUrl: chain.anvil.rpcUrl, timeoutMs: 5_000 });
    const abi = parseAbi(['function fail(string reason) pure returns (uint256)']);
    try {
      for (const number of [blocks.first, blocks.second, blocks.pair]) {
        // every call reverts, and anvil logs each with its reason
        const calls = Array.from({ length: 200 }, (_, i) => ({
          to: chain.emitter,
          data: encodeFunctionData({ abi, functionName: 'fail', args: [`reason ${i} `.repeat(40)] }),
        }));
        expect(reader.prefetchCalls(calls, await blockHash(number))).toEqual(calls.map(() => null));
      }
    } finally {
      await reader.close();
    }
  }, 60_000);
});

describe('a batch of declared calls to a node that limits batches', () => {
  const abi = parseAbi(['function lengthOf(string input) pure returns (uint256)']);
  const calls = () =>
    Array.from({ length: 45 }, (_, i) => ({
      to: chain.emitter,
      data: encodeFunctionData({ abi, functionName: 'lengthOf', args: ['x'.repeat(i)] }),
    }));

  it.each([
    ['geth’s "batch too large" with HTTP 200', 10, 200, 'batch too large', 22],
    ['an HTTP 413 stating the limit', 10, 413, 'batch size exceeds the limit of 10', 10],
    ['"Batch requests are not supported"', 1, 200, 'Batch requests are not supported', 0],
  ])(
    'is sent again in batches it takes after %s, and the limit is said once',
    async (_, max, status, message, firstLimit) => {
      const direct = createChainReader({ rpcUrl: chain.anvil.rpcUrl, timeoutMs: 5_000 });
      const proxy = await startFaultProxyProcess(chain.anvil.rpcUrl);
      await proxy.set({ kind: 'refuse-batches', max, status, message });
      const limits: { limit: number; words: string }[] = [];
      const limited = createChainReader({
        rpcUrl: proxy.url,
        timeoutMs: 5_000,
        onBatchLimit: (limit, words) => limits.push({ limit, words }),
      });
      try {
        const hash = await blockHash(blocks.first);
        const expected = direct.prefetchCalls(calls(), hash);
        expect(expected[44]).toBe(`0x${(44).toString(16).padStart(64, '0')}`);
        expect(limited.prefetchCalls(calls(), hash)).toEqual(expected);
        // a later block's calls are split before they are sent: the node refuses none of them
        const refusedBefore = await proxy.failed();
        const later = await blockHash(blocks.second);
        expect(limited.prefetchCalls(calls(), later)).toEqual(direct.prefetchCalls(calls(), later));
        expect(await proxy.failed()).toBe(refusedBefore);
        expect(limits).toEqual([{ limit: firstLimit, words: message }]);
      } finally {
        await Promise.all([direct.close(), limited.close(), proxy.close()]);
      }
    },
    60_000,
  );
});

describe('the declared calls of a dense range', () => {
  let dense: ProbeChain;

  beforeAll(async () => {
    dense = await startProbeChain();
    // 300 events, each declaring fail(input) and lengthOf(input): 600 calls in each of two blocks
    for (let b = 0; b < 2; b++) {
      await dense.probesInOneBlock(
        Array.from({ length: 300 }, (_, e) => ({ kind: 37, input: `block ${b} event ${e}` })),
      );
    }
  }, 180_000);

  afterAll(async () => {
    await dense?.stop();
  });

  it('go to the node a few batches at a time, not all at once', async () => {
    const proxy = await startFaultProxyProcess(dense.anvil.rpcUrl);
    const running = await startProbeIndexer(dense, proxy.url, {
      contracts: probeHandledBy(dense, 'DeclaredCalls'),
    });
    try {
      await running.indexer.waitForHead();
      const calls = (await proxy.rpcRequests()).flat().filter((c) => c.method === 'eth_call');
      expect(calls.length).toBeGreaterThanOrEqual(1_200);
      expect(await proxy.peakInFlight('eth_call')).toBeLessThanOrEqual(800);
    } finally {
      await running.stop();
      await proxy.close();
    }
  }, 120_000);
});

describe('the declared calls of a template instance created in a range', () => {
  let factory: ProbeChain;
  let second: Hex;
  const later: number[] = [];

  beforeAll(async () => {
    factory = await startProbeChain();
    second = await factory.deployEmitter();
    // a DeclaringTemplate instance at the second emitter (its handler declares lengthOf(input)),
    // then two blocks of its probes: all in the first range
    await factory.probe(38, second);
    for (const inputs of [['x1', 'x2'], ['y1']]) {
      const block = await factory.probesInOneBlock(
        inputs.map((input) => ({ emitter: second, kind: 37, input })),
      );
      later.push(block.number);
    }
  }, 180_000);

  afterAll(async () => {
    await factory?.stop();
  });

  it('are made for the blocks after it with the logs the range is widened by, in one go', async () => {
    const proxy = await startFaultProxyProcess(factory.anvil.rpcUrl);
    const running = await startProbeIndexer(factory, proxy.url);
    try {
      await running.indexer.waitForHead();
      const { probeResults } = await queryIndexer<{ probeResults: { input: string; output: string }[] }>(
        running.indexer.queryUrl,
        '{ probeResults(where: { kind: 37 }, orderBy: input) { input output } }',
      );
      expect(probeResults.map((r) => r.output)).toEqual(['length:2', 'length:2', 'length:2']);
      const lengthReads = (await proxy.rpcRequests())
        .map((request) => request.filter((c) => c.method === 'eth_call'))
        .map((calls) =>
          calls.filter((c) => (c.params[0] as { data: Hex }).data.startsWith(selector.lengthOf)),
        )
        .filter((calls) => calls.length > 0);
      // one request for both blocks' reads, made before either block ran; none by the handlers
      expect(lengthReads).toHaveLength(1);
      const hashes = await Promise.all(later.map((n) => blockHashOf(factory, n)));
      expect(new Set(lengthReads[0]!.map((c) => (c.params[1] as { blockHash: Hex }).blockHash))).toEqual(
        new Set(hashes),
      );
    } finally {
      await running.stop();
      await proxy.close();
    }
  }, 120_000);
});
