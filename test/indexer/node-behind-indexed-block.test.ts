// A node whose head is below the last block indexed while its chain is the one indexed (a
// load-balanced provider's node still syncing), on the test's own anvil behind a loopback proxy that
// caps the head the node reports and answers null for the blocks past it. The indexer must not take
// it for a reorg: it waits for the node, the index-node status API reports the node's head, and
// health is failed (a non-deterministic error naming the node's head) while the node is more than
// the reorg threshold behind, healthy again within it. Once the node catches up indexing goes on to
// exactly the store a run over a healthy node builds. A store keeping too little history to hold a
// block at or below the node's head cannot tell such a node from another chain: it waits too, and
// says what to do if the chain was replaced. A wait is logged once, and the node's head asked for at
// the poll interval, not after the growing backoff of a range run again: after a reorg whose node at
// first has only the common ancestor (an anvil snapshot reverted), the new branch is indexed once mined.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { ChainActions } from './chain-actions.ts';
import { devnetIndexers, waitFor } from './devnet-indexers.ts';
import { indexingStatusOf, queryIndexer } from './graphql-client.ts';
import { dumpEntityVersions } from './store-dump.ts';

let devnet: PrivateDevnet;
let actions: ChainActions;
let proxy: FaultProxy;
const indexers = devnetIndexers(() => devnetContracts(devnet.deployment), 'indexer-node-behind-');

/** the reorg threshold the indexer under test runs with */
const REORG_THRESHOLD = 5;

interface RpcCall {
  id: number;
  method: string;
  params: unknown[];
}
interface RpcAnswer {
  id: number;
  result?: unknown;
}

/**
 * The proxy's rewrite for a node at block `cap()` of the chain: eth_blockNumber says no more, and
 * the blocks past it are null.
 */
function nodeAt(cap: () => number) {
  return (json: unknown, request: string): unknown => {
    const calls = [JSON.parse(request) as RpcCall | RpcCall[]].flat();
    const answers = [json as RpcAnswer | RpcAnswer[]].flat().map((answer) => {
      const call = calls.find((c) => c.id === answer.id);
      if (call?.method === 'eth_blockNumber' && typeof answer.result === 'string')
        return { ...answer, result: `0x${Math.min(Number(answer.result), cap()).toString(16)}` };
      const block = answer.result as { number?: string } | null | undefined;
      if (call?.method === 'eth_getBlockByNumber' && block?.number && Number(block.number) > cap())
        return { ...answer, result: null };
      return answer;
    });
    return Array.isArray(json) ? answers : answers[0];
  };
}

interface Status {
  synced: boolean;
  health: string;
  fatalError: { message: string; deterministic: boolean; block: unknown } | null;
  chains: { chainHeadBlock: { number: string }; latestBlock: { number: string } }[];
}

const statusOf = (queryUrl: string) =>
  indexingStatusOf<Status>(
    queryUrl,
    'synced health fatalError { message deterministic block { number } } chains { chainHeadBlock { number } latestBlock { number } }',
  );

/** The newest block at or below `number` the store keeps a header of. */
function newestStoredBlock(storePath: string, number: number): number {
  const db = new Database(storePath, { readonly: true, fileMustExist: true });
  try {
    return Number(db.prepare(`SELECT max("number") FROM "__blocks" WHERE "number" <= ?`).pluck().get(number));
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  devnet = await startPrivateDevnet();
  actions = new ChainActions(devnet.rpcUrl, devnet.deployment);
  await actions.draftAll(1, 1_000_000n);
  await actions.rpc.request('anvil_mine', ['0x14']);
  proxy = await startFaultProxy(devnet.rpcUrl);
}, 120_000);

afterAll(async () => {
  await indexers.stopAll();
  await proxy?.close();
  await devnet?.stop();
});

describe('an indexer whose node’s head falls below the last block indexed, on the same chain', () => {
  it('waits for the node, reporting its head, failed while it is more than the reorg threshold behind', async () => {
    const { number: head } = await actions.head();
    const lines: string[] = [];
    const indexer = await indexers.start(proxy.url, {
      reorgThreshold: REORG_THRESHOLD,
      log: (line) => lines.push(line),
    });
    await indexer.waitForBlock(head);
    let cap = head - 12;
    proxy.set({ kind: 'rewrite', rewrite: nodeAt(() => cap) });
    const stored = newestStoredBlock(indexer.storePath, cap);
    const waiting = `the node's head is block ${cap}, behind block ${head}, the last one indexed; its block ${stored} is the one indexed, so it is behind, not on another chain: waiting for it; its head is asked for every 20 ms`;
    await waitFor(() => expect(lines.some((l) => l.startsWith(waiting))).toBe(true));

    expect(await statusOf(indexer.queryUrl)).toEqual({
      synced: true,
      health: 'failed',
      fatalError: {
        message: `the node's head is block ${cap}, 12 blocks below block ${head}, the last one indexed: indexing waits for the node to reach it (is the node still syncing, or behind a load balancer with one that is?)`,
        deterministic: false,
        block: null,
      },
      chains: [{ chainHeadBlock: { number: String(cap) }, latestBlock: { number: String(head) } }],
    });
    const meta = await queryIndexer<{ _meta: { block: { number: number }; hasIndexingErrors: boolean } }>(
      indexer.queryUrl,
      '{ _meta { block { number } hasIndexingErrors } }',
    );
    expect(meta._meta).toEqual({ block: { number: head }, hasIndexingErrors: false });

    // within the reorg threshold a node behind is what a load-balanced provider's often is
    cap = head - REORG_THRESHOLD;
    await waitFor(async () =>
      expect(await statusOf(indexer.queryUrl)).toEqual({
        synced: true,
        health: 'healthy',
        fatalError: null,
        chains: [{ chainHeadBlock: { number: String(cap) }, latestBlock: { number: String(head) } }],
      }),
    );

    cap = Number.POSITIVE_INFINITY;
    const drafted = await actions.draftAll(2, 1_100_000n);
    await indexer.waitForBlock(drafted);
    expect(await statusOf(indexer.queryUrl)).toMatchObject({ health: 'healthy', fatalError: null });
    expect(lines.filter((l) => l.startsWith('reorg:'))).toEqual([]);
    proxy.set({ kind: 'pass' });
    const clean = await indexers.start(devnet.rpcUrl);
    await clean.waitForBlock(drafted);
    await Promise.all([indexer.stop(), clean.stop()]);
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(clean.storePath));
  }, 60_000);

  it('waits, saying what to do if the chain was replaced, when the store keeps no block at or below the node’s head', async () => {
    proxy.set({ kind: 'pass' });
    await actions.rpc.request('anvil_mine', ['0x14']);
    const { number: head } = await actions.head();
    const lines: string[] = [];
    const indexer = await indexers.start(proxy.url, {
      historyBlocks: 2,
      reorgThreshold: 1,
      log: (line) => lines.push(line),
    });
    await indexer.waitForBlock(head);
    const cap = head - 12;
    proxy.set({ kind: 'rewrite', rewrite: nodeAt(() => cap) });
    const waiting = `the node's head is block ${cap}, behind block ${head}, the last one indexed, and the store keeps no block at or below it to tell a node behind from another chain: waiting for the node (if its chain was replaced, as a devnet started again is, delete the store); its head is asked for every 20 ms`;
    await waitFor(() => expect(lines.some((l) => l.startsWith(waiting))).toBe(true));
    expect(await statusOf(indexer.queryUrl)).toMatchObject({
      health: 'failed',
      chains: [{ chainHeadBlock: { number: String(cap) }, latestBlock: { number: String(head) } }],
    });
    proxy.set({ kind: 'pass' });
    const drafted = await actions.draftAll(3, 1_200_000n);
    await indexer.waitForBlock(drafted);
    expect(lines.filter((l) => l.startsWith('reorg:'))).toEqual([]);
    await indexer.stop();
  }, 60_000);

  it('asks for the head of a node left with the common ancestor by a reorg at its poll interval, logging the wait once, and indexes the new branch', async () => {
    proxy.set({ kind: 'pass' });
    const lines: string[] = [];
    const indexer = await indexers.start(proxy.url, { log: (line) => lines.push(line) });
    const ancestor = (await actions.head()).number;
    await indexer.waitForBlock(ancestor);
    const snapshot = await actions.snapshot();
    const lost = await actions.draftAll(4, 1_300_000n);
    await indexer.waitForBlock(lost);
    await actions.revert(snapshot);
    const polledFrom = proxy.rpcRequests().length;
    const headPolls = () =>
      proxy
        .rpcRequests()
        .slice(polledFrom)
        .filter((calls) => calls.some((call) => call.method === 'eth_blockNumber')).length;
    // ten polls are 0.2 s at the poll interval; after the backoff of a range run again, 46 s
    await waitFor(() => expect(headPolls()).toBeGreaterThanOrEqual(10));
    expect(lines.filter((l) => l.startsWith(`the node's head is block ${ancestor}`))).toEqual([
      `the node's head is block ${ancestor}, behind block ${lost}, the last one indexed; its block ${ancestor} is the one indexed, so it is behind, not on another chain: waiting for it; its head is asked for every 20 ms`,
    ]);

    const branch = await actions.draftAll(4, 1_400_000n);
    const { hash } = await actions.head();
    await waitFor(async () =>
      expect(
        (
          await queryIndexer<{ _meta: { block: { number: number; hash: string } } }>(
            indexer.queryUrl,
            '{ _meta { block { number hash } } }',
          )
        )._meta.block,
      ).toEqual({ number: branch, hash }),
    );
    expect(lines.filter((l) => l.startsWith('reorg:'))).toEqual([
      `reorg: block ${lost} is no longer canonical; reverted to block ${ancestor}`,
    ]);
    await indexer.stop();
  }, 60_000);
});
