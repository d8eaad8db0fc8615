// Call handlers on a real chain: the follower reads calls with trace_filter, and the probe
// subgraph's ProbeCalls data source (at the ProbeEmitter) records each call to record() its handler
// got, and the blocks its `call` block handler ran at. ProbeCaller makes calls from inside
// transactions: two in one, one that fails in a transaction that succeeds, one that succeeds in a
// transaction that reverts. A ProbeTemplate instance, which handles record() too, is created in
// the block of a call to it.
import { encodeFunctionData, parseAbi, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryIndexer } from './graphql-client.ts';
import { probeSender, startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

const abi = parseAbi([
  'function record(uint256 amount, string note) returns (uint256 total)',
  'function probe(uint8 kind, string input) payable',
  'function recordTwice(address emitter, uint256 first, uint256 second)',
  'function recordOrSkip(address emitter, uint256 amount)',
  'function recordThenRevert(address emitter, uint256 amount)',
  'function recordThenProbe(address emitter, uint256 amount)',
]);

interface CallSeen {
  sequence: number;
  amount: string;
  note: string;
  total: string;
  from: string;
  to: string;
  block: string;
  transactionHash: string;
  transactionFrom: string;
}

let chain: ProbeChain;
let running: Awaited<ReturnType<typeof startProbeIndexer>>;
let caller: Hex;
let second: Hex;
const blocks: Record<string, { number: number; txHashes: Hex[] }> = {};
let calls: CallSeen[];
let callBlocks: number[];
let probeSequence: number;

beforeAll(async () => {
  chain = await startProbeChain();
  caller = await chain.deployCaller();
  second = await chain.deployEmitter();
  const to = (address: Hex, functionName: (typeof abi)[number]['name'], args: readonly unknown[]) => ({
    to: address,
    data: encodeFunctionData({ abi, functionName, args } as never),
  });
  blocks.twice = await chain.mine([to(caller, 'recordTwice', [chain.emitter, 1n, 2n])]);
  blocks.failedCall = await chain.mine([to(caller, 'recordOrSkip', [chain.emitter, 0n])]);
  blocks.revertedTransaction = await chain.mine([to(caller, 'recordThenRevert', [chain.emitter, 5n])]);
  blocks.direct = await chain.mine([to(chain.emitter, 'record', [4n, 'direct'])]);
  blocks.thenProbe = await chain.mine([to(caller, 'recordThenProbe', [chain.emitter, 3n])]);
  blocks.beforeTemplate = await chain.mine([to(second, 'record', [8n, 'before the template'])]);
  blocks.templateCreated = await chain.mine([
    to(chain.emitter, 'probe', [34, second]),
    to(second, 'record', [6n, 'template']),
  ]);
  blocks.afterTemplate = await chain.mine([to(second, 'record', [7n, 'later'])]);
  running = await startProbeIndexer(chain);
  await running.indexer.waitForHead();
  const answer = await queryIndexer<{
    callSeens: CallSeen[];
    blockSeens: { number: string }[];
    probeResults: { sequence: number }[];
  }>(
    running.indexer.queryUrl,
    `{
      callSeens(first: 100, orderBy: sequence) { sequence amount note total from to block transactionHash transactionFrom }
      blockSeens(first: 1000, orderBy: sequence, where: { handler: "call" }) { number }
      probeResults(where: { kind: 99 }) { sequence }
    }`,
  );
  calls = answer.callSeens;
  callBlocks = answer.blockSeens.map((b) => Number(b.number));
  probeSequence = answer.probeResults[0]!.sequence;
}, 240_000);

afterAll(async () => {
  await running?.stop();
  await chain?.stop();
});

describe('indexer: call handlers on a real chain', () => {
  it('runs the handler for each successful call, inner calls included, with its arguments and result', () => {
    expect(calls.map((c) => [c.note, c.amount, c.total, Number(c.block)])).toEqual([
      ['first', '1', '1', blocks.twice!.number],
      ['second', '2', '3', blocks.twice!.number],
      ['direct', '4', '7', blocks.direct!.number],
      ['before probe', '3', '10', blocks.thenProbe!.number],
      ['template', '6', '14', blocks.templateCreated!.number],
      ['later', '7', '21', blocks.afterTemplate!.number],
    ]);
  });

  it('gives the call its own sender and target, and the transaction the call was made in', () => {
    const [first, , direct] = calls;
    expect(first).toMatchObject({
      from: caller,
      to: chain.emitter,
      transactionHash: blocks.twice!.txHashes[0],
      transactionFrom: probeSender,
    });
    expect(direct).toMatchObject({ from: probeSender, to: chain.emitter, transactionFrom: probeSender });
  });

  it('leaves out a call that failed and a call in a transaction that reverted', () => {
    const blocksWithCalls = calls.map((c) => Number(c.block));
    expect(blocksWithCalls).not.toContain(blocks.failedCall!.number);
    expect(blocksWithCalls).not.toContain(blocks.revertedTransaction!.number);
  });

  it("runs a transaction's log handlers before its call handlers, whatever the order inside it", () => {
    const recorded = calls.find((c) => c.note === 'before probe')!;
    expect(probeSequence).toBeLessThan(recorded.sequence);
  });

  it("runs a template instance's call handler from the block that creates it on", () => {
    const template = calls.filter((c) => c.to === second);
    expect(template.map((c) => c.note)).toEqual(['template', 'later']);
  });

  it('runs the `call` block handler at each block with a call to its address that did not fail, of any function, in reverted transactions too', () => {
    expect(callBlocks).toEqual([
      blocks.twice!.number,
      blocks.revertedTransaction!.number,
      blocks.direct!.number,
      blocks.thenProbe!.number,
      blocks.templateCreated!.number,
    ]);
  });
});
