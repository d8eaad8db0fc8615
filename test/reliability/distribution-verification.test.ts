// Checking dividend distribution files against their rounds, on a private devnet whose rounds the
// suite posts with files it writes: a file whose sum, leaf count or addresses disagree with its
// round is refused naming the check, and a uri a directory does not read is refused. The checks
// run on a thread of their own: while a large file is checked the service answers other requests,
// a thread out of memory or out of time is a 503 and is stopped, the next file is checked on a
// fresh one, and the proofs served from what the thread checked are StandardMerkleTree's own.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { encodeFunctionData, getAddress, parseAbi, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import { createRpcClient } from '../../devnet/rpc.ts';
import { createGateway, type Gateway } from '../../gateway/server.ts';
import type { DistributionsConfig } from '../../gateway/sources/distributions.ts';
import { loadRegistry } from '../../gateway/sources/registry.ts';
import { createIndexer, type Indexer } from '../../indexer/indexer.ts';
import { graphql, REGISTRY_FILE } from '../harness/stack.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { expectProblem, get } from './problems.ts';
import { closedAfterEachTest, publicRestService } from './public-rest-service.ts';
import { startStaticFiles } from './servers/static-files.ts';

const TIMEOUT_MS = 20_000;
const ALICE = '0x00000000000000000000000000000000000a11ce';
const BOB = '0x0000000000000000000000000000000000000b0b';
/** an address whose letters have their checksum's case swapped: a wrong EIP-55 checksum */
const WRONG_CHECKSUM = `0x${[...getAddress(`0x${'cd'.repeat(20)}`).slice(2)]
  .map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()))
  .join('')}`;

/**
 * The leaves of the large round: a file of ~9.4 MB whose check takes seconds of a core (on the
 * main thread, it stopped the service for all of them) and more than a 16 MiB heap.
 */
const LARGE_LEAVES = 40_000;

/** A heap big enough for a verifier thread to start and check a small file (~10 MiB), not the large one. */
const SMALL_HEAP_MB = 16;

type Leaf = [string, string];

/** The detail of a lasting refusal of the file at `uri`. */
const refusal = (uri: string, reason: string) =>
  `The dividend distribution is refused: "${uri}" ${reason}. This lasts until the service's operator fixes it; retrying will not help.`;

async function expectRefused(at: string, path: string, uri: string, reason: string): Promise<void> {
  const response = await get(at, path);
  const body = expectProblem(response, 503, 'upstream-unavailable');
  expect(body.detail).toBe(refusal(uri, reason));
  expect(response.headers.get('retry-after')).toBeNull();
}

const afterTest = closedAfterEachTest();
const serve = (gateway: Gateway) => afterTest.serve(gateway);

/**
 * A file server answering every request with `body`, then closing its side of the connection. A
 * client closes its own side once it has read all of it, so `read()` resolves once the service has
 * the file's last byte. (Node's HTTP server would close the connection as soon as its answer was
 * written, whoever read it.)
 */
async function startClosingFileServer(body: Buffer): Promise<{ url: string; read(): Promise<void> }> {
  let read!: () => void;
  const wasRead = new Promise<void>((resolve) => (read = resolve));
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    socket.once('data', () => {
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`,
      );
      socket.end(body);
    });
    socket.once('end', () => {
      read();
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterTest.track({ close: () => new Promise((resolve) => server.close(() => resolve())) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, read: () => wasRead };
}

/** The threads of this process, which runs the service: a verifier thread is one of them while it lives. */
function threadCount(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  return Number(/^Threads:\s+(\d+)$/m.exec(status)?.[1]);
}

describe('distributions checked against the rounds posted on-chain', () => {
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
  let sharedService: { url: string; close(): Promise<void> };
  let at: string;
  let deployment: Deployment;
  const fund = () => deployment.funds[0]!;

  /** the rounds the suite posted, by what is wrong or special with them, with their trees */
  const rounds = new Map<
    string,
    { epoch: number; uri: string; total: bigint; tree: StandardMerkleTree<Leaf> }
  >();

  /** Sends a transaction from any account (anvil impersonates) and mines it. */
  async function send(from: Address, to: Address, data: Hex): Promise<void> {
    const rpc = createRpcClient(devnet.rpcUrl);
    const hash = await rpc.request<Hex>('eth_sendTransaction', [{ from, to, data, gas: '0x1e8480' }]);
    await rpc.request('evm_mine', []);
    const receipt = await rpc.request<{ status: string }>('eth_getTransactionReceipt', [hash]);
    if (receipt.status !== '0x1') throw new Error(`transaction ${hash} reverted`);
  }

  /**
   * Writes the tree of `leaves` at `uri` (its dump changed by `edit`) and posts it with what the
   * chain is told of it.
   */
  async function post(
    name: string,
    epoch: number,
    leaves: Leaf[],
    told: { total?: bigint; leafCount?: number; uri?: string; edit?: (tree: string[]) => void } = {},
  ): Promise<void> {
    const tree = StandardMerkleTree.of(leaves, ['address', 'uint256']);
    const uri = told.uri ?? `distributions/${fund().slug}/${epoch}.json`;
    if (told.uri === undefined) {
      const dump = tree.dump();
      told.edit?.(dump.tree);
      mkdirSync(dirname(join(dataDir, uri)), { recursive: true });
      writeFileSync(join(dataDir, uri), JSON.stringify(dump));
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
    rounds.set(name, { epoch, uri, total, tree });
  }

  beforeAll(async () => {
    devnet = await startPrivateDevnet();
    deployment = devnet.deployment;
    dataDir = mkdtempSync(join(tmpdir(), 'distribution-checks-'));
    const depositor = deployment.accounts.deployer;
    const funds = 10n ** 31n;
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
    const pair: Leaf[] = [
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
    await post(
      'large',
      8,
      Array.from(
        { length: LARGE_LEAVES },
        (_, i): Leaf => [`0x${(i + 1).toString(16).padStart(40, '0')}`, `${i + 1}`],
      ),
    );
    // leaves written in the ways abi-encoding takes (a checksummed address; amounts in hex, with
    // leading zeros, as a JSON number, zero, past 2^64), and a node in capitals, which the tree's
    // check takes too since it compares nodes as numbers
    await post(
      'every form',
      9,
      [
        [getAddress(`0x${'ab'.repeat(20)}`), '1000000'],
        [`0x${'cd'.repeat(20)}`, '0x1f'],
        [`0x${'ef'.repeat(20)}`, '000123'],
        [`0x${'01'.repeat(20)}`, 42 as unknown as string],
        [`0x${'02'.repeat(20)}`, '0'],
        [`0x${'03'.repeat(20)}`, `${10n ** 30n}`],
      ],
      { edit: (tree) => (tree[1] = `0x${tree[1]!.slice(2).toUpperCase()}`) },
    );
    // addresses in capitals and with a wrong checksum: valid leaves (they hash as their lowercase),
    // which viem refuses as they are
    await post('capital addresses', 10, [
      [`0x${'AB'.repeat(20)}`, '7'],
      [WRONG_CHECKSUM, '8'],
    ]);
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
    sharedService = await publicRestService(gateway);
    at = sharedService.url;
  }, 300_000);

  afterAll(async () => {
    await sharedService?.close();
    await indexer?.stop();
    await devnet?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** a gateway over the private devnet reading distributions at `base`; no chain unless asked */
  function gatewayOver(base: string, options: Partial<DistributionsConfig> = {}, chain = true): Gateway {
    return createGateway({
      registry: loadRegistry(REGISTRY_FILE),
      subgraph: { url: indexer.queryUrl, timeoutMs: 10_000, maxBatch: 1000 },
      chain: chain ? { rpcUrl: devnet.rpcUrl, timeoutMs: 10_000, maxBatch: 200 } : undefined,
      distributions: { base, timeoutMs: TIMEOUT_MS, cacheSize: 16, ...options },
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

  interface Proof {
    account: string;
    amountRaw: string;
    merkleRoot: string;
    leaf: string;
    proof: string[];
  }

  /** The proof the service at `base` serves for leaf `i` of round `name`. */
  async function servedProof(base: string, name: string, i: number): Promise<Proof> {
    const [account] = posted(name).tree.at(i)!;
    const path = proofPath(name, account.toLowerCase());
    // A proof waits seconds for a large file's check, while fetch keeps the connection of an earlier
    // request idle; on a loaded machine it may reuse it just as the service's 5 s keep-alive closes
    // it (ECONNRESET before any answer). A client's race, not the service's answer: asked again once.
    const response = await get(base, path).catch((error: unknown) => {
      if ((error as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw error;
      return get(base, path);
    });
    expect(response.status, response.text.slice(0, 300)).toBe(200);
    const {
      account: served,
      amountRaw,
      merkleRoot,
      leaf,
      proof,
    } = (JSON.parse(response.text) as { data: Proof }).data;
    return { account: served, amountRaw, merkleRoot, leaf, proof };
  }

  /** the trees StandardMerkleTree loads from the files the service reads, by round */
  const loaded = new Map<string, StandardMerkleTree<Leaf>>();

  /** What StandardMerkleTree computes for leaf `i` of round `name`, from the file the service reads. */
  function expectedProof(name: string, i: number): Proof {
    let tree = loaded.get(name);
    if (!tree) {
      const file = readFileSync(join(dataDir, posted(name).uri), 'utf8');
      tree = StandardMerkleTree.load<Leaf>(JSON.parse(file) as ReturnType<StandardMerkleTree<Leaf>['dump']>);
      loaded.set(name, tree);
    }
    const value = tree.at(i)!;
    return {
      account: value[0],
      amountRaw: BigInt(value[1]).toString(),
      merkleRoot: tree.root,
      leaf: tree.leafHash(value),
      proof: tree.getProof(i),
    };
  }

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
    afterTest.track(files);
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

  it('serves every leaf of a file written in every form a dump takes with the proof StandardMerkleTree computes', async () => {
    const { tree } = posted('every form');
    for (let i = 0; i < tree.length; i++) {
      expect(await servedProof(at, 'every form', i)).toEqual(expectedProof('every form', i));
    }
  });

  it('serves a leaf whose address the file writes in capitals or with a wrong checksum, checksummed', async () => {
    for (const [i, written] of [`0x${'AB'.repeat(20)}`, WRONG_CHECKSUM].entries()) {
      const response = await get(at, proofPath('capital addresses', written.toLowerCase()));
      expect(response.status, response.text.slice(0, 300)).toBe(200);
      const { data } = JSON.parse(response.text) as {
        data: Proof & { claimed: boolean; claim: { args: unknown[] } };
      };
      const checksummed = getAddress(written.toLowerCase());
      expect(data.account).toBe(checksummed);
      expect(data.claimed).toBe(false);
      expect(data.claim.args[2]).toMatchObject({ name: 'account', value: checksummed });
      expect(data.proof).toEqual(expectedProof('capital addresses', i).proof);
    }
  });

  it('answers another request while a large distribution is checked, and then its proofs', async () => {
    const { uri } = posted('large');
    const files = await startClosingFileServer(readFileSync(join(dataDir, uri)));
    // without a chain nothing is asked upstream between a file's check and its proof's answer
    const service = await serve(gatewayOver(files.url, {}, false));
    let proofAnswered = false;
    const proof = servedProof(service, 'large', LARGE_LEAVES - 1).finally(() => (proofAnswered = true));
    await files.read();
    // the service holds the whole file: its check is under way, or was done on this thread
    const list = await get(service, `/v1/funds/${fund().slug}/dividends`);
    expect(list.status, list.text.slice(0, 300)).toBe(200);
    expect(proofAnswered).toBe(false);
    expect(await proof).toEqual(expectedProof('large', LARGE_LEAVES - 1));
    for (const i of [0, 1, LARGE_LEAVES >> 1]) {
      expect(await servedProof(service, 'large', i)).toEqual(expectedProof('large', i));
    }
  }, 180_000); // its check takes seconds of a core, many more on a busy machine

  it("refuses a file that needs more than the verifier's heap with a 503, and checks the next file on a fresh thread", async () => {
    const service = await serve(gatewayOver(dataDir, { verifierHeapMb: SMALL_HEAP_MB }));
    await expectRefused(
      service,
      proofPath('large'),
      posted('large').uri,
      `needs more than ${SMALL_HEAP_MB} MiB of memory to be checked, the most the service gives one distribution`,
    );
    expect(await servedProof(service, 'agrees', 0)).toEqual(expectedProof('agrees', 0));
  });

  it('answers a check that takes longer than its limit with a 503 to retry, its thread stopped', async () => {
    const timeoutMs = 100;
    const service = await serve(gatewayOver(dataDir, { verificationTimeoutMs: timeoutMs }));
    const threads = threadCount();
    const response = await get(service, proofPath('large'));
    const body = expectProblem(response, 503, 'upstream-unavailable');
    expect(body.detail).toBe(
      `The dividend distribution is unavailable: "${posted('large').uri}" could not be checked within ${timeoutMs} ms; retry later.`,
    );
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(threadCount()).toBe(threads);
  });

  it('leaves no process behind once a file is checked: no zombie of a process a verifier thread started', async () => {
    const service = await serve(gatewayOver(dataDir));
    expect(await servedProof(service, 'agrees', 0)).toEqual(expectedProof('agrees', 0));
    const children = await new Promise<string>((done, fail) =>
      execFile('ps', ['-o', 'stat=,comm=', '--ppid', `${process.pid}`], (error, stdout) =>
        // ps exits 1 when the process has no child at all
        error && error.code !== 1 ? fail(error) : done(stdout),
      ),
    );
    const zombies = children.split('\n').filter((line) => line.trim().startsWith('Z'));
    expect(zombies).toEqual([]);
  });

  it('lets a process end while a file is checked: the verifier thread does not keep it alive', async () => {
    const { uri, total, tree } = posted('large');
    const round = { uri, merkleRoot: tree.root, total: `${total}`, leafCount: tree.length };
    const dir = mkdtempSync(join(tmpdir(), 'distribution-exit-'));
    try {
      const script = join(dir, 'check.mts');
      // the process loads the round, waits until the verifier thread has started, then has nothing
      // else to do; it prints "checked" if it lives until the check ends
      writeFileSync(
        script,
        `import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createDistributionSource } from ${JSON.stringify(pathToFileURL(resolve('gateway/sources/distributions.ts')).href)};
const threads = () => Number(/^Threads:\\s+(\\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
await stat('.'); // libuv's threads are started
const before = threads();
const source = createDistributionSource({ base: ${JSON.stringify(dataDir)}, timeoutMs: 20000, cacheSize: 1 });
source.load(${JSON.stringify(round)}).then(() => console.log('checked'));
const waiting = setInterval(() => {
  if (threads() === before) return;
  clearInterval(waiting);
  console.log('checking');
}, 5);
`,
      );
      const ended = await new Promise<{ code: number | null; stdout: string }>((done) => {
        // one that does not end is killed (code null) well before the test's own timeout
        const child = execFile(
          process.execPath,
          ['--import', 'tsx', script],
          { timeout: 40_000 },
          (error, stdout) => done({ code: child.exitCode, stdout }),
        );
      });
      expect(ended).toEqual({ code: 0, stdout: 'checking\n' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
