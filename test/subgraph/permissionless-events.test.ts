// The subgraph's mappings over events anyone can cause: DividendDistributor.postRound checks only that
// the sender is the named contract's owner(), so one transaction can post a round for any contract,
// with any values. A value that does not fit the schema's Int (a uint64 epoch or uint32 leaf count
// of 2^31 or more) is skipped with a warning naming it, and indexing goes on: graph-ts's toI32 would
// abort the handler, which stops a subgraph for good. A round of a contract the FundRegistry never
// registered is skipped too, with its claims: its `fund` would name no Fund and fail every query
// listing rounds with their fund. So is a NAV draft for an address the FundRegistry never registered
// (the NavOracle checks no registry; only its NAV operator can draft). A registered vault's epoch is
// checked as well: the registry's owner registers vaults, but nothing checks what one emits. Runs the
// real subgraph wasm over synthetic logs.
import { existsSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAbi, type Hex } from 'viem';
import { makeLog, RuntimeHarness } from '../indexer/runtime/runtime-harness.ts';

const buildDir = new URL('../../subgraph/build', import.meta.url).pathname;

const abi = parseAbi([
  'event FundRegistered(address indexed vault, address indexed shareToken, address indexed policy, string slug)',
  'event DividendRoundPosted(address indexed fund, uint64 indexed epoch, bytes32 merkleRoot, uint256 total, uint32 leafCount, string uri)',
  'event DividendClaimed(address indexed fund, uint64 indexed epoch, address indexed account, uint256 amount)',
  'event NavDrafted(address indexed fund, uint64 indexed epoch, uint256 navPerShare, uint256 totalAssets, uint256 totalSupply)',
  'event SubscriptionRequested(address indexed investor, uint64 indexed epoch, uint256 assets)',
  'event ModulePaused(uint8 indexed module)',
  'event EpochSettled(uint64 indexed epoch, uint256 navPerShare, uint256 assetsIn, uint256 sharesMinted, uint256 sharesBurned, uint256 assetsOut, uint256 totalAssets, uint256 totalSupply, uint256 reserveBalance)',
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

/** The FundRegistry's registration of `fund` in block 1: rounds of unregistered contracts are skipped. */
function registerFund() {
  harness.runBlock(1, [
    makeLog(
      abi,
      'FundRegistered',
      { vault: fund, shareToken: `0x${'88'.repeat(20)}`, policy: `0x${'77'.repeat(20)}`, slug: 'test-fund' },
      { address: address('FundRegistry'), block: 1, logIndex: 0 },
    ),
  ]);
}

function navDrafted(block: number, epoch: bigint) {
  return makeLog(
    abi,
    'NavDrafted',
    { fund, epoch, navPerShare: 1_000_000n, totalAssets: 1n, totalSupply: 1n },
    { address: address('NavOracle'), block, logIndex: 0 },
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
    registerFund();
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
    registerFund();
    harness.runBlock(2, [roundPosted(2, 7n, 2 ** 31)]);
    expect(harness.store.getCurrent('DividendRound', `${fund}-7`)).toBeNull();
    expect(warnings()).toEqual([
      expect.stringMatching(/^DividendRoundPosted skipped: leafCount 2147483648 does not fit a schema Int/),
    ]);
  });

  it('stores a dividend round whose epoch and leaf count are exactly the Int maximum', async () => {
    harness = await RuntimeHarness.open(buildDir);
    registerFund();
    harness.runBlock(2, [roundPosted(2, INT_MAX, Number(INT_MAX))]);
    const round = harness.store.getCurrent('DividendRound', `${fund}-${INT_MAX}`);
    expect(round?.get('epoch')).toEqual({ kind: 'Int', value: Number(INT_MAX) });
    expect(round?.get('leafCount')).toEqual({ kind: 'Int', value: Number(INT_MAX) });
    expect(warnings()).toEqual([]);
  });

  it('skips a NAV draft whose epoch is 2^31, with a warning', async () => {
    harness = await RuntimeHarness.open(buildDir);
    registerFund();
    harness.runBlock(2, [navDrafted(2, INT_MAX + 1n)]);
    expect(harness.store.getCurrent('NavRecord', `${fund}-${INT_MAX + 1n}`)).toBeNull();
    expect(warnings()).toEqual([
      expect.stringMatching(/^NavDrafted skipped: epoch 2147483648 does not fit a schema Int/),
    ]);
  });
});

describe("a registered vault's epoch beyond the schema Int", () => {
  it('skips the request and the settlement of epoch 2^32, with warnings, and indexes the next block', async () => {
    harness = await RuntimeHarness.open(buildDir);
    registerFund();
    const epoch = 2n ** 32n;
    const zero = { navPerShare: 1_000_000n, assetsIn: 0n, sharesMinted: 0n, sharesBurned: 0n, assetsOut: 0n };
    const totals = { totalAssets: 0n, totalSupply: 0n, reserveBalance: 0n };
    const requested = makeLog(
      abi,
      'SubscriptionRequested',
      { investor: `0x${'66'.repeat(20)}`, epoch, assets: 5n },
      { address: fund, block: 2, logIndex: 0 },
    );
    const settled = makeLog(
      abi,
      'EpochSettled',
      { epoch, ...zero, ...totals },
      { address: fund, block: 2, logIndex: 1 },
    );
    harness.runBlock(2, [requested, settled]);
    expect(harness.store.getCurrent('Settlement', `${fund}-${epoch}`)).toBeNull();
    expect(harness.store.getCurrent('Request', `${requested.transactionHash}00000000`)).toBeNull();
    expect(warnings()).toEqual([
      expect.stringMatching(/^SubscriptionRequested skipped: epoch 4294967296 does not fit a schema Int/),
      expect.stringMatching(/^EpochSettled skipped: epoch 4294967296 does not fit a schema Int/),
    ]);
    harness.runBlock(3, [
      makeLog(
        abi,
        'EpochSettled',
        { epoch: 7n, ...zero, ...totals },
        { address: fund, block: 3, logIndex: 0 },
      ),
    ]);
    expect(harness.store.getCurrent('Settlement', `${fund}-7`)?.get('epoch')).toEqual({
      kind: 'Int',
      value: 7,
    });
  });
});

describe('a second settlement of an epoch from a registered vault', () => {
  it('is skipped with a warning, the first one kept', async () => {
    harness = await RuntimeHarness.open(buildDir);
    registerFund();
    const values = {
      navPerShare: 1_000_000n,
      assetsIn: 0n,
      sharesMinted: 0n,
      sharesBurned: 0n,
      assetsOut: 0n,
    };
    const totals = { totalAssets: 0n, totalSupply: 0n, reserveBalance: 0n };
    harness.runBlock(2, [
      makeLog(
        abi,
        'EpochSettled',
        { epoch: 7n, ...values, ...totals },
        { address: fund, block: 2, logIndex: 0 },
      ),
    ]);
    const again = makeLog(
      abi,
      'EpochSettled',
      { epoch: 7n, ...values, navPerShare: 2_000_000n, ...totals },
      { address: fund, block: 3, logIndex: 0 },
    );
    harness.runBlock(3, [again]);
    expect(harness.store.getCurrent('Settlement', `${fund}-7`)?.get('navPerShare')).toEqual({
      kind: 'BigInt',
      value: 1_000_000n,
    });
    expect(warnings()).toEqual([
      `EpochSettled skipped: epoch 7 of ${fund} is settled already, tx ${again.transactionHash}`,
    ]);
  });
});

describe('a module id a registered vault does not have', () => {
  it('skips a pause of a module id the vault does not have, recording no change and pausing nothing', async () => {
    harness = await RuntimeHarness.open(buildDir);
    registerFund();
    const paused = makeLog(abi, 'ModulePaused', { module: 7 }, { address: fund, block: 2, logIndex: 0 });
    harness.runBlock(2, [paused]);
    expect(harness.store.getCurrent('PauseChange', `${paused.transactionHash}00000000`)).toBeNull();
    expect(harness.store.getCurrent('Fund', fund)?.get('pausedModules')).toEqual({ kind: 'List', value: [] });
    expect(warnings()).toEqual([
      `ModulePaused skipped: module 7 is none of the vault's 3 modules, tx ${paused.transactionHash}`,
    ]);
  });
});

describe('a dividend round of a contract the FundRegistry never registered', () => {
  it('is skipped with a warning, and so are its claims, while both stay in the event stream', async () => {
    harness = await RuntimeHarness.open(buildDir);
    const claimed = makeLog(
      abi,
      'DividendClaimed',
      { fund, epoch: 7n, account: `0x${'66'.repeat(20)}`, amount: 5n },
      { address: address('DividendDistributor'), block: 3, logIndex: 0 },
    );
    const posted = roundPosted(2, 7n, 3);
    harness.runBlock(2, [posted]);
    harness.runBlock(3, [claimed]);
    expect(harness.store.getCurrent('DividendRound', `${fund}-7`)).toBeNull();
    expect(warnings()).toEqual([
      `DividendRoundPosted skipped: ${fund} is no fund the FundRegistry registered, tx ${posted.transactionHash}`,
      `DividendClaimed for unposted round ${fund}-7 in tx ${claimed.transactionHash}`,
    ]);
    // an event's id: its transaction hash, then its log index (0) as 4 little-endian bytes
    const eventName = (log: typeof posted) =>
      harness.store.getCurrent('ProtocolEvent', `${log.transactionHash}00000000`)?.get('eventName');
    expect([eventName(posted), eventName(claimed)]).toEqual([
      { kind: 'String', value: 'DividendRoundPosted' },
      { kind: 'String', value: 'DividendClaimed' },
    ]);
  });

  it('is indexed once the contract is registered', async () => {
    harness = await RuntimeHarness.open(buildDir);
    registerFund();
    harness.runBlock(2, [roundPosted(2, 7n, 3)]);
    expect(harness.store.getCurrent('DividendRound', `${fund}-7`)?.get('fund')).toEqual({
      kind: 'Bytes',
      value: expect.anything(),
    });
    expect(warnings()).toEqual([]);
  });
});

describe('a NAV draft for an address the FundRegistry never registered', () => {
  it('is skipped with a warning, while it stays in the event stream', async () => {
    harness = await RuntimeHarness.open(buildDir);
    const drafted = navDrafted(2, 7n);
    harness.runBlock(2, [drafted]);
    expect(harness.store.getCurrent('NavRecord', `${fund}-7`)).toBeNull();
    expect(warnings()).toEqual([
      `NavDrafted skipped: ${fund} is no fund the FundRegistry registered, tx ${drafted.transactionHash}`,
    ]);
    expect(
      harness.store.getCurrent('ProtocolEvent', `${drafted.transactionHash}00000000`)?.get('eventName'),
    ).toEqual({ kind: 'String', value: 'NavDrafted' });
  });

  it("is indexed once the address is registered, and becomes the fund's latest NAV", async () => {
    harness = await RuntimeHarness.open(buildDir);
    registerFund();
    harness.runBlock(2, [navDrafted(2, 7n)]);
    expect(harness.store.getCurrent('NavRecord', `${fund}-7`)?.get('status')).toEqual({
      kind: 'String',
      value: 'Draft',
    });
    expect(harness.store.getCurrent('Fund', fund)?.get('latestNav')).toEqual({
      kind: 'String',
      value: `${fund}-7`,
    });
    expect(warnings()).toEqual([]);
  });
});
