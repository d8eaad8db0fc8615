// A real IPFS HTTP server on loopback for the file data source tests: it speaks either a path
// gateway or kubo's RPC API over real sockets, serves content under real CIDs, and can hang a CID
// (as kubo does while it searches the DHT) or fail requests, so the IPFS client and the file
// fetcher are tested against the wire, not against mocks.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CID } from 'multiformats/cid';
import * as json from 'multiformats/codecs/json';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';

export interface IpfsNode {
  url: string;
  /** a single-chunk file as `ipfs add --cid-version 1 --raw-leaves` adds it: CIDv1, raw, sha2-256 */
  add(content: string | Uint8Array): Promise<string>;
  /** a directory whose `<cid>/<name>` serves each file */
  addDirectory(files: Record<string, string | Uint8Array>): Promise<string>;
  /** every request, in order of arrival; path includes the query */
  readonly requests: { method: string; path: string }[];
  /** requests for the CID hang until release() or until the client gives up */
  hold(cid: string): void;
  release(cid: string): void;
  /** the next n content requests answer HTTP 500 */
  failNext(n: number): void;
  close(): Promise<void>;
}

type Found = { kind: 'file'; bytes: Uint8Array } | { kind: 'directory'; listing: Uint8Array } | undefined;

export async function startIpfsNode(options: { api: 'gateway' | 'rpc' }): Promise<IpfsNode> {
  const files = new Map<string, Uint8Array>();
  const directories = new Map<string, { names: Map<string, string>; listing: Uint8Array }>();
  const requests: { method: string; path: string }[] = [];
  const held = new Map<string, Set<() => void>>();
  let failures = 0;

  const has = (cid: string) => files.has(cid) || directories.has(cid);

  // `undefined` when the root CID is unknown; `null` when it is known but the path is not in it.
  function lookup(contentPath: string): Found | null {
    const [root = '', ...rest] = contentPath.split('/').filter((part) => part !== '');
    const file = files.get(root);
    if (file) return rest.length === 0 ? { kind: 'file', bytes: file } : null;
    const directory = directories.get(root);
    if (!directory) return undefined;
    if (rest.length === 0) return { kind: 'directory', listing: directory.listing };
    const child = rest.length === 1 ? directory.names.get(rest[0]!) : undefined;
    const bytes = child === undefined ? undefined : files.get(child);
    return bytes ? { kind: 'file', bytes } : null;
  }

  function waitWhileHeld(contentPath: string, res: ServerResponse): Promise<void> {
    const root = contentPath.split('/').find((part) => part !== '') ?? '';
    const waiters = held.get(root);
    if (!waiters) return Promise.resolve();
    return new Promise((resolve) => {
      waiters.add(resolve);
      // the client gave up: forget the waiter, never answer
      res.on('close', () => waiters.delete(resolve));
    });
  }

  function send(res: ServerResponse, status: number, body?: Uint8Array | string, headers = {}): void {
    if (res.destroyed) return;
    res.writeHead(status, headers);
    res.end(body);
  }

  // kubo streams `cat` chunked, announcing the size in X-Content-Length; a gateway sends
  // Content-Length. Both are kept so the client's size limit meets both kinds of answer.
  function sendBytes(res: ServerResponse, bytes: Uint8Array): void {
    if (res.destroyed) return;
    if (options.api === 'gateway') {
      send(res, 200, bytes, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'x-content-length': String(bytes.length) });
    const chunk = 16 * 1024;
    for (let offset = 0; offset < bytes.length; offset += chunk) {
      res.write(bytes.subarray(offset, offset + chunk));
    }
    res.end();
  }

  function takeFailure(res: ServerResponse): boolean {
    if (failures === 0) return false;
    failures--;
    send(res, 500, 'internal error (failNext)\n', { 'content-type': 'text/plain' });
    return true;
  }

  async function gateway(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    if (!pathname.startsWith('/ipfs/')) return send(res, 404, '404 page not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405);
    const contentPath = decodeURIComponent(pathname.slice('/ipfs/'.length));
    const root = contentPath.split('/')[0] ?? '';
    if (req.method === 'HEAD') {
      // the spec's quick local check: answer at once from what the node has
      const onlyIfCached = /only-if-cached/.test(req.headers['cache-control'] ?? '');
      return send(res, has(root) ? 200 : onlyIfCached ? 412 : 404);
    }
    if (takeFailure(res)) return;
    await waitWhileHeld(contentPath, res);
    const found = lookup(contentPath);
    if (!found) return send(res, 404, `${contentPath}: not found\n`);
    if (found.kind === 'file') return sendBytes(res, found.bytes);
    // a gateway answers a directory at its canonical URL, with a trailing slash
    if (!pathname.endsWith('/')) return send(res, 301, undefined, { location: `${pathname}/` });
    return sendBytes(res, found.listing);
  }

  async function rpc(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (!url.pathname.startsWith('/api/v0/')) return send(res, 404, '404 page not found\n');
    if (req.method !== 'POST') return send(res, 405, `${req.method} not allowed\n`);
    const command = url.pathname.slice('/api/v0/'.length);
    if (command === 'version') {
      return send(res, 200, JSON.stringify({ Version: '0.30.0' }), { 'content-type': 'application/json' });
    }
    if (command !== 'cat') return send(res, 404, '404 page not found\n');
    const arg = url.searchParams.get('arg');
    if (arg === null) return rpcError(res, 400, 'argument "ipfs-path" is required');
    if (takeFailure(res)) return;
    await waitWhileHeld(arg, res);
    const found = lookup(arg);
    // kubo keeps looking for content it does not have; only the client's timeout ends the request
    if (found === undefined) return;
    if (found === null) return rpcError(res, 500, `no link named "${arg}"`);
    if (found.kind === 'directory') return rpcError(res, 500, 'this dag node is a directory');
    return sendBytes(res, found.bytes);
  }

  function rpcError(res: ServerResponse, status: number, message: string): void {
    send(res, status, JSON.stringify({ Message: message, Code: 0, Type: 'error' }), {
      'content-type': 'application/json',
    });
  }

  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '' });
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const answer = options.api === 'gateway' ? gateway(req, res, url.pathname) : rpc(req, res, url);
    answer.catch((error: unknown) => send(res, 500, String(error)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  async function add(content: string | Uint8Array): Promise<string> {
    const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
    const cid = CID.create(1, raw.code, await sha256.digest(bytes)).toString();
    files.set(cid, bytes);
    return cid;
  }

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    add,
    async addDirectory(entries) {
      const names = new Map<string, string>();
      for (const name of Object.keys(entries).sort()) names.set(name, await add(entries[name]!));
      const listing = json.encode(Object.fromEntries(names));
      const cid = CID.create(1, json.code, await sha256.digest(listing)).toString();
      directories.set(cid, { names, listing });
      return cid;
    },
    hold(cid) {
      if (!held.has(cid)) held.set(cid, new Set());
    },
    release(cid) {
      const waiters = held.get(cid);
      held.delete(cid);
      for (const resume of waiters ?? []) resume();
    },
    failNext(n) {
      failures = n;
    },
    async close() {
      held.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // hung requests would keep close() waiting for the client's timeout
      server.closeAllConnections();
      await closed;
    },
  };
}
