// A node behind the chain head among up-to-date ones, as a load-balanced provider serves: on the
// test's own anvil, behind a loopback proxy whose eth_getLogs comes from a node that has not reached
// the latest blocks (a range is answered with the logs up to its own head only; a block asked for by
// hash that it lacks is refused, as EIP-234 says), while the head and the headers are up to date, or
// whose headers of the latest blocks are missing (null). The indexer must commit no block whose logs
// came from a node that did not have it, must not take a missing block for a reorg, and must end
// with exactly the store a run over a healthy node builds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { ChainActions } from './chain-actions.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { devnetIndexers, waitFor } from './devnet-indexers.ts';
import { dumpEntityVersions } from './store-dump.ts';

let devnet: PrivateDevnet;
let deployment: Deployment;
let actions: ChainActions;
let proxy: FaultProxy;
const indexers = devnetIndexers(() => devnetContracts(deployment), 'indexer-lagging-');

interface RpcCall {
  id: number;
  method: string;
  params: [unknown, ...unknown[]];
}
interface RpcAnswer {
  id: number;
  result?: unknown;
  error?: unknown;
}

/**
 * The proxy's rewrite for a node whose eth_getLogs (and, with `headers`, eth_getBlockByNumber) is
 * answered as by a node at block `behindHead()`; the blocks' hashes are learnt from the headers it
 * passes on.
 */
function laggingNode(behindHead: () => number, { logs = true, headers = false } = {}) {
  const numberOfHash = new Map<string, number>();
  return (json: unknown, request: string): unknown => {
    const calls = [JSON.parse(request) as RpcCall | RpcCall[]].flat();
    const answers = [json as RpcAnswer | RpcAnswer[]].flat();
    const rewritten = answers.map((answer) => {
      const call = calls.find((c) => c.id === answer.id)!;
      if (call.method === 'eth_getBlockByNumber' && answer.result) {
        const block = answer.result as { number: string; hash: string };
        numberOfHash.set(block.hash, Number(block.number));
        if (headers && Number(block.number) > behindHead()) return { ...answer, result: null };
      }
      if (call.method !== 'eth_getLogs' || !logs || !Array.isArray(answer.result)) return answer;
      const { blockHash } = call.params[0] as { blockHash?: string };
      if (blockHash !== undefined && !((numberOfHash.get(blockHash) ?? Infinity) <= behindHead()))
        return { id: answer.id, jsonrpc: '2.0', error: { code: -32000, message: 'unknown block' } };
      const result = (answer.result as { blockNumber: string }[]).filter(
        (log) => Number(log.blockNumber) <= behindHead(),
      );
      return { ...answer, result };
    });
    return Array.isArray(json) ? rewritten : rewritten[0];
  };
}

beforeAll(async () => {
  devnet = await startPrivateDevnet();
  deployment = devnet.deployment;
  actions = new ChainActions(devnet.rpcUrl, deployment);
  await actions.draftAll(1, 1_000_000n);
  proxy = await startFaultProxy(devnet.rpcUrl);
}, 120_000);

afterAll(async () => {
  await indexers.stopAll();
  await proxy?.close();
  await devnet?.stop();
});

describe('an indexer whose eth_getLogs node is behind the head', () => {
  it('commits no block past that node’s head, and indexes the blocks after it once it catches up', async () => {
    const logsNodeAt = (await actions.head()).number;
    let logsNodeHead = logsNodeAt;
    const drafted = await actions.draftAll(2, 1_100_000n);
    await actions.rpc.request('anvil_mine', ['0x3']);
    const { number: head } = await actions.head();
    proxy.set({ kind: 'rewrite', rewrite: laggingNode(() => logsNodeHead) });
    const lines: string[] = [];
    const indexer = await indexers.start(proxy.url, { log: (line) => lines.push(line) });
    await indexer.waitForBlock(logsNodeAt);
    // the indexer has said twice that the range holding the events the lagging node left out runs
    // again, that node being behind the head: it has had its chances to commit them missing
    const refusals = () => lines.filter((l) => /behind the head/.test(l));
    await waitFor(() => expect(refusals().length).toBeGreaterThanOrEqual(2));
    expect(refusals()[0]).toMatch(
      /^the node did not give the logs of block \d+ by its hash, .*; its eth_getLogs node may be behind the head; the range after block \d+ runs again in \d+ ms/,
    );
    // the block holding those events is not committed without them
    expect(indexer.status().checkpoint).toBeLessThan(drafted);
    logsNodeHead = Number.POSITIVE_INFINITY;
    await indexer.waitForBlock(head);
    proxy.set({ kind: 'pass' });
    const clean = await indexers.start(devnet.rpcUrl);
    await clean.waitForBlock(head);
    await Promise.all([indexer.stop(), clean.stop()]);
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(clean.storePath));
  }, 60_000);

  it('takes the last block indexed missing from the node’s answer for a node error, not a reorg', async () => {
    proxy.set({ kind: 'pass' });
    const { number: head } = await actions.head();
    const lines: string[] = [];
    const indexer = await indexers.start(proxy.url, { log: (line) => lines.push(line) });
    await indexer.waitForHead();
    expect(indexer.status().checkpoint).toBe(head);
    // the node answering for the headers is now one block behind
    proxy.set({ kind: 'rewrite', rewrite: laggingNode(() => head - 1, { logs: false, headers: true }) });
    // the indexer, polling at the head, has asked for its last block and been answered null
    const missing = `the node did not return block ${head}, the last one indexed`;
    await waitFor(() => expect(lines.some((l) => l.startsWith(missing))).toBe(true));
    proxy.set({ kind: 'pass' });
    const drafted = await actions.draftAll(3, 1_200_000n);
    await indexer.waitForBlock(drafted);
    await indexer.stop();
    expect(lines.filter((l) => l.startsWith('reorg:'))).toEqual([]);
  }, 30_000);

  it('asks again for a block header the node answered null, naming the block', async () => {
    const drafted = await actions.draftAll(4, 1_300_000n);
    await actions.rpc.request('anvil_mine', ['0x2']);
    const { number: head } = await actions.head();
    // the header of the block holding the events is null the first four times it is asked for: twice
    // in each of two fetches of its range, each asking again for it alone
    let nulls = 4;
    proxy.set({
      kind: 'rewrite',
      rewrite: (json) => {
        for (const answer of [json as RpcAnswer | RpcAnswer[]].flat()) {
          const block = answer.result as { number?: string; hash?: string } | null;
          if (block?.hash && Number(block.number) === drafted && nulls-- > 0) answer.result = null;
        }
        return json;
      },
    });
    const lines: string[] = [];
    const indexer = await indexers.start(proxy.url, { log: (line) => lines.push(line) });
    await indexer.waitForBlock(head);
    expect(lines.filter((l) => /names block hash/.test(l))).toEqual([]);
    expect(lines).toEqual([
      expect.stringMatching(`^the node did not return block ${drafted}; the range after block`),
    ]);
    proxy.set({ kind: 'pass' });
    const clean = await indexers.start(devnet.rpcUrl);
    await clean.waitForBlock(head);
    await Promise.all([indexer.stop(), clean.stop()]);
    expect(dumpEntityVersions(indexer.storePath)).toEqual(dumpEntityVersions(clean.storePath));
  }, 30_000);
});
