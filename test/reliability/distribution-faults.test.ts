// Faults of the dividend distribution files behind GET /v1/funds/{slug}/dividends/{epoch}/proof,
// made with real things: a copy of the harness's distribution directory whose files the tests
// replace (by huge sparse files, named pipes, directories, symbolic links, malformed dumps), a file
// server on loopback over it (with a fault proxy in front, and one answering chunked), and a private
// devnet whose rounds disagree with their files. Each refusal must say what is wrong in the
// service's own words, a lasting one must say that retrying will not help and be kept for its time
// without reading the file again, and the proof must be served once the file is fixed.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import type { LedgerRound } from '../../devnet/ledger.ts';
import { createRpcClient } from '../../devnet/rpc.ts';
import { createGateway, type Gateway } from '../../gateway/server.ts';
import { MAX_DISTRIBUTION_BYTES, type DistributionsConfig } from '../../gateway/sources/distributions.ts';
import { loadRegistry } from '../../gateway/sources/registry.ts';
import { createIndexer, type Indexer } from '../../indexer/indexer.ts';
import { createRestApp } from '../../rest/app.ts';
import {
  graphql,
  indexedStack,
  listen,
  REGISTRY_FILE,
  testGateway,
  type IndexedStack,
} from '../gateway/stack.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { expectNoLeak, expectProblem, get } from './problems.ts';
import { startFaultProxy, type FaultProxy } from './servers/fault-proxy.ts';
import { startStaticFiles, type StaticFiles } from './servers/static-files.ts';

/** How long a service waits for a distribution: ample, but for one made to wait out a hanging server. */
const TIMEOUT_MS = 20_000;
const HANG_TIMEOUT_MS = 3_000;
const UPSTREAM_SECRET = 'upstream-secret-detail-5c1d';

interface Dump {
  format: string;
  leafEncoding: string[];
  tree: string[];
  values: { value: [string, string]; treeIndex: number }[];
}

/** The detail of a lasting refusal of the file at `uri`. */
const refusal = (uri: string, reason: string) =>
  `The dividend distribution is refused: "${uri}" ${reason}. This lasts until the service's operator fixes it; retrying will not help.`;

/** The detail of a fault that may clear by itself. */
const unavailability = (uri: string, reason: string) =>
  `The dividend distribution is unavailable: "${uri}" ${reason}; retry later.`;

const TOO_LARGE = `is larger than ${MAX_DISTRIBUTION_BYTES} bytes (64 MiB), the most this service reads of one distribution`;

/** Services started by a test, closed after it. */
const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((service) => service.close()));
});

/** The REST service over `gateway`, as a public deployment answers: no cache, no rate limit. */
function restService(gateway: Gateway): Promise<{ url: string; close(): Promise<void> }> {
  return listen(
    createRestApp({
      gateway,
      // a public base, so that any loopback address in a body is a leak
      publicBaseUrl: 'https://api.example',
      trustProxy: false,
      rateLimit: false,
      responseCacheEntries: 0,
      logError: () => {},
    }),
  );
}

/** restService for one test: closed after it. */
async function serve(gateway: Gateway): Promise<string> {
  const service = await restService(gateway);
  started.push(service);
  return service.url;
}

async function expectRefused(at: string, path: string, uri: string, reason: string): Promise<void> {
  const response = await get(at, path);
  const body = expectProblem(response, 503, 'upstream-unavailable');
  expect(body.detail).toBe(refusal(uri, reason));
  expect(response.headers.get('retry-after')).toBeNull();
  expectNoLeak(response.text, [UPSTREAM_SECRET]);
}

async function expectUnavailable(at: string, path: string, uri: string, reason: string): Promise<void> {
  const response = await get(at, path);
  const body = expectProblem(response, 503, 'upstream-unavailable');
  expect(body.detail).toBe(unavailability(uri, reason));
  expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
  expectNoLeak(response.text, [UPSTREAM_SECRET]);
}

describe('distribution files of the indexed scenario', () => {
  let stack: IndexedStack;
  /** a copy of the harness's distributions/ that the tests change, one file at a time */
  let dir: string;
  let files: StaticFiles;
  let chunkedFiles: StaticFiles;
  let proxy: FaultProxy;

  beforeAll(async () => {
    stack = await indexedStack();
    dir = mkdtempSync(join(tmpdir(), 'distribution-faults-'));
    cpSync(join(stack.devnet.dataDir, 'distributions'), join(dir, 'distributions'), { recursive: true });
    files = await startStaticFiles(dir);
    chunkedFiles = await startStaticFiles(dir, { chunked: true });
    proxy = await startFaultProxy(files.url);
  });

  afterEach(() => proxy.set({ kind: 'pass' }));

  afterAll(async () => {
    await Promise.all([files?.close(), chunkedFiles?.close(), proxy?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
    await stack?.stop();
  });

  /**
   * A service reading the distributions at `base`. Unless a test says otherwise, a refusal is not
   * kept (refusalTtlMs 0), so that the request after a file is fixed reads it again.
   */
  const service = (base: string, options: Partial<DistributionsConfig> = {}) =>
    serve(
      testGateway(stack, {
        distributions: { base, timeoutMs: TIMEOUT_MS, cacheSize: 16, refusalTtlMs: 0, ...options },
      }),
    );

  const round = (i: number): LedgerRound => {
    const found = stack.devnet.ledger.rounds[i];
    if (!found) throw new Error(`the scenario posted fewer than ${i + 1} dividend rounds`);
    return found;
  };
  const original = (r: LedgerRound) => readFileSync(join(stack.devnet.dataDir, r.uri));
  const dumpOf = (r: LedgerRound) => JSON.parse(original(r).toString()) as Dump;
  const proofPath = (r: LedgerRound) =>
    `/v1/funds/${r.fund}/dividends/${r.epoch}/proof?address=${dumpOf(r).values[0]!.value[0]}`;

  async function expectServed(at: string, r: LedgerRound): Promise<void> {
    const response = await get(at, proofPath(r));
    expect(response.status, response.text.slice(0, 300)).toBe(200);
    const { data } = JSON.parse(response.text) as { data: { merkleRoot: string; amountRaw: string } };
    expect(data.merkleRoot).toBe(r.merkleRoot.toLowerCase());
    expect(data.amountRaw).toBe(dumpOf(r).values[0]!.value[1]);
  }

  /** Runs `check` with the file of `r` replaced by what `make` puts at its path, then puts it back. */
  async function withFileReplaced(r: LedgerRound, make: (file: string) => void, check: () => Promise<void>) {
    const file = join(dir, r.uri);
    rmSync(file);
    try {
      make(file);
      await check();
    } finally {
      rmSync(file, { recursive: true, force: true });
      rmSync(`${file}.gz`, { force: true });
      writeFileSync(file, original(r));
    }
  }

  /** a sparse file one byte over the limit: it takes no room on disk */
  const oversized = (file: string) => {
    writeFileSync(file, '');
    truncateSync(file, MAX_DISTRIBUTION_BYTES + 1);
  };

  describe('in a distribution directory', () => {
    it('refuses a file over 64 MiB without reading it, and serves the proof once the file is replaced', async () => {
      const at = await service(dir);
      const r = round(0);
      await withFileReplaced(r, oversized, () => expectRefused(at, proofPath(r), r.uri, TOO_LARGE));
      await expectServed(at, r);
    });

    it('refuses named pipes at once, and four of them leave the other rounds readable', async () => {
      // each opened by a blocking read would hold one of libuv's four threads until a writer came
      const at = await service(dir);
      const pipes = [0, 1, 2, 3].map(round);
      for (const r of pipes) {
        rmSync(join(dir, r.uri));
        execFileSync('mkfifo', [join(dir, r.uri)]);
      }
      try {
        await Promise.all(
          pipes.map((r) => expectRefused(at, proofPath(r), r.uri, 'is a named pipe, not a regular file')),
        );
        await expectServed(at, round(4));
      } finally {
        for (const r of pipes) {
          rmSync(join(dir, r.uri));
          writeFileSync(join(dir, r.uri), original(r));
        }
      }
      for (const r of pipes) await expectServed(at, r);
    });

    it('refuses a directory in place of the file', async () => {
      const at = await service(dir);
      const r = round(0);
      await withFileReplaced(
        r,
        (file) => mkdirSync(file),
        () => expectRefused(at, proofPath(r), r.uri, 'is a directory, not a regular file'),
      );
    });

    it('refuses a symbolic link leading out of the directory, and follows one that stays in it', async () => {
      const at = await service(dir);
      const r = round(0);
      // the round's own valid file, but outside the directory: it must not be read
      const outside = mkdtempSync(join(tmpdir(), 'distribution-outside-'));
      try {
        writeFileSync(join(outside, 'round.json'), original(r));
        await withFileReplaced(
          r,
          (file) => symlinkSync(join(outside, 'round.json'), file),
          () =>
            expectRefused(
              at,
              proofPath(r),
              r.uri,
              'leaves the distribution directory through a symbolic link',
            ),
        );
        const inside = join(dir, 'published', 'round.json');
        mkdirSync(dirname(inside), { recursive: true });
        writeFileSync(inside, original(r));
        await withFileReplaced(
          r,
          (file) => symlinkSync(inside, file),
          () => expectServed(at, r),
        );
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });

    it('names the rule a malformed file breaks, without quoting the file', async () => {
      const at = await service(dir);
      // a round with two leaves of different amounts, whose swap keeps the root, count and sum
      const r = stack.devnet.ledger.rounds.find((candidate) => {
        const [a, b] = dumpOf(candidate).values;
        return a && b && a.value[1] !== b.value[1];
      });
      if (!r) throw new Error('no round of the scenario has two leaves of different amounts');
      const changed = (change: (dump: Dump) => void) => {
        const dump = dumpOf(r);
        change(dump);
        return JSON.stringify(dump);
      };
      const cases: [string, string][] = [
        [`<html><body>502 Bad Gateway ${UPSTREAM_SECRET}</body></html>`, 'it is not JSON'],
        ['null', 'it is not a JSON object'],
        [changed((d) => (d.format = UPSTREAM_SECRET)), 'its format is not "standard-v1"'],
        [
          changed((d) => (d.leafEncoding = ['address', 'uint128'])),
          'its leafEncoding is not ["address", "uint256"]',
        ],
        [changed((d) => (d.tree = [])), 'its tree is not a non-empty list of 32-byte 0x hex nodes'],
        [
          changed((d) => (d.values[1]!.value = [d.values[1]!.value[0]] as never)),
          'its value 1 is not {"value": [address, amount], "treeIndex": integer}',
        ],
        [
          changed((d) => (d.values[1]!.value[0] = '0x1234')),
          'the address of its value 1 is not 0x and 40 hex digits',
        ],
        [
          changed((d) => (d.values[1]!.value[1] = '-5')),
          'the amount of its value 1 is not an integer from 0 to 2^256-1',
        ],
        [
          changed((d) => {
            const [a, b] = d.values;
            [a!.value[1], b!.value[1]] = [b!.value[1], a!.value[1]];
          }),
          'is not a valid Merkle tree: its leaves and nodes do not hash to its tree',
        ],
      ];
      for (const [content, rule] of cases) {
        await withFileReplaced(
          r,
          (file) => writeFileSync(file, content),
          () =>
            expectRefused(
              at,
              proofPath(r),
              r.uri,
              rule.startsWith('is ') ? rule : `is not a StandardMerkleTree dump: ${rule}`,
            ),
        );
      }
      await expectServed(at, r);
    });
  });

  describe('from a distribution server', () => {
    it('refuses an answer announcing more than 64 MiB without reading it', async () => {
      const at = await service(files.url);
      const r = round(0);
      await withFileReplaced(r, oversized, () => expectRefused(at, proofPath(r), r.uri, TOO_LARGE));
      await expectServed(at, r);
    });

    it('refuses an answer without a length once more than 64 MiB of it arrived', async () => {
      const at = await service(chunkedFiles.url);
      const r = round(0);
      await withFileReplaced(r, oversized, () => expectRefused(at, proofPath(r), r.uri, TOO_LARGE));
      await expectServed(at, r);
    });

    it('refuses a compressed answer inflating to more than 64 MiB, and reads one that does not', async () => {
      const at = await service(files.url);
      const r = round(0);
      // ~65 KB on the wire
      const bomb = gzipSync(Buffer.alloc(MAX_DISTRIBUTION_BYTES + 1, ' '));
      await withFileReplaced(
        r,
        (file) => writeFileSync(`${file}.gz`, bomb),
        () => expectRefused(at, proofPath(r), r.uri, TOO_LARGE),
      );
      await withFileReplaced(
        r,
        (file) => writeFileSync(`${file}.gz`, gzipSync(original(r))),
        () => expectServed(at, r),
      );
    });

    it('names a fault that may clear (down, slow, failing) as one, keeps none of them, and serves the proof once the server is back', async () => {
      // refusals are kept as in production: these faults must not be
      const at = await service(proxy.url, { timeoutMs: HANG_TIMEOUT_MS, refusalTtlMs: undefined });
      const r = round(0);
      proxy.set({ kind: 'down' });
      await expectUnavailable(at, proofPath(r), r.uri, 'could not be fetched from the distribution server');
      proxy.set({ kind: 'hang' });
      await expectUnavailable(at, proofPath(r), r.uri, `did not arrive within ${HANG_TIMEOUT_MS} ms`);
      proxy.set({ kind: 'answer', status: 503, body: UPSTREAM_SECRET, contentType: 'text/plain' });
      await expectUnavailable(
        at,
        proofPath(r),
        r.uri,
        'could not be fetched: the distribution server answered HTTP 503',
      );
      proxy.set({ kind: 'pass' });
      await expectServed(at, r);
    }, 120_000);

    it('refuses an answer that is no distribution, naming the rule and not the answer', async () => {
      const at = await service(proxy.url);
      const r = round(0);
      proxy.set({ kind: 'answer', status: 200, body: `{"format":"${UPSTREAM_SECRET}"}` });
      await expectRefused(
        at,
        proofPath(r),
        r.uri,
        'is not a StandardMerkleTree dump: its format is not "standard-v1"',
      );
      proxy.set({
        kind: 'answer',
        status: 200,
        body: `<html>${UPSTREAM_SECRET}</html>`,
        contentType: 'text/html',
      });
      await expectRefused(at, proofPath(r), r.uri, 'is not a StandardMerkleTree dump: it is not JSON');
      proxy.set({ kind: 'pass' });
      await expectServed(at, r);
    });

    it("refuses a valid tree whose root is not the round's, naming both roots", async () => {
      const at = await service(proxy.url);
      const [r, other] = [round(0), round(1)];
      proxy.set({ kind: 'answer', status: 200, body: original(other).toString() });
      const response = await get(at, proofPath(r));
      const body = expectProblem(response, 503, 'upstream-unavailable');
      expect(body.detail).toBe(
        refusal(
          r.uri,
          `has Merkle root ${other.merkleRoot.toLowerCase()}, but the root posted on-chain for its round is ${r.merkleRoot.toLowerCase()}`,
        ),
      );
      expect(response.text).not.toContain('"proof"');
      proxy.set({ kind: 'pass' });
      await expectServed(at, r);
    });

    it('reads at most two distributions at once, the others waiting their turn', async () => {
      const slowFiles = await startStaticFiles(dir, { delayMs: 1_000 });
      started.push(slowFiles);
      const at = await service(slowFiles.url);
      const rounds = stack.devnet.ledger.rounds.slice(0, 6);
      expect(rounds).toHaveLength(6);
      await Promise.all(rounds.map((r) => expectServed(at, r)));
      expect(slowFiles.peakUnanswered()).toBe(2);
    });

    it('keeps a refusal for its time without fetching the file again', async () => {
      const at = await service(files.url, { refusalTtlMs: 600_000 });
      const r = round(0);
      const fetched = files.requestsFor(`/${r.uri}`);
      await withFileReplaced(
        r,
        () => {},
        () => expectRefused(at, proofPath(r), r.uri, 'does not exist (HTTP 404)'),
      );
      expect(files.requestsFor(`/${r.uri}`)).toBe(fetched + 1);
      // the file is back, but the refusal stands until its time is up
      await expectRefused(at, proofPath(r), r.uri, 'does not exist (HTTP 404)');
      expect(files.requestsFor(`/${r.uri}`)).toBe(fetched + 1);
    });

    it("fetches a refused file again once the refusal's time is up, and serves its proof", async () => {
      const refusalTtlMs = 500;
      const at = await service(files.url, { refusalTtlMs });
      const r = round(1);
      await withFileReplaced(
        r,
        () => {},
        () => expectRefused(at, proofPath(r), r.uri, 'does not exist (HTTP 404)'),
      );
      await sleep(refusalTtlMs + 100);
      await expectServed(at, r);
    });
  });
});

describe('rounds whose distribution disagrees with what the chain says', () => {
  const ALICE = '0x00000000000000000000000000000000000a11ce';
  const BOB = '0x0000000000000000000000000000000000000b0b';
  const distributorAbi = parseAbi([
    'function deposit(address fund, uint256 amount)',
    'function postRound(address fund, uint64 epoch, bytes32 merkleRoot, uint256 total, uint32 leafCount, string uri)',
  ]);
  const usdcAbi = parseAbi([
    'function mint(address to, uint256 amount)',
    'function approve(address spender, uint256 amount)',
  ]);

  let devnet: PrivateDevnet;
  let indexer: Indexer;
  let dataDir: string;
  let gateway: Gateway;
  let service: { url: string; close(): Promise<void> };
  let at: string;
  let deployment: Deployment;
  const fund = () => deployment.funds[0]!;

  /** the rounds the suite posted, by what is wrong with them */
  const rounds = new Map<string, { epoch: number; uri: string }>();

  /** Sends a transaction from any account (anvil impersonates) and mines it. */
  async function send(from: Address, to: Address, data: Hex): Promise<void> {
    const rpc = createRpcClient(devnet.rpcUrl);
    const hash = await rpc.request<Hex>('eth_sendTransaction', [{ from, to, data, gas: '0x1e8480' }]);
    await rpc.request('evm_mine', []);
    const receipt = await rpc.request<{ status: string }>('eth_getTransactionReceipt', [hash]);
    if (receipt.status !== '0x1') throw new Error(`transaction ${hash} reverted`);
  }

  /** Writes the tree of `leaves` at `uri` and posts it with what the chain is told of it. */
  async function post(
    name: string,
    epoch: number,
    leaves: [string, string][],
    told: { total?: bigint; leafCount?: number; uri?: string } = {},
  ): Promise<void> {
    const tree = StandardMerkleTree.of(leaves, ['address', 'uint256']);
    const uri = told.uri ?? `distributions/${fund().slug}/${epoch}.json`;
    if (told.uri === undefined) {
      mkdirSync(dirname(join(dataDir, uri)), { recursive: true });
      writeFileSync(join(dataDir, uri), JSON.stringify(tree.dump()));
    }
    const total = told.total ?? leaves.reduce((sum, [, amount]) => sum + BigInt(amount), 0n);
    await send(
      fund().multisig,
      deployment.contracts.dividendDistributor,
      encodeFunctionData({
        abi: distributorAbi,
        functionName: 'postRound',
        args: [fund().vault, BigInt(epoch), tree.root as Hex, total, told.leafCount ?? leaves.length, uri],
      }),
    );
    rounds.set(name, { epoch, uri });
  }

  beforeAll(async () => {
    devnet = await startPrivateDevnet();
    deployment = devnet.deployment;
    dataDir = mkdtempSync(join(tmpdir(), 'distribution-checks-'));
    const depositor = deployment.accounts.deployer;
    const funds = 1_000_000n;
    const usdc = deployment.contracts.baseAsset;
    await send(
      depositor,
      usdc,
      encodeFunctionData({ abi: usdcAbi, functionName: 'mint', args: [depositor, funds] }),
    );
    await send(
      depositor,
      usdc,
      encodeFunctionData({
        abi: usdcAbi,
        functionName: 'approve',
        args: [deployment.contracts.dividendDistributor, funds],
      }),
    );
    await send(
      depositor,
      deployment.contracts.dividendDistributor,
      encodeFunctionData({ abi: distributorAbi, functionName: 'deposit', args: [fund().vault, funds] }),
    );
    const pair: [string, string][] = [
      [ALICE, '100'],
      [BOB, '200'],
    ];
    await post('agrees', 1, pair);
    await post('sum over total', 2, pair, { total: 250n });
    await post('fewer leaves than leafCount', 3, pair, { leafCount: 3 });
    await post('one address twice', 4, [
      [ALICE, '100'],
      [ALICE.toUpperCase().replace('0X', '0x'), '200'],
    ]);
    await post('ipfs uri', 5, pair, {
      uri: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/5.json',
    });
    await post('parent uri', 6, pair, { uri: '../5.json' });
    await post('absolute uri', 7, pair, { uri: '/etc/hostname' });
    indexer = await createIndexer({
      rpcUrl: devnet.rpcUrl,
      network: 'devnet',
      dataDir,
      port: 0,
      pollIntervalMs: 50,
      log: () => {},
    });
    await indexer.start();
    const head = await createRpcClient(devnet.rpcUrl).request<Hex>('eth_blockNumber', []);
    await indexer.waitForBlock(Number(head));
    gateway = gatewayOver(dataDir);
    service = await restService(gateway);
    at = service.url;
  }, 300_000);

  afterAll(async () => {
    await service?.close();
    await indexer?.stop();
    await devnet?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** a gateway over the private devnet reading distributions at `base` */
  function gatewayOver(base: string): Gateway {
    return createGateway({
      registry: loadRegistry(REGISTRY_FILE),
      subgraph: { url: indexer.queryUrl, timeoutMs: 10_000, maxBatch: 1000 },
      chain: { rpcUrl: devnet.rpcUrl, timeoutMs: 10_000, maxBatch: 200 },
      distributions: { base, timeoutMs: TIMEOUT_MS, cacheSize: 16 },
      logError: () => {},
    });
  }

  const posted = (name: string) => {
    const found = rounds.get(name);
    if (!found) throw new Error(`round "${name}" was not posted`);
    return found;
  };
  const proofPath = (name: string, account = ALICE) =>
    `/v1/funds/${fund().slug}/dividends/${posted(name).epoch}/proof?address=${account}`;

  it('serves the proof of a distribution that agrees with its round', async () => {
    const response = await get(at, proofPath('agrees', BOB));
    expect(response.status, response.text.slice(0, 300)).toBe(200);
    const { data } = JSON.parse(response.text) as {
      data: { account: string; amountRaw: string; proof: string[] };
    };
    expect(data.account.toLowerCase()).toBe(BOB);
    expect(data.amountRaw).toBe('200');
    expect(data.proof).toHaveLength(1);
  });

  it("refuses a distribution whose leaves sum to more than the round's total", async () => {
    await expectRefused(
      at,
      proofPath('sum over total'),
      posted('sum over total').uri,
      "has leaves summing to 300 base units, but its round's on-chain total is 250",
    );
  });

  it("refuses a distribution with another number of leaves than the round's leafCount", async () => {
    await expectRefused(
      at,
      proofPath('fewer leaves than leafCount'),
      posted('fewer leaves than leafCount').uri,
      "has 2 leaves, but its round's on-chain leafCount is 3",
    );
  });

  it('refuses a distribution with two leaves for one address written in two cases, on both surfaces', async () => {
    const { uri, epoch } = posted('one address twice');
    const reason = `has two leaves for address ${ALICE} (values 0 and 1); each address may have one`;
    await expectRefused(at, proofPath('one address twice'), uri, reason);
    const { errors } = await graphql(
      gateway,
      `{ fund(slug: "${fund().slug}") { dividend(epoch: ${epoch}) { proof(address: "${ALICE}") { amountRaw } } } }`,
    );
    expect(errors?.map(({ message, extensions }) => ({ message, code: extensions?.code }))).toEqual([
      { message: refusal(uri, reason), code: 'UPSTREAM_UNAVAILABLE' },
    ]);
  });

  it('refuses uris a distribution directory does not read: another scheme, ../, an absolute path', async () => {
    await expectRefused(
      at,
      proofPath('ipfs uri'),
      posted('ipfs uri').uri,
      'uses the ipfs: scheme; a distribution directory is read by relative paths only',
    );
    await expectRefused(at, proofPath('parent uri'), '../5.json', 'leaves the distribution directory');
    await expectRefused(at, proofPath('absolute uri'), '/etc/hostname', 'leaves the distribution directory');
  });

  it('refuses an ipfs: uri with a distribution server as the base', async () => {
    const files = await startStaticFiles(dataDir);
    started.push(files);
    const overHttp = await serve(gatewayOver(files.url));
    await expectRefused(
      overHttp,
      proofPath('ipfs uri'),
      posted('ipfs uri').uri,
      'uses the ipfs: scheme; the service fetches http(s) URLs only',
    );
    // the same files are served over HTTP as from the directory
    expect((await get(overHttp, proofPath('agrees'))).status).toBe(200);
  });
});
