// The subgraph's mappings over contract values that do not fit the schema's Int (a uint64 epoch or
// uint32 leaf count of 2^31 or more): the event is skipped with a warning naming it, and indexing goes on.
// graph-ts's toI32 would abort the handler, which stops a subgraph for good, and a dividend round
// with such values can be posted by anyone (DividendDistributor.postRound checks only that the
// sender is the named contract's owner()). Runs the real subgraph wasm over synthetic logs.
import { existsSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAbi, type Hex } from 'viem';
import { makeLog, RuntimeHarness } from '../indexer/runtime/runtime-harness.ts';

const buildDir = new URL('../../subgraph/build', import.meta.url).pathname;

const abi = parseAbi([
  'event DividendRoundPosted(address indexed fund, uint64 indexed epoch, bytes32 merkleRoot, uint256 total, uint32 leafCount, string uri)',
  'event NavDrafted(address indexed fund, uint64 indexed epoch, uint256 navPerShare, uint256 totalAssets, uint256 totalSupply)',
]);

const fund: Hex = '0x9999999999999999999999999999999999999999';
const INT_MAX = 2n ** 31n - 1n;

let harness: RuntimeHarness;

function address(dataSource: string): Hex {
  const ds = harness.subgraph.dataSources.find((d) => d.name === dataSource);
  if (!ds?.address) throw new Error(`no data source ${dataSource}`);
  return ds.address;
}

function roundPosted(block: number, epoch: bigint, leafCount: number) {
  return makeLog(
    abi,
    'DividendRoundPosted',
    { fund, epoch, merkleRoot: `0x${'11'.repeat(32)}`, total: 0n, leafCount, uri: 'ipfs://round' },
    { address: address('DividendDistributor'), block, logIndex: 0 },
  );
}

const warnings = () => harness.logged.filter((l) => l.level === 'warning').map((l) => l.message);

beforeAll(() => {
  if (!existsSync(`${buildDir}/subgraph.yaml`))
    throw new Error('subgraph/build is missing: run npm run build:subgraph');
});
afterEach(() => harness?.close());

describe('a contract value beyond the schema Int', () => {
  it('skips a dividend round whose epoch is 2^32, with a warning, and indexes the next block', async () => {
    harness = await RuntimeHarness.open(buildDir);
    harness.runBlock(2, [roundPosted(2, 2n ** 32n, 1)]);
    expect(harness.store.getCurrent('DividendRound', `${fund}-${2n ** 32n}`)).toBeNull();
    expect(warnings()).toEqual([
      expect.stringMatching(/^DividendRoundPosted skipped: epoch 4294967296 does not fit a schema Int/),
    ]);
    harness.runBlock(3, [roundPosted(3, 7n, 3)]);
    expect(harness.store.getCurrent('DividendRound', `${fund}-7`)?.get('leafCount')).toEqual({
      kind: 'Int',
      value: 3,
    });
  });

  it('skips a dividend round whose leaf count is 2^31 rather than storing it wrapped negative', async () => {
    harness = await RuntimeHarness.open(buildDir);
    harness.runBlock(2, [roundPosted(2, 7n, 2 ** 31)]);
    expect(harness.store.getCurrent('DividendRound', `${fund}-7`)).toBeNull();
    expect(warnings()).toEqual([
      expect.stringMatching(/^DividendRoundPosted skipped: leafCount 2147483648 does not fit a schema Int/),
    ]);
  });

  it('stores a dividend round whose epoch and leaf count are exactly the Int maximum', async () => {
    harness = await RuntimeHarness.open(buildDir);
    harness.runBlock(2, [roundPosted(2, INT_MAX, Number(INT_MAX))]);
    const round = harness.store.getCurrent('DividendRound', `${fund}-${INT_MAX}`);
    expect(round?.get('epoch')).toEqual({ kind: 'Int', value: Number(INT_MAX) });
    expect(round?.get('leafCount')).toEqual({ kind: 'Int', value: Number(INT_MAX) });
    expect(warnings()).toEqual([]);
  });

  it('skips a NAV draft whose epoch is 2^31, with a warning', async () => {
    harness = await RuntimeHarness.open(buildDir);
    harness.runBlock(2, [
      makeLog(
        abi,
        'NavDrafted',
        { fund, epoch: INT_MAX + 1n, navPerShare: 1_000_000n, totalAssets: 1n, totalSupply: 1n },
        { address: address('NavOracle'), block: 2, logIndex: 0 },
      ),
    ]);
    expect(harness.store.getCurrent('NavRecord', `${fund}-${INT_MAX + 1n}`)).toBeNull();
    expect(warnings()).toEqual([
      expect.stringMatching(/^NavDrafted skipped: epoch 2147483648 does not fit a schema Int/),
    ]);
  });
});
