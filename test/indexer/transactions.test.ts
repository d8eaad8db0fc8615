// `event.transaction` on a real chain: by default the follower reads the logs' transactions, as
// graph-node does, so handlers see every field the node reports; INDEXER_TRANSACTIONS=hash-only
// hands over only what the log carries. The probe subgraph's kind 33 writes the fields it received.
// A node that does not serve transactions gets waits between attempts and a log line that says
// what is missing.
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../reliability/servers/fault-proxy.ts';
import { queryIndexer } from './graphql-client.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

type RunningIndexer = Awaited<ReturnType<typeof startProbeIndexer>>;

let chain: ProbeChain;
let full: RunningIndexer;
let hashOnly: RunningIndexer;
/** a probe paying 12,345 wei, alone in its block */
let paid: Hex;
/** a block where the first transaction creates a template data source and the second makes it emit */
let together: { number: number; txHashes: Hex[] };

beforeAll(async () => {
  chain = await startProbeChain();
  const paidBlock = await chain.probe(33, 'paid', 12_345n);
  paid = (
    await chain.rpc.request<{ transactions: Hex[] }>('eth_getBlockByNumber', [
      `0x${paidBlock.toString(16)}`,
      false,
    ])
  ).transactions[0]!;
  const second = await chain.deployEmitter();
  together = await chain.probesInOneBlock([
    { kind: 34, input: second },
    { emitter: second, kind: 33, input: 'from the template' },
  ]);
  [full, hashOnly] = await Promise.all([
    startProbeIndexer(chain),
    startProbeIndexer(chain, undefined, { transactions: 'hash-only' }),
  ]);
  await Promise.all([full.indexer.waitForHead(), hashOnly.indexer.waitForHead()]);
}, 180_000);

afterAll(async () => {
  await full?.stop();
  await hashOnly?.stop();
  await chain?.stop();
});

async function output(running: RunningIndexer, id: string): Promise<string | undefined> {
  const { probeResult } = await queryIndexer<{ probeResult: { output: string } | null }>(
    running.indexer.queryUrl,
    `{ probeResult(id: "${id}") { output } }`,
  );
  return probeResult?.output;
}

/** What kind 33 writes for the transaction as the node reports it; the gas price is what it paid. */
async function fieldsFromNode(hash: Hex): Promise<string> {
  const tx = await chain.rpc.request<{
    transactionIndex: Hex;
    from: Hex;
    to: Hex;
    value: Hex;
    gas: Hex;
    nonce: Hex;
    input: Hex;
  }>('eth_getTransactionByHash', [hash]);
  const receipt = await chain.rpc.request<{ effectiveGasPrice: Hex }>('eth_getTransactionReceipt', [hash]);
  return [
    `tx:${hash}`,
    BigInt(tx.transactionIndex),
    tx.from.toLowerCase(),
    tx.to.toLowerCase(),
    BigInt(tx.value),
    BigInt(tx.gas),
    BigInt(receipt.effectiveGasPrice),
    BigInt(tx.nonce),
    tx.input.toLowerCase(),
  ].join(',');
}

describe('indexer: event.transaction', () => {
  it('gives handlers every field of the transaction as the node reports it', async () => {
    const expected = await fieldsFromNode(paid);
    expect(expected).toContain(',12345,');
    expect(await output(full, `${paid}-0`)).toBe(expected);
  });

  it('gives a data source created in a block the transactions of its own logs in that block', async () => {
    const [creating, emitting] = together.txHashes as [Hex, Hex];
    expect(await output(full, `${creating}-0`)).toBe('created ProbeTemplate');
    expect(await output(full, `${emitting}-1`)).toBe(await fieldsFromNode(emitting));
  });

  it('hands over only the hash and index the log carries with INDEXER_TRANSACTIONS=hash-only', async () => {
    expect(await output(hashOnly, `${paid}-0`)).toBe(`tx:${paid},0,0x${'00'.repeat(20)},null,0,0,0,0,0x`);
  });

  it('keeps the index of each choice in a store of its own', () => {
    expect(full.indexer.deployment).not.toBe(hashOnly.indexer.deployment);
    expect(full.indexer.storePath).not.toBe(hashOnly.indexer.storePath);
  });
});

type Answer = { result?: { transactions?: unknown[]; input?: Hex } | null };

/** A node's answers with blocks' transactions reduced to their hashes and transactions unknown. */
function withoutTransactions(json: unknown): unknown {
  const strip = (answer: Answer) => {
    const txs = answer.result?.transactions;
    if (txs)
      answer.result!.transactions = txs.map((tx) =>
        typeof tx === 'object' ? (tx as { hash: Hex }).hash : tx,
      );
    if (answer.result?.input !== undefined) answer.result = null; // eth_getTransactionByHash
    return answer;
  };
  return Array.isArray(json) ? json.map(strip) : strip(json as Answer);
}

/** A complaint logged by the indexer, with what the proxy had received by then. */
interface Complaint {
  line: string;
  /** HTTP requests the proxy had received when it was logged */
  requests: number;
  /** JSON-RPC requests the proxy had read when it was logged */
  rpcRequests: number;
  /** whether no request had reached the proxy when the wait it announces was all but over */
  quietThroughWait?: boolean;
}

describe('indexer: a node that does not serve whole transactions', () => {
  let proxy: FaultProxy;
  let running: RunningIndexer;
  const complaints: Complaint[] = [];
  /** the first three complaints (the second to fourth attempt in a row: the first runs again at once) */
  let first: Complaint, second: Complaint, third: Complaint;

  beforeAll(async () => {
    proxy = await startFaultProxy(chain.anvil.rpcUrl);
    proxy.set({ kind: 'rewrite', rewrite: withoutTransactions });
    const log = (line: string) => {
      if (!line.includes('did not give transaction')) return;
      const complaint: Complaint = {
        line,
        requests: proxy.requests,
        rpcRequests: proxy.rpcRequests().length,
      };
      complaints.push(complaint);
      // The indexer logs, then starts its timer for the announced wait, in the same run of code: a
      // timer started now for a millisecond less fires before it (Node runs timers in the order
      // they fall due), so before the retry can send anything, however loaded the machine is.
      const wait = Number(/runs again in (\d+) ms/.exec(line)?.[1]);
      setTimeout(() => (complaint.quietThroughWait = proxy.requests === complaint.requests), wait - 1);
    };
    running = await startProbeIndexer(chain, proxy.url, { log });
    // each of the first three complaints with the end of the wait it announces
    const checked = () => complaints.slice(0, 3).filter((c) => c.quietThroughWait !== undefined);
    await vi.waitFor(() => expect(checked()).toHaveLength(3), { timeout: 30_000, interval: 20 });
    [first, second, third] = complaints as [Complaint, Complaint, Complaint];
  });

  afterAll(async () => {
    await running?.stop();
    await proxy?.close();
  });

  it('logs what is missing, with the wait before the next attempt', () => {
    expect([first, second, third].map((c) => c.line)).toEqual(
      [
        [250, 2],
        [500, 3],
        [1_000, 4],
      ].map(([wait, times]) =>
        expect.stringMatching(
          new RegExp(
            `^the node did not give transaction 0x[0-9a-f]{64} of log 0 in block \\d+ \\(.*INDEXER_TRANSACTIONS=hash-only\\); the range after block \\d+ runs again in ${wait} ms \\(${times} times in a row\\)$`,
          ),
        ),
      ),
    );
  });

  it('waits between attempts, sending nothing meanwhile, each attempt one fetch of the range', () => {
    expect([first, second, third].map((c) => c.quietThroughWait)).toEqual([true, true, true]);
    // Between two complaints, one fetch of the range: the same requests each time, one eth_getLogs
    // among them, and nothing else but a refresh of the head (asked again once a second at most).
    const methods = (from: Complaint, to: Complaint) =>
      proxy
        .rpcRequests()
        .slice(from.rpcRequests, to.rpcRequests)
        .map((request) => request.map((call) => call.method))
        .filter((request) => request.join() !== 'eth_blockNumber');
    const attempts = [methods(first, second), methods(second, third)];
    expect(attempts[1]).toEqual(attempts[0]);
    expect(attempts[0]!.flat().filter((method) => method === 'eth_getLogs')).toEqual(['eth_getLogs']);
  });

  it('indexes once the node answers in full', async () => {
    proxy.set({ kind: 'pass' });
    await running.indexer.waitForHead();
    expect(await output(running, `${paid}-0`)).toBe(await fieldsFromNode(paid));
  });
});
