// A "load-balanced subgraph" on loopback, as graph-node runs one at scale: a real HTTP server in
// front of two query nodes of the same deployment, node A at the head and node B stuck some blocks
// behind (graph-node's query nodes reading lagging Postgres replicas), sending each query to the
// node a test's policy picks. Node A is the harness's embedded indexer; node B is a second embedded
// indexer of the same subgraph over the same devnet, whose RPC says the head is block `behindAt`,
// so it indexes up to that block and stays there, answering graph-node's own errors and `_meta`.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIndexer } from '../../indexer/indexer.ts';
import type { DevnetFixture } from '../harness/devnet.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { startFaultProxy } from '../reliability/servers/fault-proxy.ts';

export type QueryNode = 'A' | 'B';

export interface LoadBalancedSubgraph {
  /** the subgraph endpoint a service is pointed at */
  url: string;
  /** Sets the policy: the node for a query sent `tries` times before (0: its first try). */
  route(pick: (tries: number) => QueryNode): void;
  /** Rewrites every answer from now on (undefined: forward them unchanged). */
  rewrite(transform: ((answer: unknown, query: string) => unknown) | undefined): void;
  /** the node each request went to, in arrival order */
  readonly answeredBy: QueryNode[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** Starts the balancer in front of nodes A and B (their GraphQL endpoints). */
export async function startLoadBalancedSubgraph(
  nodes: Record<QueryNode, string>,
): Promise<LoadBalancedSubgraph> {
  let pick: (tries: number) => QueryNode = () => 'A';
  let transform: ((answer: unknown, query: string) => unknown) | undefined;
  const sent = new Map<string, number>();
  const answeredBy: QueryNode[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const query = (JSON.parse(body) as { query: string }).query;
      const tries = sent.get(query) ?? 0;
      sent.set(query, tries + 1);
      const node = pick(tries);
      answeredBy.push(node);
      const upstream = await fetch(nodes[node], {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answer = (await upstream.json()) as unknown;
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(transform ? transform(answer, query) : answer));
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/subgraphs/name/fund-protocol`,
    route(next) {
      pick = next;
      sent.clear();
    },
    rewrite(next) {
      transform = next;
    },
    answeredBy,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Node B: an embedded indexer of the harness's subgraph over the harness devnet, through an RPC
 * proxy that answers eth_blockNumber with `behindAt`, indexed up to that block.
 */
export async function startNodeBehind(
  devnet: DevnetFixture,
  behindAt: number,
): Promise<{ queryUrl: string; stop(): Promise<void> }> {
  const rpc = await startFaultProxy(devnet.rpcUrl);
  const head = `0x${behindAt.toString(16)}`;
  rpc.set({
    kind: 'rewrite',
    rewrite: (json, request) => {
      const calls = JSON.parse(request) as
        | { id: unknown; method: string }
        | { id: unknown; method: string }[];
      const capped = (answer: { id: unknown }) => {
        const call = Array.isArray(calls) ? calls.find((c) => c.id === answer.id) : calls;
        return call?.method === 'eth_blockNumber' ? { ...answer, result: head } : answer;
      };
      return Array.isArray(json) ? json.map(capped) : capped(json as { id: unknown });
    },
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'lagging-node-'));
  const indexer = await createIndexer({
    rpcUrl: rpc.url,
    network: 'devnet',
    dataDir,
    port: 0,
    contracts: devnetContracts(devnet.deployment),
    pollIntervalMs: 250,
    log: () => {},
  });
  const stop = async () => {
    await indexer.stop();
    await rpc.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await indexer.start();
    await indexer.waitForBlock(behindAt);
  } catch (error) {
    await stop();
    throw error;
  }
  return { queryUrl: indexer.queryUrl, stop };
}
