// Call handlers and `call` block handlers through the probe wasm, with synthetic calls as the
// follower hands them over from traces: the ethereum.Call a handler receives, where calls run among
// a block's logs and block handlers (graph-node: by transaction, a transaction's logs before its
// calls; `call` block handlers after them), which calls run (successful transactions only, inputs
// that decode, a call equal to the one before it once) and the manifest rules for call handlers.
import { encodeAbiParameters, encodeFunctionData, hexToBytes, parseAbi, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import type { ContractCall } from '../../../indexer/runtime/ethereum-call.ts';
import { HandlerError } from '../../../indexer/runtime/handler-error.ts';
import type { Entity } from '../../../indexer/store/entity.ts';
import {
  loadEditedProbe,
  makeLog,
  probeAbi,
  probeAddress,
  probeCallsAddress,
  txHash,
  useProbeHarness,
} from './runtime-harness.ts';

const caller: Hex = '0x00000000000000000000000000000000000000c0';
const recordAbi = parseAbi(['function record(uint256 amount, string note) returns (uint256 total)']);

/** A call to ProbeCalls' record(amount, note) that returned `total`, in transaction `tx` of the block. */
function recordCall(
  amount: bigint,
  note: string,
  total: bigint,
  where: { tx: number; index: number; trace?: number[]; succeeded?: boolean },
): ContractCall {
  return {
    from: caller,
    to: probeCallsAddress,
    value: 0n,
    gasUsed: 30_000n + amount,
    input: encodeFunctionData({ abi: recordAbi, functionName: 'record', args: [amount, note] }),
    output: encodeAbiParameters([{ type: 'uint256' }], [total]),
    transactionHash: txHash(where.tx),
    transactionIndex: where.index,
    traceAddress: where.trace ?? [0],
    transactionSucceeded: where.succeeded ?? true,
  };
}

/** The value of an entity's field (undefined when unset or null). */
const valueOf = (entity: Entity | undefined, field: string): unknown => {
  const value = entity?.get(field);
  return value && 'value' in value ? value.value : undefined;
};

describe('call handlers', () => {
  const harness = useProbeHarness();

  /** The CallSeen entities of block `block`, in the order their handlers ran (ids are sequence numbers). */
  function seenAt(block: number): Entity[] {
    const { store } = harness();
    const calls = valueOf(store.getCurrent('Sequence', 'calls') ?? undefined, 'value') as number;
    const seen: Entity[] = [];
    for (let sequence = 1; sequence <= calls; sequence++) {
      const entity = store.getCurrent('CallSeen', String(sequence));
      if (entity && valueOf(entity, 'block') === BigInt(block)) seen.push(entity);
    }
    return seen;
  }

  const sequenceOf = (type: string, id: string) => {
    const value = harness().store.getCurrent(type, id)?.get('sequence');
    return value?.kind === 'Int' ? value.value : null;
  };

  it("hands the handler the call's addresses, decoded arguments and results, block and transaction", () => {
    const from: Hex = '0x00000000000000000000000000000000000000f1';
    harness().runBlock(1, [], {
      calls: [recordCall(7n, 'seven', 107n, { tx: 100, index: 3 })],
      transactions: new Map([
        [
          txHash(100),
          { from, to: caller, value: 0n, gasLimit: 90_000n, gasPrice: 1n, nonce: 4n, input: '0x', index: 3n },
        ],
      ]),
    });
    const [seen] = seenAt(1);
    expect(seen?.get('amount')).toEqual({ kind: 'BigInt', value: 7n });
    expect(seen?.get('note')).toEqual({ kind: 'String', value: 'seven' });
    expect(seen?.get('total')).toEqual({ kind: 'BigInt', value: 107n });
    expect(seen?.get('from')).toEqual({ kind: 'Bytes', value: hexToBytes(caller) });
    expect(seen?.get('to')).toEqual({ kind: 'Bytes', value: hexToBytes(probeCallsAddress) });
    expect(seen?.get('transactionHash')).toEqual({ kind: 'Bytes', value: hexToBytes(txHash(100)) });
    expect(seen?.get('transactionIndex')).toEqual({ kind: 'BigInt', value: 3n });
    expect(seen?.get('transactionFrom')).toEqual({ kind: 'Bytes', value: hexToBytes(from) });
  });

  it("runs a transaction's logs before its calls, and calls before the logs of later transactions", () => {
    const probe = (logIndex: number, index: number) => ({
      ...makeLog(
        probeAbi,
        'Probe',
        { kind: 5, input: '1' },
        { address: probeAddress, block: 2, logIndex, tx: 200 + index },
      ),
      transactionIndex: index,
    });
    harness().runBlock(2, [probe(0, 1), probe(1, 2)], {
      calls: [
        recordCall(1n, 'tx0', 1n, { tx: 200, index: 0 }),
        recordCall(2n, 'tx1', 3n, { tx: 201, index: 1 }),
      ],
    });
    const [first, second] = seenAt(2);
    const order = [
      ['call tx0', valueOf(first, 'sequence')],
      ['log tx1', sequenceOf('ProbeResult', `${txHash(201)}-0`)],
      ['call tx1', valueOf(second, 'sequence')],
      ['log tx2', sequenceOf('ProbeResult', `${txHash(202)}-1`)],
    ] as const;
    expect([...order].sort((a, b) => (a[1] as number) - (b[1] as number)).map(([name]) => name)).toEqual([
      'call tx0',
      'log tx1',
      'call tx1',
      'log tx2',
    ]);
  });

  it('runs the `call` block handler once after the calls, before the unfiltered block handler', () => {
    harness().runBlock(3, [], {
      calls: [recordCall(1n, 'a', 1n, { tx: 300, index: 0 }), recordCall(2n, 'b', 3n, { tx: 301, index: 1 })],
    });
    const lastCall = Math.max(...seenAt(3).map((e) => valueOf(e, 'sequence') as number));
    const callBlock = sequenceOf('BlockSeen', 'call-3')!;
    expect(callBlock).toBe(lastCall + 1);
    expect(sequenceOf('BlockSeen', 'every-3')).toBe(callBlock + 1);
  });

  it('skips calls of transactions that failed, while the `call` block handler still runs for them', () => {
    harness().runBlock(4, [], {
      calls: [recordCall(1n, 'reverted', 1n, { tx: 400, index: 0, succeeded: false })],
    });
    expect(seenAt(4)).toEqual([]);
    expect(sequenceOf('BlockSeen', 'call-4')).not.toBeNull();
  });

  it('runs a call equal to the one before it once, as graph-node drops such a trigger', () => {
    const call = recordCall(5n, 'twice', 5n, { tx: 500, index: 0, trace: [0] });
    harness().runBlock(5, [], {
      calls: [call, { ...call, traceAddress: [1] }, { ...call, gasUsed: 1n, traceAddress: [2] }],
    });
    expect(seenAt(5).map((e) => valueOf(e, 'note'))).toEqual(['twice', 'twice']);
  });

  it('skips, with a warning, a call whose input does not decode as the function', () => {
    const call = recordCall(6n, 'cut', 6n, { tx: 600, index: 0 });
    harness().runBlock(6, [], { calls: [{ ...call, input: call.input.slice(0, 74) as Hex }] });
    expect(seenAt(6)).toEqual([]);
    expect(harness().logged.at(-1)).toMatchObject({
      level: 'warning',
      dataSource: 'ProbeCalls',
      message: expect.stringContaining('does not decode as record(uint256,string)'),
    });
  });

  it('fails the block when what the call returned does not decode as its results', () => {
    const call = recordCall(7n, 'bad output', 7n, { tx: 700, index: 0 });
    let failure: unknown;
    try {
      harness().runBlock(7, [], { calls: [{ ...call, output: '0x01' }] });
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(HandlerError);
    expect((failure as HandlerError).message).toBe(
      `Handler handleRecord of data source ProbeCalls failed at block 7, transaction ${txHash(700)}, call to ${probeCallsAddress}: Decoding function outputs for the call record(uint256,string) failed, raw output: 0x01`,
    );
  });

  it('hands the handler a string argument with its byte-order mark, as graph-node’s alloy decoding keeps it', () => {
    harness().runBlock(8, [], { calls: [recordCall(8n, '\uFEFFnote', 8n, { tx: 800, index: 0 })] });
    expect(seenAt(8).map((e) => valueOf(e, 'note'))).toEqual(['\uFEFFnote']);
  });
});

describe('call handler rules of the manifest', () => {
  it('refuses a function that is not a payable or nonpayable function of the data source ABI', async () => {
    await expect(
      loadEditedProbe((text) => text.replace('function: record(uint256,string)', 'function: echo(int16)')),
    ).rejects.toThrow(
      "data source ProbeCalls: call handler handleRecord: function echo(int16) is not a payable or nonpayable function of the data source's ABI",
    );
    // a view function is not one either
    await expect(
      loadEditedProbe((text) => text.replace('function: record(uint256,string)', 'function: pair()')),
    ).rejects.toThrow('function pair() is not a payable or nonpayable function');
  });

  it('refuses two `call` block handlers in one data source', async () => {
    await expect(
      loadEditedProbe((text) =>
        text.replace(
          '        - handler: handleCallBlock\n',
          '        - handler: handleOnce\n          filter:\n            kind: call\n        - handler: handleCallBlock\n',
        ),
      ),
    ).rejects.toThrow('data source ProbeCalls: data source has duplicated block handlers');
  });
});
