// The block processor running the project's real subgraph wasm (subgraph/build, made by
// `npm run build:subgraph`) over synthetic logs: trigger order, template instances created and
// started within the block as graph-node does, logs that do not decode, immutable entities across
// blocks, instance recycling, and restarting from persisted template instances.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAbi, type Hex } from 'viem';
import { createBlockProcessor } from '../../../indexer/runtime/block-processor.ts';
import { DataSourceSet } from '../../../indexer/runtime/data-sources.ts';
import { HandlerError } from '../../../indexer/runtime/handler-error.ts';
import { openStore } from '../../../indexer/store/sqlite-store.ts';
import { ImmutableEntityConflict } from '../../../indexer/store/store-errors.ts';
import { commitBlock } from '../store-fixture.ts';
import { makeLog, processBlock, RuntimeHarness, txHash } from './runtime-harness.ts';

const buildDir = new URL('../../../subgraph/build', import.meta.url).pathname;

const abi = parseAbi([
  'event FundRegistered(address indexed vault, address indexed shareToken, address indexed policy, string slug)',
  'event OwnershipTransferred(address indexed previousOwner, address indexed newOwner)',
  'event EpochSettled(uint64 indexed epoch, uint256 navPerShare, uint256 assetsIn, uint256 sharesMinted, uint256 sharesBurned, uint256 assetsOut, uint256 totalAssets, uint256 totalSupply, uint256 reserveBalance)',
  'event NavDrafted(address indexed fund, uint64 indexed epoch, uint256 navPerShare, uint256 totalAssets, uint256 totalSupply)',
  'event NavSubmitted(address indexed fund, uint64 indexed epoch)',
]);

const vault: Hex = '0x1111111111111111111111111111111111111111';
const settled = {
  epoch: 7n,
  navPerShare: 1_020_000n,
  assetsIn: 2n,
  sharesMinted: 3n,
  sharesBurned: 4n,
  assetsOut: 5n,
  totalAssets: 6n,
  totalSupply: 7n,
  reserveBalance: 2n ** 255n,
};

let harness: RuntimeHarness;

function address(dataSource: string): Hex {
  const ds = harness.subgraph.dataSources.find((d) => d.name === dataSource);
  if (!ds?.address) throw new Error(`no data source ${dataSource}`);
  return ds.address;
}

function registration(block: number, logIndex: number) {
  return makeLog(
    abi,
    'FundRegistered',
    { vault, shareToken: '0x' + '22'.repeat(20), policy: '0x' + '33'.repeat(20), slug: 'alpha' },
    { address: address('FundRegistry'), block, logIndex },
  );
}

/** Runs `processor` over block `block` of `logs` (time 100) and commits what it wrote. */
function commitProcessedBlock(
  processor: ReturnType<typeof createBlockProcessor>,
  sources: DataSourceSet,
  block: number,
  logs: ReturnType<typeof registration>[],
): void {
  commitBlock(
    harness.store,
    { number: block, hash: txHash(block), parentHash: txHash(block - 1), timestamp: 100 },
    null,
    (writer) =>
      processBlock(
        processor,
        { number: BigInt(block), hash: txHash(block), parentHash: txHash(block - 1), timestamp: 100n, logs },
        writer,
        sources,
      ),
  );
}

beforeAll(() => {
  if (!existsSync(`${buildDir}/subgraph.yaml`))
    throw new Error('subgraph/build is missing: run npm run build:subgraph');
});

afterEach(() => harness?.close());

describe('block processor on the project subgraph', () => {
  it('starts a FundVault instance in the registering block and runs it over that block’s logs', async () => {
    harness = await RuntimeHarness.open(buildDir);
    // The vault's log precedes the registration: graph-node rescans the whole block for new data sources.
    const result = harness.runBlock(10, [
      makeLog(abi, 'EpochSettled', settled, { address: vault, block: 10, logIndex: 0 }),
      registration(10, 1),
    ]);
    expect(result.createdDataSources).toEqual([
      { template: 'FundVault', address: vault, context: null, createdAtBlock: 10n },
    ]);
    expect(result.handlerCalls).toBe(2);
    expect(harness.sources.dynamic.map((d) => d.address)).toEqual([vault]);
    const settlement = harness.store.getCurrent('Settlement', `${vault}-7`);
    expect(settlement?.get('reserveBalance')).toEqual({ kind: 'BigInt', value: 2n ** 255n });
    expect(settlement?.get('navPerShare')).toEqual({ kind: 'BigInt', value: 1_020_000n });
    const fund = harness.store.getCurrent('Fund', vault);
    expect(fund?.get('slug')).toEqual({ kind: 'String', value: 'alpha' });
    expect(fund?.get('registeredAtBlock')).toEqual({ kind: 'BigInt', value: 10n });
  });

  it('runs handlers in log index order whatever order the logs arrive in', async () => {
    harness = await RuntimeHarness.open(buildDir);
    // the mappings keep NAV records of registered funds only
    harness.runBlock(4, [registration(4, 0)]);
    const oracle = address('NavOracle');
    const drafted = makeLog(
      abi,
      'NavDrafted',
      { fund: vault, epoch: 1n, navPerShare: 1n, totalAssets: 2n, totalSupply: 3n },
      { address: oracle, block: 5, logIndex: 3 },
    );
    const submitted = makeLog(
      abi,
      'NavSubmitted',
      { fund: vault, epoch: 1n },
      { address: oracle, block: 5, logIndex: 4 },
    );
    harness.runBlock(5, [submitted, drafted]);
    expect(harness.store.getCurrent('NavRecord', `${vault}-1`)?.get('status')).toEqual({
      kind: 'String',
      value: 'PendingVerification',
    });
  });

  it('ignores logs of other contracts and of tracked contracts before their start block', async () => {
    harness = await RuntimeHarness.open(buildDir);
    expect(
      harness.runBlock(3, [makeLog(abi, 'EpochSettled', settled, { address: vault, block: 3, logIndex: 0 })])
        .handlerCalls,
    ).toBe(0);
    const late = {
      ...harness.subgraph,
      dataSources: harness.subgraph.dataSources.map((d) => ({ ...d, startBlock: 100n })),
    };
    const processor = createBlockProcessor(late, harness.schema);
    const sources = new DataSourceSet(late);
    const run = (block: number): number => {
      harness.store.begin();
      try {
        const header = {
          number: BigInt(block),
          hash: txHash(block),
          parentHash: txHash(block - 1),
          timestamp: 0n,
        };
        return processBlock(
          processor,
          { ...header, logs: [registration(block, 0)] },
          harness.store.blockWriter(block),
          sources,
        ).handlerCalls;
      } finally {
        harness.store.rollback();
      }
    };
    expect(run(99)).toBe(0);
    expect(run(100)).toBe(1);
  });

  it('skips a log whose topics do not match the event’s indexed parameters', async () => {
    harness = await RuntimeHarness.open(buildDir);
    const log = registration(6, 0);
    const truncated = { ...log, topics: log.topics.slice(0, 2) as [Hex, ...Hex[]] };
    expect(harness.runBlock(6, [truncated]).handlerCalls).toBe(0);
    expect(harness.store.getCurrent('Fund', vault)).toBeNull();
  });

  it('fails the block when a later block writes an immutable entity again', async () => {
    harness = await RuntimeHarness.open(buildDir);
    const transfer = (block: number) =>
      makeLog(
        abi,
        'OwnershipTransferred',
        { previousOwner: '0x' + '00'.repeat(20), newOwner: '0x' + '44'.repeat(20) },
        { address: address('FundRegistry'), block, logIndex: 0, tx: 99 },
      );
    harness.runBlock(7, [transfer(7)]);
    let failure: unknown;
    try {
      harness.runBlock(8, [transfer(8)]);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(HandlerError);
    const error = failure as HandlerError;
    expect(error.blockNumber).toBe(8n);
    expect(error.dataSource).toBe('FundRegistry');
    expect(error.handler).toBe('handleOwnershipTransferred');
    expect(error.message).toContain('is immutable and was inserted at an earlier block');
    expect(harness.store.checkpoint().number).toBe(7);
  });

  it('leaves a deferred immutable check to the store, which refuses the block whole', async () => {
    harness = await RuntimeHarness.open(buildDir);
    const transfer = (block: number, logIndex: number) =>
      makeLog(
        abi,
        'OwnershipTransferred',
        { previousOwner: '0x' + '00'.repeat(20), newOwner: '0x' + '44'.repeat(20) },
        { address: address('FundRegistry'), block, logIndex, tx: 99 },
      );
    harness.runBlock(7, [transfer(7, 1)]);
    expect(harness.store.getCurrent('ProtocolEvent', `${txHash(99)}01000000`)).not.toBeNull();
    harness.store.begin();
    try {
      const writer = harness.store.blockWriter(8);
      const block = { number: 8n, hash: txHash(8), parentHash: txHash(7), timestamp: 100n };
      const steps = harness.processor.blockSteps(
        { ...block, logs: [transfer(8, 0), transfer(8, 1)] },
        writer,
        harness.sources,
        true,
      );
      let step = steps.next();
      while (!step.done) step = steps.next();
      expect(step.value.handlerCalls).toBe(2); // the handler was not stopped by a lookup
      let conflict: unknown;
      try {
        writer.flush();
      } catch (error) {
        conflict = error;
      }
      expect(conflict).toBeInstanceOf(ImmutableEntityConflict);
      expect((conflict as ImmutableEntityConflict).entityType).toBe('ProtocolEvent');
      // the new event (log index 0), inserted before the conflicting one, was taken back with it
      const newEventId = `${txHash(99)}00000000`;
      expect(harness.store.getCurrent('ProtocolEvent', newEventId)).toBeNull();
    } finally {
      harness.store.rollback();
    }
  });

  it('gives the same results when every handler call gets a fresh instance', async () => {
    harness = await RuntimeHarness.open(buildDir);
    const recycling = createBlockProcessor(harness.subgraph, harness.schema, { maxInstanceMemoryBytes: 1 });
    const sources = new DataSourceSet(harness.subgraph);
    for (let block = 1; block <= 3; block++) {
      const logs =
        block === 1
          ? [registration(1, 0)]
          : [
              makeLog(
                abi,
                'EpochSettled',
                { ...settled, epoch: BigInt(block) },
                { address: vault, block, logIndex: 0 },
              ),
            ];
      commitProcessedBlock(recycling, sources, block, logs);
    }
    expect(recycling.instancesCreated).toBe(3);
    expect(harness.store.getCurrent('Settlement', `${vault}-2`)).not.toBeNull();
    expect(harness.store.getCurrent('Settlement', `${vault}-3`)).not.toBeNull();
  });

  it('keeps mapping memory bounded by reusing it across replaced instances', async () => {
    harness = await RuntimeHarness.open(buildDir);
    const limit = 256 * 1024;
    const recycling = createBlockProcessor(harness.subgraph, harness.schema, {
      maxInstanceMemoryBytes: limit,
    });
    const sources = new DataSourceSet(harness.subgraph);
    const run = (block: number, logs: ReturnType<typeof registration>[]): void =>
      commitProcessedBlock(recycling, sources, block, logs);
    run(1, [registration(1, 0)]);
    for (let block = 2; block <= 400; block++) {
      run(block, [
        makeLog(
          abi,
          'EpochSettled',
          { ...settled, epoch: BigInt(block) },
          { address: vault, block, logIndex: 0 },
        ),
      ]);
    }
    expect(recycling.instancesCreated).toBeGreaterThan(10);
    // Two modules ran (FundRegistry, FundVault); each memory stays near the limit plus one handler's use.
    expect(recycling.memoryBytes).toBeLessThan(2 * (limit + 2 * 1024 * 1024));
    expect(harness.store.getCurrent('Settlement', `${vault}-400`)).not.toBeNull();
  });

  it('rethrows a failure of the store itself instead of failing the subgraph', async () => {
    harness = await RuntimeHarness.open(buildDir);
    const processor = createBlockProcessor(harness.subgraph, harness.schema);
    const dir = mkdtempSync(join(tmpdir(), 'closed-store-'));
    const store = openStore({
      path: join(dir, 'store.sqlite'),
      schema: harness.schema,
      startBlock: 0,
      deployment: 't',
    });
    store.begin();
    const writer = store.blockWriter(1);
    store.db.close();
    rmSync(dir, { recursive: true, force: true });
    let failure: unknown;
    try {
      processBlock(
        processor,
        { number: 1n, hash: txHash(1), parentHash: txHash(0), timestamp: 100n, logs: [registration(1, 0)] },
        writer,
        new DataSourceSet(harness.subgraph),
      );
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(HandlerError);
    expect((failure as Error).message).toContain('database connection is not open');
  });

  it('runs template instances restored from their persisted description after a restart', async () => {
    harness = await RuntimeHarness.open(buildDir);
    harness.runBlock(1, [registration(1, 0)]);
    const restored = new DataSourceSet(harness.subgraph, harness.sources.dynamic);
    const processor = createBlockProcessor(harness.subgraph, harness.schema);
    harness.store.begin();
    const writer = harness.store.blockWriter(2);
    const result = processBlock(
      processor,
      {
        number: 2n,
        hash: txHash(2),
        parentHash: txHash(1),
        timestamp: 100n,
        logs: [makeLog(abi, 'EpochSettled', settled, { address: vault, block: 2, logIndex: 0 })],
      },
      writer,
      restored,
    );
    writer.flush();
    harness.store.commit({ number: 2, hash: txHash(2), parentHash: txHash(1), timestamp: 100 }, null);
    expect(result.handlerCalls).toBe(1);
    expect(harness.store.getCurrent('Settlement', `${vault}-7`)).not.toBeNull();
  });
});
