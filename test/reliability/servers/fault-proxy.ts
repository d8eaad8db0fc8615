// A real HTTP server on loopback that stands in front of an upstream (the indexer's GraphQL
// endpoint, anvil's JSON-RPC, a distribution file server) and misbehaves on command (the indexer
// benchmark also uses it to put anvil at a hosted provider's distance). Tests switch
// its fault between requests; with no fault it forwards every request unchanged. Faults are made
// on the wire, never by patching the service's modules.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Fault =
  /** forward unchanged */
  | { kind: 'pass' }
  /** reset every connection as soon as it opens (a dead upstream) */
  | { kind: 'down' }
  /** accept the request and never answer (the client's timeout must fire) */
  | { kind: 'hang' }
  /** answer every request with this status and body */
  | { kind: 'answer'; status: number; body: string; contentType?: string }
  /** forward, then rewrite the upstream's JSON answer (`request`: the body the proxy was sent) */
  | { kind: 'rewrite'; rewrite: (json: unknown, request: string) => unknown }
  /** forward most requests, fail each one whose ordinal `fails` says (a flaky upstream) */
  | { kind: 'flaky'; fails: (ordinal: number) => 'reset' | 'status' | null }
  /** forward every request after `ms` milliseconds (a distant upstream) */
  | { kind: 'delay'; ms: number }
  /** answer 503 to the first `times` JSON-RPC requests calling `method`, forward the rest */
  | { kind: 'fail-method'; method: string; times: number }
  /** refuse a JSON-RPC batch of more than `max` calls with `status` and a JSON-RPC error saying `message` (a node's batch limit) */
  | { kind: 'refuse-batches'; max: number; status: number; message: string };

/** The JSON-RPC calls of one HTTP request the proxy received (several for a batch). */
export type RpcRequest = { method: string; params: unknown[] }[];

export interface FaultProxy {
  url: string;
  /** requests seen since start (every fault counts) */
  readonly requests: number;
  /** requests the fault made fail (flaky) */
  readonly failed: number;
  /** the most JSON-RPC requests calling `method` that were in flight at once (batches count each call) */
  peakInFlight(method: string): number;
  /** the JSON-RPC requests received since start, in arrival order (what was not JSON-RPC left out) */
  rpcRequests(): RpcRequest[];
  /** the documents of the GraphQL requests (JSON bodies with a `query`) received since start, in arrival order */
  graphqlDocuments(): string[];
  set(fault: Fault): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The calls of a JSON-RPC batch body; 0 for a single call or anything else. */
function batchSize(body: Buffer): number {
  try {
    const json = JSON.parse(body.toString()) as unknown;
    return Array.isArray(json) ? json.length : 0;
  } catch {
    return 0;
  }
}

const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host']);

async function forward(
  target: string,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (!HOP_HEADERS.has(name) && typeof value === 'string') headers[name] = value;
  }
  const url = new URL(req.url ?? '/', target);
  const response = await fetch(url, {
    method: req.method,
    headers,
    body: req.method === 'GET' || req.method === 'HEAD' ? undefined : new Uint8Array(body),
  });
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!HOP_HEADERS.has(name) && name !== 'content-encoding') out[name] = value;
  });
  return { status: response.status, headers: out, body: Buffer.from(await response.arrayBuffer()) };
}

/**
 * Starts the proxy on an OS-assigned loopback port. `target` is the upstream's origin; the
 * request path is kept, so `${proxy.url}/subgraphs/name/x` reaches `${target}/subgraphs/name/x`.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const origin = new URL(target).origin;
  let fault: Fault = { kind: 'pass' };
  let requests = 0;
  let failed = 0;
  const sockets = new Set<Socket>();
  const inFlight = new Map<string, number>();
  const peaks = new Map<string, number>();
  const rpcRequests: RpcRequest[] = [];
  const graphqlDocuments: string[] = [];

  function record(body: Buffer): void {
    try {
      const json = JSON.parse(body.toString()) as unknown;
      const query = (json as { query?: unknown } | null)?.query;
      if (typeof query === 'string') graphqlDocuments.push(query);
      const calls = (Array.isArray(json) ? json : [json]) as { method?: unknown; params?: unknown }[];
      if (calls.every((c) => typeof c?.method === 'string'))
        rpcRequests.push(
          calls.map((c) => ({ method: c.method as string, params: (c.params ?? []) as unknown[] })),
        );
    } catch {
      // not JSON
    }
  }

  /** Counts the body's JSON-RPC calls as in flight until the returned function is called. */
  function track(body: Buffer): () => void {
    const methods = [...body.toString().matchAll(/"method":"([^"]+)"/g)].map((m) => m[1]!);
    for (const method of methods) {
      const now = (inFlight.get(method) ?? 0) + 1;
      inFlight.set(method, now);
      peaks.set(method, Math.max(peaks.get(method) ?? 0, now));
    }
    return () => {
      for (const method of methods) inFlight.set(method, inFlight.get(method)! - 1);
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ordinal = requests++;
    const current = fault;
    const body = await readBody(req);
    record(body);
    const done = track(body);
    try {
      await answer(req, res, ordinal, current, body);
    } finally {
      done();
    }
  }

  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    ordinal: number,
    current: Fault,
    body: Buffer,
  ): Promise<void> {
    if (current.kind === 'down') {
      req.socket.destroy();
      return;
    }
    if (current.kind === 'hang') return; // the socket is destroyed when the client gives up or we close
    if (current.kind === 'answer') {
      res.writeHead(current.status, { 'content-type': current.contentType ?? 'application/json' });
      res.end(current.body);
      return;
    }
    if (current.kind === 'flaky') {
      const failure = current.fails(ordinal);
      if (failure === 'reset') {
        failed++;
        req.socket.destroy();
        return;
      }
      if (failure === 'status') {
        failed++;
        res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream overloaded');
        return;
      }
    }
    if (
      current.kind === 'fail-method' &&
      current.times > 0 &&
      body.toString().includes(`"method":${JSON.stringify(current.method)}`)
    ) {
      current.times--;
      failed++;
      res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream overloaded');
      return;
    }
    if (current.kind === 'refuse-batches' && batchSize(body) > current.max) {
      failed++;
      res.writeHead(current.status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: current.message } }),
      );
      return;
    }
    if (current.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, current.ms));
    const answer = await forward(origin, req, body);
    if (current.kind === 'rewrite') {
      const rewritten = Buffer.from(
        JSON.stringify(current.rewrite(JSON.parse(answer.body.toString()), body.toString())),
      );
      res.writeHead(answer.status, { ...answer.headers, 'content-type': 'application/json' });
      res.end(rewritten);
      return;
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  server.on('connection', (socket) => {
    if (fault.kind === 'down') {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const path = new URL(target).pathname.replace(/\/$/, '');
  return {
    url: `http://127.0.0.1:${port}${path}`,
    get requests() {
      return requests;
    },
    get failed() {
      return failed;
    },
    peakInFlight: (method) => peaks.get(method) ?? 0,
    rpcRequests: () => [...rpcRequests],
    graphqlDocuments: () => [...graphqlDocuments],
    set(next) {
      fault = next;
      // a fault takes effect on the next request, not on keep-alive connections of the last one
      for (const socket of sockets) socket.destroy();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
