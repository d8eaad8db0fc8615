// What the indexer checks before it opens its store: that its node answers and serves the chain the
// network names, and that no other indexer is writing the store; and that an RPC URL holding
// credentials reaches its node. Each refusal says what to fix,
// where indexing would otherwise retry forever, index the wrong chain on the wrong addresses, or let
// two writers interleave their blocks. Over the harness devnet (chain 31337, network devnet).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createIndexer, type Indexer, type IndexerConfig } from '../../indexer/indexer.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { authenticatingProxy } from '../reliability/servers/authenticating-proxy.ts';

let dataDir: string;
let notANode: Server;
let notANodeUrl: string;
const started: Indexer[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'start-up-checks-'));
  // a web server that is no Ethereum node: it answers every request with 501
  notANode = createServer((_req, res) => res.writeHead(501).end('Unsupported method'));
  await new Promise<void>((resolve) => notANode.listen(0, '127.0.0.1', resolve));
  notANodeUrl = `http://127.0.0.1:${(notANode.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const indexer of started) await indexer.stop().catch(() => undefined);
  notANode?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function indexer(overrides: Partial<IndexerConfig> = {}): Promise<Indexer> {
  const devnet = inject('devnet');
  const created = await createIndexer({
    rpcUrl: devnet.rpcUrl,
    network: 'devnet',
    dataDir,
    port: 0,
    contracts: devnetContracts(devnet.deployment),
    pollIntervalMs: 20,
    log: () => undefined,
    ...overrides,
  });
  started.push(created);
  return created;
}

describe('indexer start-up', () => {
  it('sends the credentials of an RPC URL as Basic authorization, since fetch refuses them in URLs', async () => {
    const proxy = await authenticatingProxy(inject('devnet').rpcUrl);
    const ownDir = mkdtempSync(join(tmpdir(), 'rpc-auth-'));
    try {
      const through = await indexer({ rpcUrl: proxy.url, dataDir: ownDir });
      await through.start();
      await through.waitForBlock(inject('devnet').deployment.startBlock);
      await through.stop();
      expect(proxy.refused()).toBe(0);
    } finally {
      proxy.close();
      rmSync(ownDir, { recursive: true, force: true });
    }
  });

  it('refuses a node it cannot reach, giving the cause', async () => {
    // a port nothing listens on: taken, then given back
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    await expect((await indexer({ rpcUrl: `http://127.0.0.1:${port}` })).start()).rejects.toThrow(
      /^the node at RPC_URL does not answer eth_chainId: HTTP request failed: fetch failed: .*ECONNREFUSED/,
    );
  });

  it('refuses a server that is no Ethereum node, giving its HTTP status', async () => {
    await expect((await indexer({ rpcUrl: notANodeUrl })).start()).rejects.toThrow(
      /^the node at RPC_URL does not answer eth_chainId: HTTP request failed: HTTP 501/,
    );
  });

  it('refuses a node that accepts connections but never answers, after five tries of 3 s each, naming the wait', async () => {
    // every request it receives, and whether the indexer gave up on it (closed its connection)
    const received: { body: string; abandoned: boolean }[] = [];
    const silent = createServer((req) => {
      const request = { body: '', abandoned: false };
      received.push(request);
      req.on('data', (chunk: Buffer) => (request.body += chunk.toString()));
      req.socket.once('close', () => (request.abandoned = true));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const rpcUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      // the wait is bounded by the tries the message names (5 of 3 s, and the pauses between them)
      // rather than measured: the refusal comes after exactly those tries, each given up by the indexer
      await expect((await indexer({ rpcUrl })).start()).rejects.toThrow(
        /^the node at RPC_URL does not answer eth_chainId: no answer within 3 s, 5 times: The request took too long to respond/,
      );
      // a connection closes after the body it carried has arrived
      await vi.waitFor(() => expect(received.filter((r) => r.abandoned)).toHaveLength(5), {
        timeout: 10_000,
      });
      // each one JSON-RPC call (alone or in a batch of one)
      const calls = received.map(({ body }) => [JSON.parse(body) as unknown].flat() as { method: string }[]);
      expect(calls.map((batch) => batch.map(({ method }) => method))).toEqual(
        Array<string[]>(5).fill(['eth_chainId']),
      );
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  }, 60_000);

  it('refuses a node of another chain than the network names', async () => {
    await expect((await indexer({ network: 'sepolia' })).start()).rejects.toThrow(
      'the node at RPC_URL is on chain 31337, but network sepolia is chain 11155111: point RPC_URL at a sepolia node, or set NETWORK to the network it serves',
    );
  });

  it('refuses to write a store another indexer is writing, naming its process, until it stops', async () => {
    const first = await indexer();
    await first.start();
    const second = await indexer();
    await expect(second.start()).rejects.toThrow(
      `another indexer (process ${process.pid}) is writing the store ${first.storePath}: stop it, or give this one another DATA_DIR`,
    );
    await first.stop();
    await second.start();
    expect(second.queryUrl).toMatch(/^http:/);
  });
});
