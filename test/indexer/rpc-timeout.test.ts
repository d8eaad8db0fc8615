// INDEXER_RPC_TIMEOUT_MS bounds every JSON-RPC request the indexer makes, the follower's (eth_getLogs,
// blocks, receipts) and the handlers' chain reads alike: a node that takes a request and never
// answers fails it after that long, and it is retried. Without the variable both wait a minute (the
// handlers' reads used to give up after a fixed 10 s, too soon for an archive node over old blocks).
// The node is a real loopback server that accepts requests and never answers, in a process of its
// own, since a handler's read blocks this thread while it waits.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createChainSource, createHandlerChainReader } from '../../indexer/chain-node.ts';
import { indexerConfigFromEnv } from '../../indexer/config.ts';
import { ChainReadPending } from '../../indexer/follower/chain-reader.ts';
import { ChainAccessError } from '../../indexer/runtime/host-context.ts';
import {
  startFaultProxyProcess,
  type FaultProxyProcess,
} from '../reliability/servers/fault-proxy-process.ts';
import { closedPort } from '../reliability/servers/ports.ts';

const BLOCK_HASH = `0x${'ab'.repeat(32)}` as const;
const ADDRESS = `0x${'12'.repeat(20)}` as const;

let silentNode: FaultProxyProcess;

/** What `read` throws; undefined when it returns. */
function errorOf(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    return error;
  }
  return undefined;
}

beforeAll(async () => {
  // the proxy's upstream is never reached: it hangs every request it takes
  silentNode = await startFaultProxyProcess(`http://127.0.0.1:${await closedPort()}`);
  await silentNode.set({ kind: 'hang' });
});

afterAll(async () => {
  await silentNode?.close();
});

describe('INDEXER_RPC_TIMEOUT_MS', () => {
  it('gives a request a minute by default and takes 1 s to an hour', () => {
    const base = { RPC_URL: 'http://127.0.0.1:8545', NETWORK: 'sepolia' };
    expect(indexerConfigFromEnv(base).rpcTimeoutMs).toBe(60_000);
    expect(indexerConfigFromEnv({ ...base, INDEXER_RPC_TIMEOUT_MS: '180000' }).rpcTimeoutMs).toBe(180_000);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_RPC_TIMEOUT_MS: '999' })).toThrow(
      'INDEXER_RPC_TIMEOUT_MS must be an integer from 1000 to 3600000 in decimal digits, got "999"',
    );
  });

  it("fails the follower's request to a node that never answers after that long, and retries it", async () => {
    const lines: string[] = [];
    const stop = new AbortController();
    const chain = createChainSource({ rpcUrl: silentNode.url, rpcTimeoutMs: 1_000 }, stop.signal, (line) =>
      lines.push(line),
    );
    const head = chain.headNumber().catch((error: unknown) => error);
    try {
      await vi.waitFor(() => expect(lines.length).toBeGreaterThan(0), { timeout: 15_000, interval: 100 });
    } finally {
      stop.abort();
    }
    expect(lines[0]).toMatch(/^rpc eth_blockNumber failed \(.*took too long.*\); retrying in \d+ ms$/);
    expect((await head) as Error).toBeInstanceOf(Error);
  });

  it("fails a handler's chain read to a node that never answers after that long, as a chain access failure", async () => {
    const reader = createHandlerChainReader({ rpcUrl: silentNode.url, rpcTimeoutMs: 1_500 }, () => {});
    try {
      const read = () => reader.call(ADDRESS, '0x12345678', BLOCK_HASH);
      const pending = errorOf(read);
      // the read is cut short after a second, and its block waits for the answer with the event loop turning
      expect(pending).toBeInstanceOf(ChainReadPending);
      const waited = new AbortController();
      // a read the old fixed 10 s would still be waiting for
      const timer = setTimeout(() => waited.abort(), 8_000);
      await (pending as ChainReadPending).answered(waited.signal);
      clearTimeout(timer);
      expect(waited.signal.aborted).toBe(false);
      // run again, the read takes the failure its request ended with
      const failure = errorOf(read);
      expect(failure).toBeInstanceOf(ChainAccessError);
      expect(failure).not.toBeInstanceOf(ChainReadPending);
      expect((failure as Error).message).toBe('eth_call: The operation was aborted due to timeout');
    } finally {
      await reader.close();
    }
  });
});
