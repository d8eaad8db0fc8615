// Block handlers through the probe wasm, with synthetic blocks: when each filter fires (none: every
// block; `once`: the data source's start block; `polling`: every N blocks from it), their place
// around a block's logs (graph-node runs `once` first and the others last), the block they receive,
// and the manifest rules graph-node enforces on them.
import { hexToBytes } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  loadEditedProbe,
  makeLog,
  probeAbi,
  probeAddress,
  txHash,
  useProbeHarness,
} from './runtime-harness.ts';

describe('block handlers', () => {
  const harness = useProbeHarness();

  /** The order in which a handler ran among all handler calls, or null if it did not run. */
  function sequenceOf(type: string, id: string): number | null {
    const value = harness().store.getCurrent(type, id)?.get('sequence');
    return value?.kind === 'Int' ? value.value : null;
  }

  /** The handlers that recorded block `number`, in the order they ran. */
  function handlersAt(number: number): string[] {
    return ['once', 'every', 'polling']
      .map((handler) => ({ handler, sequence: sequenceOf('BlockSeen', `${handler}-${number}`) }))
      .filter(({ sequence }) => sequence !== null)
      .sort((a, b) => a.sequence! - b.sequence!)
      .map(({ handler }) => handler);
  }

  it('runs `once` at the start block before the logs, and the unfiltered and polling handlers after them', () => {
    harness().runBlock(1, [
      makeLog(probeAbi, 'Probe', { kind: 5, input: '1' }, { address: probeAddress, block: 1, logIndex: 0 }),
    ]);
    expect(handlersAt(1)).toEqual(['once', 'every', 'polling']);
    // the log's handler ran second, between them
    expect(sequenceOf('ProbeResult', `${txHash(1)}-0`)).toBe(2);
  });

  it('runs the unfiltered handler on every block and the polling one every 3 blocks from the start block', () => {
    for (let number = 2; number <= 7; number++) harness().runBlock(number, []);
    expect([2, 3, 4, 5, 6, 7].map(handlersAt)).toEqual([
      ['every'],
      ['every'],
      ['every', 'polling'],
      ['every'],
      ['every'],
      ['every', 'polling'],
    ]);
  });

  it('gives the handler the block with the header fields the follower fetched', () => {
    const author = '0x00000000000000000000000000000000000000f1' as const;
    harness().runBlock(8, [], { header: { gasLimit: 30_000_000n, author } });
    const seen = harness().store.getCurrent('BlockSeen', 'every-8')!;
    expect(seen.get('number')).toEqual({ kind: 'BigInt', value: 8n });
    expect(seen.get('gasLimit')).toEqual({ kind: 'BigInt', value: 30_000_000n });
    expect(seen.get('author')).toEqual({ kind: 'Bytes', value: hexToBytes(author) });
  });
});

describe('block handler rules of the manifest', () => {
  it('refuses two handlers with the same filter', async () => {
    await expect(
      loadEditedProbe((text) =>
        text.replace(
          '        - handler: handleEveryBlock\n',
          '        - handler: handleEveryBlock\n        - handler: handleOnce\n',
        ),
      ),
    ).rejects.toThrow('data source EveryBlock: data source has duplicated block handlers');
  });

  it('refuses an unfiltered handler alongside a filtered one', async () => {
    await expect(
      loadEditedProbe((text) =>
        text.replace(
          '        - handler: handleEveryBlock\n',
          '        - handler: handleEveryBlock\n        - handler: handleOnce\n          filter:\n            kind: once\n',
        ),
      ),
    ).rejects.toThrow('combination of filtered and non-filtered block handlers that is not allowed');
  });

  it('refuses a polling filter without a positive interval', async () => {
    await expect(loadEditedProbe((text) => text.replace('every: 3', 'every: 0'))).rejects.toThrow(
      'block handler handlePolling: polling needs `every`, a positive integer',
    );
  });
});
