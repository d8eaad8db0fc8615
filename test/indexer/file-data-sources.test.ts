// File data sources (file/ipfs templates) on a real chain and a real IPFS HTTP server on loopback,
// and file/arweave ones (kind 43 creates an ArweaveFile) over an Arweave gateway on loopback.
// The probe subgraph's kind 39 creates a ProbeFile for a content path (with a command in its
// context); its handler stores the file's text as the FileContent of that path. Each test (or suite
// sharing one indexer, as the reorg's does) indexes from its own first block, so what an earlier
// test left on the chain (failures included) is not indexed again. Files are fetched in the background and run at the end of a range, so the tests
// mine empty blocks until what they wait for is indexed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Indexer, IndexerConfig } from '../../indexer/indexer.ts';
import { queryIndexer } from './graphql-client.ts';
import { startArweaveGateway } from './arweave-gateway.ts';
import { startIpfsNode, type IpfsNode } from './ipfs-node.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

let chain: ProbeChain;
let rpcNode: IpfsNode;

beforeAll(async () => {
  [chain, rpcNode] = await Promise.all([startProbeChain(), startIpfsNode({ api: 'rpc' })]);
}, 180_000);

afterAll(async () => {
  await rpcNode?.close();
  await chain?.stop();
});

/** Short timeouts and retries, so that a file the node cannot serve is tried again soon. */
function ipfsOf(node: IpfsNode): NonNullable<IndexerConfig['files']> {
  return { ipfsUrl: node.url, timeoutMs: 300, minRetryMs: 30, maxRetryMs: 200 };
}

/** The probe subgraph's data sources with the emitter's handlers starting at block `from`. */
function contractsFrom(from: number): IndexerConfig['contracts'] {
  const at = { address: chain.emitter, startBlock: from };
  return { ...chain.contracts, ProbeEmitter: at, ProbeCalls: at };
}

interface Run {
  indexer: Indexer;
  lines: string[];
  stop(): Promise<void>;
}

/** An indexer of the probe subgraph whose emitter handlers start at `from`, reading files from `node`. */
async function indexFrom(from: number, node: IpfsNode = rpcNode, arweaveUrl?: string): Promise<Run> {
  const lines: string[] = [];
  const running = await startProbeIndexer(chain, undefined, {
    contracts: contractsFrom(from),
    log: (line) => lines.push(line),
    files: { ...ipfsOf(node), arweaveUrl },
  });
  return { indexer: running.indexer, lines, stop: running.stop };
}

/** Runs `test` with an indexer from block `from` reading files from the RPC node, stopped afterwards. */
async function whileIndexing(from: number, test: (run: Run) => Promise<void>): Promise<void> {
  const run = await indexFrom(from);
  try {
    await test(run);
  } finally {
    await run.stop();
  }
}

/** Mines empty blocks, each indexed, until `found()` gives something (at most 100). */
async function untilIndexed<T>(indexer: Indexer, found: () => Promise<T | null | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await found();
    if (value !== null && value !== undefined) return value;
    await indexer.waitForBlock((await chain.mine([])).number);
  }
  throw new Error('not indexed after 100 blocks');
}

/** Mines empty blocks until indexing fails; returns the failure the store recorded. */
async function untilFailed(indexer: Indexer): Promise<string> {
  for (let i = 0; i < 100; i++) {
    try {
      await indexer.waitForBlock((await chain.mine([])).number);
    } catch {
      return indexer.status().fatalError ?? 'no fatal error recorded';
    }
  }
  throw new Error('indexing did not fail within 100 blocks');
}

interface FileContent {
  id: string;
  text: string;
  command: string;
  sawOther: boolean | null;
}

async function fileContent(indexer: Indexer, id: string): Promise<FileContent | null> {
  const { fileContent } = await queryIndexer<{ fileContent: FileContent | null }>(
    indexer.queryUrl,
    `{ fileContent(id: "${id}") { id text command sawOther } }`,
  );
  return fileContent;
}

/** The output the chain handler stored for the probe of `kind` with `input`. */
async function probeOutput(indexer: Indexer, kind: number, input: string): Promise<string> {
  const { probeResults } = await queryIndexer<{ probeResults: { output: string }[] }>(
    indexer.queryUrl,
    `{ probeResults(where: { kind: ${kind}, input: "${input}" }) { output } }`,
  );
  expect(probeResults).toHaveLength(1);
  return probeResults[0]!.output;
}

function fileDataSourceRows(indexer: Indexer): { source: string; done_at: bigint | null }[] {
  const db = new Database(indexer.storePath, { readonly: true });
  try {
    return db.prepare(`SELECT "source", "done_at" FROM "__file_data_sources" ORDER BY "region"`).all() as {
      source: string;
      done_at: bigint | null;
    }[];
  } finally {
    db.close();
  }
}

describe('file data sources', () => {
  it("runs the handler with the file's bytes once the file arrives, storing what it writes under the content path", async () => {
    const cid = await rpcNode.add('hello from ipfs');
    const from = await chain.probe(39, cid);
    await whileIndexing(from, async (run) => {
      expect(await untilIndexed(run.indexer, () => fileContent(run.indexer, cid))).toEqual({
        id: cid,
        text: 'hello from ipfs',
        command: '',
        sawOther: null,
      });
    });
  });

  it('reads files from a path gateway as from a kubo RPC API, under the canonical form of any path graph-node accepts', async () => {
    const gateway = await startIpfsNode({ api: 'gateway' });
    const cid = await gateway.add('served by a gateway');
    const from = await chain.probe(39, `ipfs://${cid}`);
    const run = await indexFrom(from, gateway);
    try {
      const file = await untilIndexed(run.indexer, () => fileContent(run.indexer, cid));
      expect(file.text).toBe('served by a gateway');
      expect(gateway.requests).toContainEqual({ method: 'GET', path: `/ipfs/${cid}` });
    } finally {
      await run.stop();
      await gateway.close();
    }
  });

  it('ignores a file data source created with what is not a content path, logging why', async () => {
    const from = await chain.probe(39, 'not-a-cid');
    await whileIndexing(from, async (run) => {
      await run.indexer.waitForBlock(from);
      expect(run.lines).toContainEqual(
        expect.stringContaining(
          "mapping warning: Ignoring file data source ProbeFile created with `not-a-cid`: 'not-a-cid' is not a valid IPFS content path: invalid CID",
        ),
      );
      expect(fileDataSourceRows(run.indexer)).toEqual([]);
    });
  });

  it('does not create a file data source equal to one that exists, as graph-node does not', async () => {
    const cid = await rpcNode.add('created twice');
    const from = await chain.probe(39, cid);
    const again = await chain.probe(39, cid);
    await whileIndexing(from, async (run) => {
      await untilIndexed(run.indexer, () => fileContent(run.indexer, cid));
      expect(fileDataSourceRows(run.indexer).map((r) => r.source)).toEqual([cid]);
      expect(run.lines).toContain(
        `file data source ProbeFile for ${cid} exists already; the one created at block ${again} is ignored`,
      );
    });
  });

  it("runs a file data source created by another's handler in a later pass", async () => {
    const second = await rpcNode.add('the second file');
    const first = await rpcNode.add('the first file');
    const from = await chain.probe(39, `${first} spawn:${second}`);
    await whileIndexing(from, async (run) => {
      const spawned = await untilIndexed(run.indexer, () => fileContent(run.indexer, second));
      expect(spawned.text).toBe('the second file');
      expect((await fileContent(run.indexer, first))?.text).toBe('the first file');
      const rows = fileDataSourceRows(run.indexer);
      expect(rows.map((r) => r.source)).toEqual([first, second]);
      expect(rows[1]!.done_at! > rows[0]!.done_at!).toBe(true);
    });
  });

  it("keeps causality regions apart: chain handlers do not see a file's entity, nor does one file handler another's", async () => {
    const seen = await rpcNode.add('seen by nobody');
    const from = await chain.probe(39, seen);
    await whileIndexing(from, async (run) => {
      await untilIndexed(run.indexer, () => fileContent(run.indexer, seen));
      await chain.probe(41, seen);
      const peeker = await rpcNode.add('the peeker');
      await chain.probe(39, `${peeker} peek:${seen}`);
      const peeked = await untilIndexed(run.indexer, () => fileContent(run.indexer, peeker));
      expect(await probeOutput(run.indexer, 41, seen)).toBe('missing');
      expect(peeked.sawOther).toBe(false);
    });
  });

  it("leaves a file's entities out of a chain handler's derived list, while queries list them", async () => {
    const owned = await rpcNode.add('owned by a chain entity');
    const from = await chain.probe(42, 'owner-1');
    await chain.probe(39, `${owned} owner:owner-1`);
    await whileIndexing(from, async (run) => {
      await untilIndexed(run.indexer, () => fileContent(run.indexer, owned));
      const listed = await chain.probe(42, 'owner-1');
      await run.indexer.waitForBlock(listed);
      const { probeResults } = await queryIndexer<{ probeResults: { output: string }[] }>(
        run.indexer.queryUrl,
        '{ probeResults(where: { kind: 42, input: "owner-1" }, orderBy: sequence) { output } }',
      );
      expect(probeResults.map((r) => r.output)).toEqual(['files:0', 'files:0']);
      const { fileOwner } = await queryIndexer<{ fileOwner: { files: { id: string }[] } }>(
        run.indexer.queryUrl,
        '{ fileOwner(id: "owner-1") { files { id } } }',
      );
      expect(fileOwner.files).toEqual([{ id: owned }]);
    });
  });

  it('fails the subgraph when a chain handler writes an id a file data source holds', async () => {
    const held = await rpcNode.add('held by a file');
    const from = await chain.probe(39, held);
    await whileIndexing(from, async (run) => {
      await untilIndexed(run.indexer, () => fileContent(run.indexer, held));
      await chain.probe(40, held);
      expect(await untilFailed(run.indexer)).toContain(
        `Entity FileContent[${held}] is held by a file data source (causality region 1): an entity belongs to the causality region that created it, and no other may write it`,
      );
    });
  });

  it("fails the subgraph when a file handler touches an entity type its template does not list, with graph-node's hint", async () => {
    const cid = await rpcNode.add('writes what it may not');
    const from = await chain.probe(39, `${cid} undeclared`);
    await whileIndexing(from, async (run) => {
      const failure = await untilFailed(run.indexer);
      expect(failure).toContain(`Handler handleProbeFile of data source ProbeFile failed at block`);
      expect(failure).toContain(`, file ${cid}: `);
      expect(failure).toContain(
        "entity type `ProbeResult` is not on the 'entities' list for data source `ProbeFile`. Hint: Add `ProbeResult` to the 'entities' list, which currently is: `FileContent`.",
      );
    });
  });

  it('fails the subgraph when a file handler creates a chain data source, as graph-node refuses', async () => {
    const cid = await rpcNode.add('creates a contract data source');
    const from = await chain.probe(39, `${cid} onchain`);
    await whileIndexing(from, async (run) => {
      expect(await untilFailed(run.indexer)).toContain(
        'Attempted to create on-chain data source in offchain data source handler. This is not yet supported.',
      );
    });
  });

  it('waits for a file the node cannot serve yet, logging each try, and runs it once it can', async () => {
    const cid = await rpcNode.add('late content');
    rpcNode.hold(cid);
    const from = await chain.probe(39, cid);
    const run = await indexFrom(from);
    try {
      await untilIndexed(run.indexer, async () =>
        run.lines.some((l) => l.startsWith(`ipfs: file ${cid}: try 2 failed:`)) ? true : null,
      );
      expect(await fileContent(run.indexer, cid)).toBeNull();
      expect(run.indexer.status().filesAwaited).toBe(1);
      expect(run.lines).toContainEqual(expect.stringContaining(`IPFS request to '${cid}' timed out`));
      rpcNode.release(cid);
      expect((await untilIndexed(run.indexer, () => fileContent(run.indexer, cid))).text).toBe(
        'late content',
      );
      expect(run.indexer.status().filesAwaited).toBe(0);
    } finally {
      rpcNode.release(cid);
      await run.stop();
    }
  });

  it('keeps the file data sources of a run without an IPFS server and runs them after a restart with one, never fetching a done file again', async () => {
    const cid = await rpcNode.add('kept across restarts');
    const from = await chain.probe(39, cid);
    const dataDir = mkdtempSync(join(tmpdir(), 'file-ds-restart-'));
    const lines: string[] = [];
    const start = async (files: IndexerConfig['files']) =>
      (
        await startProbeIndexer(chain, undefined, {
          dataDir,
          contracts: contractsFrom(from),
          log: (line) => lines.push(line),
          files,
        })
      ).indexer;
    const fetchesOf = () => rpcNode.requests.filter((r) => r.path === `/api/v0/cat?arg=${cid}`).length;
    try {
      const withoutIpfs = await start(undefined);
      await withoutIpfs.waitForBlock((await chain.mine([])).number);
      await withoutIpfs.stop();
      expect(lines).toContain(
        'the subgraph has file data source templates (ProbeFile) but no IPFS server is set (IPFS_URL): their data sources are recorded, and run once the indexer restarts with one',
      );
      expect(fileDataSourceRows(withoutIpfs)).toEqual([{ source: cid, done_at: null }]);

      const withIpfs = await start(ipfsOf(rpcNode));
      expect((await untilIndexed(withIpfs, () => fileContent(withIpfs, cid))).text).toBe(
        'kept across restarts',
      );
      await withIpfs.stop();
      const fetches = fetchesOf();
      expect(fetches).toBe(1);

      const again = await start(ipfsOf(rpcNode));
      await again.waitForBlock((await chain.mine([])).number);
      expect(fetchesOf()).toBe(fetches);
      expect((await fileContent(again, cid))?.text).toBe('kept across restarts');
      await again.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('across a reorg', () => {
    let kept: string;
    let dropped: string;
    let from: number;
    let run: Run;
    /** when the kept branch's file data source was done, before the reorg */
    let doneBefore: bigint;

    // `kept` is created on the kept branch and done (its handler run) on the dropped one, where
    // `dropped` is created; after the reorg, the indexer is on the kept branch with `kept` done again.
    beforeAll(async () => {
      kept = await rpcNode.add('created on the kept branch');
      dropped = await rpcNode.add('created on the dropped branch');
      rpcNode.hold(kept);
      from = await chain.probe(39, kept);
      run = await indexFrom(from);
      await run.indexer.waitForBlock(from);
      const fork = await chain.rpc.request<string>('evm_snapshot', []);
      await chain.probe(39, dropped);
      rpcNode.release(kept);
      await untilIndexed(run.indexer, async () =>
        (await fileContent(run.indexer, kept)) && (await fileContent(run.indexer, dropped)) ? true : null,
      );
      doneBefore = fileDataSourceRows(run.indexer).find((r) => r.source === kept)!.done_at!;

      await chain.rpc.request('evm_revert', [fork]);
      let head = 0;
      for (let i = 0; i < 8; i++) head = (await chain.mine([])).number;
      await run.indexer.waitForBlock(head);
      expect(run.lines).toContainEqual(
        expect.stringMatching(new RegExp(`^reorg: .* reverted to block ${from}$`)),
      );
      await untilIndexed(run.indexer, () => fileContent(run.indexer, kept));
    });

    afterAll(async () => {
      rpcNode.release(kept);
      await run?.stop();
    });

    it('forgets a file data source whose creating block the reorg drops', async () => {
      expect(await fileContent(run.indexer, dropped)).toBeNull();
      expect(fileDataSourceRows(run.indexer).map((r) => r.source)).toEqual([kept]);
    });

    it('runs again a file data source whose handler ran in a dropped block', async () => {
      expect((await fileContent(run.indexer, kept))?.text).toBe('created on the kept branch');
      const row = fileDataSourceRows(run.indexer).find((r) => r.source === kept);
      expect(row?.done_at).not.toBeNull();
      expect(row!.done_at! > BigInt(from)).toBe(true);
      expect(doneBefore > BigInt(from)).toBe(true);
    });
  });

  it('reads the files of file/arweave data sources from an Arweave gateway by transaction id, and waits on one that does not announce its size', async () => {
    const gateway = await startArweaveGateway();
    const id = 'n1RkW2xJ3t0sZ9b1Xq7yC4mE5vA6uI8oP2lK3jH4gF5';
    const unsized = 'Zz9yXx8wVv7uTt6sRr5qPp4oNn3mMl2kKj1iIh0gGf_';
    gateway.add(id, 'stored on the permaweb');
    gateway.add(unsized, 'of unknown size');
    gateway.withoutLength.add(unsized);
    const from = await chain.probe(43, id);
    await chain.probe(43, unsized);
    const run = await indexFrom(from, rpcNode, gateway.url);
    try {
      const file = await untilIndexed(run.indexer, () => fileContent(run.indexer, id));
      expect(file).toEqual({ id, text: 'stored on the permaweb', command: '', sawOther: null });
      await untilIndexed(run.indexer, async () =>
        run.lines.some((l) => l.startsWith(`arweave: file ${unsized}: try 2 failed:`)) ? true : null,
      );
      expect(run.lines).toContainEqual(
        expect.stringContaining(
          `Arweave file '${unsized}' is not available: the gateway did not announce its size (Content-Length)`,
        ),
      );
      expect(await fileContent(run.indexer, unsized)).toBeNull();
      expect(gateway.requests).toContain(id);
    } finally {
      await run.stop();
      await gateway.close();
    }
  });
});
