// The IPFS client against a real loopback IPFS server in each of its two guises, a path gateway and
// kubo's RPC API: what it detects, the bytes it returns, and the error each failure becomes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createIpfsClient,
  IpfsInvalidServerError,
  IpfsTimeoutError,
  IpfsTooLargeError,
  IpfsUnavailableError,
  type IpfsClientOptions,
} from '../../indexer/follower/ipfs-client.ts';
import { startIpfsNode, type IpfsNode } from './ipfs-node.ts';

// generous for a loopback answer on a busy machine; the timeout tests pass their own
const limits = { timeoutMs: 5_000, maxFileBytes: 64 * 1024 };
const SHORT_TIMEOUT = { timeoutMs: 300 };
const client = (url: string, options: Partial<IpfsClientOptions> = {}) =>
  createIpfsClient({ url, ...limits, ...options });
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
// every byte value, and more than one chunk of the node's chunked RPC answer
// a CID no test adds
const UNKNOWN = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const binary = Uint8Array.from({ length: 40_000 }, (_, i) => (i * 7 + (i >> 8)) % 256);

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('the promise resolved');
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.each(['gateway', 'rpc'] as const)('IPFS client against a %s', (api) => {
  let node: IpfsNode;

  beforeAll(async () => {
    node = await startIpfsNode({ api });
  });
  afterEach(() => node.failNext(0));
  afterAll(() => node.close());

  it(`detects a ${api} on the first cat()`, async () => {
    const cid = await node.add('detect me');
    const ipfs = client(node.url);
    expect(ipfs.api).toBeNull();
    expect(text(await ipfs.cat(cid))).toBe('detect me');
    expect(ipfs.api).toBe(api);
  });

  it('sends the probes graph-node sends, then the content request', async () => {
    const cid = await node.add('requests');
    const before = node.requests.length;
    await client(node.url).cat(cid);
    const requests = node.requests.slice(before);
    expect(requests).toContainEqual({
      method: 'HEAD',
      path: '/ipfs/QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn',
    });
    expect(requests).toContainEqual({ method: 'POST', path: '/api/v0/version' });
    expect(requests.at(-1)).toEqual(
      api === 'gateway'
        ? { method: 'GET', path: `/ipfs/${cid}` }
        : { method: 'POST', path: `/api/v0/cat?arg=${cid}` },
    );
  });

  it('detects once and reuses the answer', async () => {
    const [a, b] = [await node.add('one'), await node.add('two')];
    const ipfs = client(node.url);
    await ipfs.cat(a);
    const before = node.requests.length;
    await ipfs.cat(b);
    expect(node.requests.slice(before)).toHaveLength(1);
  });

  it('returns the exact bytes of a file', async () => {
    const cid = await node.add(binary);
    expect(cid).toMatch(/^bafkrei[a-z2-7]{52}$/);
    expect(await client(node.url).cat(cid)).toEqual(binary);
  });

  it('returns the exact bytes of a file inside a directory', async () => {
    const dir = await node.addDirectory({ 'a.json': '{"a":1}', 'data.bin': binary });
    const ipfs = client(node.url);
    expect(text(await ipfs.cat(`${dir}/a.json`))).toBe('{"a":1}');
    expect(await ipfs.cat(`${dir}/data.bin`)).toEqual(binary);
  });

  it('answers a directory itself as the server does: a gateway redirects once and lists it, kubo refuses', async () => {
    const dir = await node.addDirectory({ 'a.txt': 'a' });
    const ipfs = client(node.url);
    if (api === 'gateway') {
      expect(JSON.parse(text(await ipfs.cat(dir)))).toEqual({ 'a.txt': await node.add('a') });
      expect(node.requests.slice(-2)).toEqual([
        { method: 'GET', path: `/ipfs/${dir}` },
        { method: 'GET', path: `/ipfs/${dir}/` },
      ]);
    } else {
      const error = await rejection(ipfs.cat(dir));
      expect(error).toBeInstanceOf(IpfsUnavailableError);
      expect(error.message).toBe(
        `IPFS content from '${dir}' is not available: HTTP 500 Internal Server Error: this dag node is a directory`,
      );
    }
  });

  it('probes once for cat() calls that arrive together', async () => {
    const [a, b] = [await node.add('together a'), await node.add('together b')];
    const ipfs = client(node.url);
    const before = node.requests.length;
    const bytes = await Promise.all([ipfs.cat(a), ipfs.cat(b)]);
    expect(bytes.map(text)).toEqual(['together a', 'together b']);
    const probes = node.requests
      .slice(before)
      .filter((r) => r.method === 'HEAD' || r.path === '/api/v0/version');
    expect(probes).toHaveLength(2);
  });

  it('tolerates a trailing slash in the URL', async () => {
    const cid = await node.add('slash');
    expect(text(await client(`${node.url}/`).cat(cid))).toBe('slash');
  });

  it('gives IpfsTimeoutError for content the node keeps looking for', async () => {
    const cid = await node.add('held');
    node.hold(cid);
    try {
      const error = await rejection(client(node.url, SHORT_TIMEOUT).cat(cid));
      expect(error).toBeInstanceOf(IpfsTimeoutError);
      expect(error.message).toBe(`IPFS request to '${cid}' timed out`);
    } finally {
      node.release(cid);
    }
    expect(text(await client(node.url).cat(cid))).toBe('held');
  });

  it('gives IpfsTooLargeError for content over the limit, and the content exactly at it', async () => {
    const ipfs = client(node.url, { maxFileBytes: 1000 });
    const over = await node.add(new Uint8Array(1001).fill(1));
    const at = await node.add(new Uint8Array(1000).fill(2));
    const error = await rejection(ipfs.cat(over));
    expect(error).toBeInstanceOf(IpfsTooLargeError);
    expect(error.message).toBe(`IPFS content from '${over}' exceeds the 1000 bytes limit`);
    expect(await ipfs.cat(at)).toEqual(new Uint8Array(1000).fill(2));
  });

  it('stops reading a large answer at the limit', async () => {
    const big = await node.add(new Uint8Array(8 * 1024 * 1024).fill(3));
    const error = await rejection(client(node.url, { maxFileBytes: 100_000 }).cat(big));
    expect(error).toBeInstanceOf(IpfsTooLargeError);
  });

  it('gives IpfsUnavailableError with the status when the node answers 500', async () => {
    const cid = await node.add('fails once');
    const ipfs = client(node.url);
    await ipfs.cat(await node.add('warm up'));
    node.failNext(1);
    const error = await rejection(ipfs.cat(cid));
    expect(error).toBeInstanceOf(IpfsUnavailableError);
    expect(error.message).toMatch(new RegExp(`^IPFS content from '${cid}' is not available: HTTP 500`));
    expect(text(await ipfs.cat(cid))).toBe('fails once');
  });

  it('gives up on content the node does not have', async () => {
    const error = await rejection(client(node.url, SHORT_TIMEOUT).cat(UNKNOWN));
    // a gateway answers 404 at once; kubo's RPC looks until the client's timeout
    if (api === 'gateway') {
      expect(error).toBeInstanceOf(IpfsUnavailableError);
      expect(error.message).toMatch(/is not available: HTTP 404/);
    } else {
      expect(error).toBeInstanceOf(IpfsTimeoutError);
    }
  });

  it('stops a request in flight when the caller aborts, with the caller’s reason', async () => {
    const cid = await node.add('aborted');
    node.hold(cid);
    try {
      const controller = new AbortController();
      const pending = client(node.url).cat(cid, controller.signal);
      await vi.waitFor(() => expect(node.requests.at(-1)?.path).toContain(cid), { timeout: 5_000 });
      controller.abort(new Error('not needed any more'));
      expect((await rejection(pending)).message).toBe('not needed any more');
    } finally {
      node.release(cid);
    }
  });

  it('stops while it detects the API when the caller aborts', async () => {
    const controller = new AbortController();
    const ipfs = client(node.url);
    const pending = ipfs.cat(await node.add('never asked'), controller.signal);
    controller.abort(new Error('closing'));
    expect((await rejection(pending)).message).toBe('closing');
    // the abandoned detection is not kept: the next cat() detects afresh
    expect(text(await ipfs.cat(await node.add('asked')))).toBe('asked');
    expect(ipfs.api).toBe(api);
  });
});

describe('IPFS client detection', () => {
  let plain: Server;
  let plainUrl: string;

  beforeAll(async () => {
    plain = createServer((_req, res) => {
      res.writeHead(404).end('nothing here');
    });
    plainUrl = await listen(plain);
  });
  afterAll(() => new Promise<void>((resolve) => plain.close(() => resolve())));

  it('refuses a server that is neither a gateway nor an RPC API, naming its URL, and tries again next time', async () => {
    const ipfs = client(plainUrl);
    const error = await rejection(ipfs.cat(UNKNOWN));
    expect(error).toBeInstanceOf(IpfsInvalidServerError);
    expect(error.message).toBe(
      `'${plainUrl}' is neither an IPFS gateway nor an IPFS RPC API ` +
        '(gateway probe: HTTP 404 Not Found; RPC probe: HTTP 404 Not Found: nothing here)',
    );
    expect(ipfs.api).toBeNull();
    const again = await rejection(ipfs.cat(UNKNOWN));
    expect(again).toBeInstanceOf(IpfsInvalidServerError);
  });

  it('says the connection was refused on a closed port', async () => {
    const server = createServer();
    const url = await listen(server);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await rejection(client(url).cat(UNKNOWN));
    expect(error.message).toBe(
      `'${url}' is neither an IPFS gateway nor an IPFS RPC API ` +
        '(gateway probe: connection refused; RPC probe: connection refused)',
    );
  });

  it('keeps credentials out of messages', async () => {
    const withCredentials = plainUrl.replace('http://', 'http://user:secret@');
    const error = await rejection(client(withCredentials).cat(UNKNOWN));
    expect(error.message).toContain(`'${plainUrl}'`);
    expect(error.message).not.toContain('secret');
  });
});
