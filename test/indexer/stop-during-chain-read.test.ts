// A stop while a handler's ethereum.call waits for the node: `npm run indexer` (the bundle, as a child
// process, sent a real SIGTERM) indexes the host-probe subgraph through a node that takes eth_call
// requests and never answers them. The stop must not wait for the read's own timeout (Docker kills a
// container 10 s after its SIGTERM): it exits 0 with its stop line, having said nothing about the
// read, and leaves the store at its last commit, without the block whose handler was cut short. The
// next start runs that block again, and the store ends as an uninterrupted run's does. A node that
// answers eth_call only after the indexer's blocking wait (READ_WAIT_MS) gives up on it has each
// call's block run again once it has answered: asked once, and the store as an uninterrupted run's.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_WAIT_MS } from '../../indexer/follower/chain-reader.ts';
import { copyIndexerBundle, indexedBlockOrNone, tempDirs } from './child-indexer.ts';
import { buildProbeSubgraph } from './probe-build.ts';
import { startProbeChain, type ProbeChain } from './probe-chain.ts';
import { dumpEntityVersions } from './store-dump.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
/**
 * How long the stop may take: half the chain reader's timeout (10 s), after which the read would
 * have failed on its own and let a stop that waited for it go on.
 */
const STOP_BOUND_MS = 5_000;

/**
 * A node in front of `target` that forwards every request, but takes those holding an eth_call (a
 * batch holding one too) and answers them `callsAnswered` ms later, or never.
 */
interface SlowOnCalls {
  url: string;
  /** resolves once an eth_call request has come */
  callCame: Promise<void>;
  /** the bodies of the eth_call requests that came */
  calls: string[];
  close(): Promise<void>;
}

async function startSlowOnCalls(target: string, callsAnswered: number | 'never'): Promise<SlowOnCalls> {
  let callCame!: () => void;
  const came = new Promise<void>((r) => (callCame = r));
  const calls: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const call = body.includes('"eth_call"');
      if (call) {
        calls.push(body.toString());
        callCame();
      }
      const wait = call ? callsAnswered : 0;
      if (wait === 'never') return;
      sleep(wait)
        .then(() => fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
        .then(async (answer) => {
          const text = Buffer.from(await answer.arrayBuffer());
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
        })
        .catch(() => req.socket.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    callCame: came,
    calls,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

let chain: ProbeChain;
/** a tree holding a copy of the bundle, with the probe build as its subgraph/build and the probe chain's networks.json */
let root: string;
/** the block whose handler calls the ProbeEmitter, and the chain head */
let callBlock: number;
let head: number;
const dirs = tempDirs();
const children = new Set<ChildProcess>();
const nodes: SlowOnCalls[] = [];

async function slowOnCalls(callsAnswered: number | 'never'): Promise<SlowOnCalls> {
  const node = await startSlowOnCalls(chain.anvil.rpcUrl, callsAnswered);
  nodes.push(node);
  return node;
}

/** The entity versions of an uninterrupted run from anvil itself, made once. */
let uninterrupted: ReturnType<typeof dumpEntityVersions> | undefined;
async function uninterruptedRun(): Promise<ReturnType<typeof dumpEntityVersions>> {
  if (!uninterrupted) {
    const dataDir = dirs.make('stop-chain-read-clean-');
    await indexToHead(chain.anvil.rpcUrl, dataDir);
    uninterrupted = dumpEntityVersions(storeOf(dataDir));
  }
  return uninterrupted;
}

beforeAll(async () => {
  chain = await startProbeChain();
  await chain.probe(0, '1|2');
  callBlock = await chain.probe(29, '-3|first');
  head = await chain.probe(0, '3|4');
  root = dirs.make('stop-chain-read-');
  copyIndexerBundle(root);
  mkdirSync(join(root, 'subgraph'));
  symlinkSync(buildProbeSubgraph(), join(root, 'subgraph', 'build'));
  writeFileSync(join(root, 'subgraph', 'networks.json'), JSON.stringify({ devnet: chain.contracts }));
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
}, 180_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const node of nodes) await node.close();
  await chain?.stop();
  dirs.removeAll();
});

interface Run {
  child: ChildProcess;
  stdout: string[];
  /** resolves with the exit code (null if a signal ended it) */
  exit: Promise<number | null>;
  /** resolves with the query URL once the indexer serves */
  url: Promise<string>;
}

/** `npm run indexer` of the probe subgraph from `rpcUrl` into `dataDir`, one block a range, each committed. */
function startIndexer(rpcUrl: string, dataDir: string): Run {
  const child = spawn(process.execPath, [join(root, 'build', 'indexer-main.mjs')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      RPC_URL: rpcUrl,
      NETWORK: 'devnet',
      DATA_DIR: dataDir,
      PORT: '0',
      INDEXER_MAX_BLOCK_RANGE: '1',
      INDEXER_COMMIT_INTERVAL_MS: '0',
      INDEXER_POLL_INTERVAL_MS: '50',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  const stdout: string[] = [];
  let served: (url: string) => void;
  const url = new Promise<string>((resolveUrl, reject) => {
    served = resolveUrl;
    child.once('exit', (code) => reject(new Error(`the indexer exited with ${code} before serving`)));
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    stdout.push(line);
    const m = /^query endpoint: (\S+)/.exec(line);
    if (m) served(m[1]!);
  });
  const exit = new Promise<number | null>((r) =>
    child.once('exit', (code) => {
      children.delete(child);
      // let readline hand over the last lines
      setImmediate(() => r(code));
    }),
  );
  return { child, stdout, exit, url };
}

/** Indexes up to the head, stops with SIGTERM, and returns what the run printed. */
async function indexToHead(rpcUrl: string, dataDir: string): Promise<string[]> {
  const run = startIndexer(rpcUrl, dataDir);
  const url = await run.url;
  while ((await indexedBlockOrNone(url)) < head) await sleep(50);
  run.child.kill('SIGTERM');
  expect(await run.exit).toBe(0);
  return run.stdout;
}

function storeOf(dataDir: string): string {
  const [store] = readdirSync(join(dataDir, 'indexer')).filter((f) => f.endsWith('.sqlite'));
  return join(dataDir, 'indexer', store!);
}

describe('npm run indexer and a chain read the node is slow to answer', () => {
  it('exits 0 at once with its stop line when stopped during the read, and the next start ends where an uninterrupted run does', async () => {
    const node = await slowOnCalls('never');
    const dataDir = dirs.make('stop-chain-read-data-');
    const stopped = startIndexer(node.url, dataDir);
    await Promise.all([stopped.url, node.callCame]);
    const printedBefore = stopped.stdout.length;
    stopped.child.kill('SIGTERM');
    const outcome = await Promise.race([stopped.exit, sleep(STOP_BOUND_MS, 'still running')]);
    expect(outcome).toBe(0);
    expect(stopped.stdout.slice(printedBefore)).toEqual([
      `indexer: stopped (SIGTERM) at block ${callBlock - 1}`,
    ]);
    // nothing of the block whose handler was cut short, nor after it
    const versions = Object.values(dumpEntityVersions(storeOf(dataDir))).flat();
    expect(versions.filter((v) => Number(v.__from) >= callBlock)).toEqual([]);
    expect(versions.filter((v) => Number(v.__from) === callBlock - 1)).not.toEqual([]);

    const resumed = await indexToHead(chain.anvil.rpcUrl, dataDir);
    expect(resumed).toContain(
      `indexer: resuming after block ${callBlock - 1}, the last one in the store (${storeOf(dataDir)})`,
    );
    expect(dumpEntityVersions(storeOf(dataDir))).toEqual(await uninterruptedRun());
  }, 120_000);

  it('runs the block again once a read answered after the blocking wait has its answer, asking the node once', async () => {
    const node = await slowOnCalls(READ_WAIT_MS + 500);
    const dataDir = dirs.make('stop-chain-read-slow-');
    const printed = await indexToHead(node.url, dataDir);
    expect(printed.filter((line) => line.includes('eth_call'))).toEqual([]);
    // probe kind 29 reads four functions of the ProbeEmitter
    expect(node.calls).toHaveLength(4);
    expect(new Set(node.calls).size).toBe(4);
    expect(dumpEntityVersions(storeOf(dataDir))).toEqual(await uninterruptedRun());
  }, 120_000);
});
