// Faults of the dividend distribution files behind GET /v1/funds/{slug}/dividends/{epoch}/proof,
// made with real things: a copy of the harness's distribution directory whose files the tests
// replace (by huge sparse files, named pipes, directories, symbolic links, malformed dumps), and a
// file server on loopback over it (with a fault proxy in front, and one answering chunked). Each
// refusal must say what is wrong in the service's own words, a lasting one must say that retrying
// will not help and be kept for its time without reading the file again, and the proof must be
// served once the file is fixed. Files that disagree with their rounds on-chain are
// distribution-verification.test.ts's.
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
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerRound } from '../../devnet/ledger.ts';
import type { Gateway } from '../../gateway/server.ts';
import { MAX_DISTRIBUTION_BYTES, type DistributionsConfig } from '../../gateway/sources/distributions.ts';
import { indexedStack, testGateway, type IndexedStack } from '../harness/stack.ts';
import { expectNoLeak, expectProblem, get } from './problems.ts';
import { closedAfterEachTest } from './public-rest-service.ts';
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

const afterTest = closedAfterEachTest();
const serve = (gateway: Gateway) => afterTest.serve(gateway);

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

    it("names the dividend distribution as the upstream of /graphql's error while its server is down", async () => {
      const at = await service(proxy.url);
      const r = round(0);
      proxy.set({ kind: 'down' });
      const response = await fetch(`${at}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: `{ fund(slug: "${r.fund}") { dividend(epoch: ${r.epoch}) { proof(address: "${dumpOf(r).values[0]!.value[0]}") { amountRaw } } } }`,
        }),
      });
      const answer = (await response.json()) as {
        errors: { message: string; path: unknown; extensions: unknown }[];
      };
      expect(answer.errors.map(({ message, path, extensions }) => ({ message, path, extensions }))).toEqual([
        {
          message: unavailability(r.uri, 'could not be fetched from the distribution server'),
          path: ['fund', 'dividend', 'proof'],
          extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: 'dividend distribution' },
        },
      ]);
    });

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
      afterTest.track(slowFiles);
      const at = await service(slowFiles.url);
      const rounds = stack.devnet.ledger.rounds.slice(0, 6);
      expect(rounds).toHaveLength(6);
      await Promise.all(rounds.map((r) => expectServed(at, r)));
      expect(slowFiles.peakUnanswered()).toBe(2);
    });

    it('answers a request whose file waits its turn past the timeout 503, keeps the file in line, and serves the retry without reading it again', async () => {
      const slowFiles = await startStaticFiles(dir, { delayMs: 1_000 });
      afterTest.track(slowFiles);
      // the third pair of files cannot start before two reads of a second each have ended
      const at = await service(slowFiles.url, { timeoutMs: 1_500 });
      const rounds = stack.devnet.ledger.rounds.slice(0, 6);
      const first = await Promise.all(rounds.map((r) => get(at, proofPath(r))));
      const waited = rounds.filter((_, i) => first[i]!.status !== 200);
      expect(waited.length).toBeGreaterThanOrEqual(2);
      for (const r of waited) {
        const body = expectProblem(first[rounds.indexOf(r)]!, 503, 'upstream-unavailable');
        expect(body.detail).toBe(
          unavailability(
            r.uri,
            'is still waiting its turn to be read and checked (the service checks 2 files at once) and keeps its place in line, so a retry soon finds it ready or nearer',
          ),
        );
      }
      for (const r of waited) await expectServed(at, r);
      expect(rounds.map((r) => slowFiles.requestsFor(`/${r.uri}`))).toEqual(rounds.map(() => 1));
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
