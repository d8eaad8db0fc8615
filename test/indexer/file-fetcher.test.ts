// The file fetcher against a real loopback kubo RPC API: fetched bytes, retries with a doubling
// backoff, the bound on requests in flight, forget(), and a close() that leaves nothing behind.
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileFetcher, type FileFetcherOptions } from '../../indexer/follower/file-fetcher.ts';
import { createIpfsClient, type IpfsClient } from '../../indexer/follower/ipfs-client.ts';
import { waitFor } from './devnet-indexers.ts';
import { startIpfsNode, type IpfsNode } from './ipfs-node.ts';

const text = (bytes: Uint8Array | undefined) =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);

let node: IpfsNode;
const fetchers: FileFetcher[] = [];

beforeAll(async () => {
  node = await startIpfsNode({ api: 'rpc' });
});
afterEach(() => {
  for (const fetcher of fetchers.splice(0)) fetcher.close();
  node.failNext(0);
});
afterAll(() => node.close());

// the real client, counting the cat() calls the fetcher makes and those not yet settled
function countingClient(timeoutMs = 10_000, maxFileBytes = 1024 * 1024) {
  const client = createIpfsClient({ url: node.url, timeoutMs, maxFileBytes });
  const calls: string[] = [];
  let pending = 0;
  const counting: Pick<IpfsClient, 'cat'> & { calls: string[]; readonly pending: number } = {
    calls,
    get pending() {
      return pending;
    },
    cat(path, signal) {
      calls.push(path);
      pending++;
      return client.cat(path, signal).finally(() => pending--);
    },
  };
  return counting;
}

function fetcher(options: Partial<FileFetcherOptions> & Pick<FileFetcherOptions, 'client'>): FileFetcher {
  const created = new FileFetcher({ minRetryMs: 20, maxRetryMs: 1_000, ...options });
  fetchers.push(created);
  return created;
}

const catRequests = () => node.requests.filter((request) => request.path.startsWith('/api/v0/cat'));

/** the wait before the next try that a failure's log line announces, in ms */
function announcedWait(line: string): number {
  const wait = /trying again in (\d+) ms$/.exec(line)?.[1];
  if (wait === undefined) throw new Error(`no wait in milliseconds announced: ${line}`);
  return Number(wait);
}

/**
 * Resolves once a fetcher of its own, created now, has retried a path that fails, after a wait
 * longer than `ms`. Node runs timers in the order they fall due, with the promise callbacks each
 * queues before the next: by then every retry timer of at most `ms` started before this call has
 * fired, and whatever it started has called cat(). A sign that such a retry had its chance, where
 * a fixed sleep would prove nothing on a slow machine.
 */
async function retriedAfterLongerThan(ms: number): Promise<void> {
  const failing = await node.add(new Uint8Array(2048));
  const client = countingClient(10_000, 1024);
  const witness = fetcher({ client, minRetryMs: ms + 1 });
  witness.want(failing);
  await waitFor(() => expect(client.calls).toHaveLength(2));
  witness.close();
}

describe('FileFetcher', () => {
  it('makes fetched content available through content()', async () => {
    const cid = await node.add('{"name":"fund"}');
    const client = countingClient();
    const files = fetcher({ client });
    files.want(cid);
    files.want(cid);
    expect(files.waiting).toBe(1);
    expect(files.content(cid)).toBeUndefined();
    await waitFor(() => expect(files.content(cid)).toBeDefined());
    expect(text(files.content(cid))).toBe('{"name":"fund"}');
    expect(files.waiting).toBe(0);
    // wanted again once fetched: nothing more to do
    files.want(cid);
    expect(files.waiting).toBe(0);
    expect(client.calls).toEqual([cid]);
  });

  it('retries a failing path after a doubling backoff, logging each failure with the path', async () => {
    const cid = await node.add('eventually');
    const client = countingClient();
    const log: string[] = [];
    const files = fetcher({ client, log: (line) => log.push(line) });
    node.failNext(2);
    files.want(cid);
    await waitFor(() => expect(files.content(cid)).toBeDefined());
    expect(text(files.content(cid))).toBe('eventually');
    expect(client.calls).toEqual([cid, cid, cid]);
    expect(log).toHaveLength(2);
    expect(log[0]).toContain(cid);
    expect(log[0]).toContain(`IPFS content from '${cid}' is not available: HTTP 500`);
    expect(log[0]).toMatch(/trying again in 20 ms$/);
    expect(log[1]).toContain(cid);
    expect(log[1]).toMatch(/trying again in 40 ms$/);
  });

  it('caps the backoff at maxRetryMs', async () => {
    const cid = await node.add('capped');
    const log: string[] = [];
    const files = fetcher({ client: countingClient(), maxRetryMs: 30, log: (line) => log.push(line) });
    node.failNext(3);
    files.want(cid);
    await waitFor(() => expect(files.content(cid)).toBeDefined());
    expect(log.map((line) => line.replace(/.*trying again in /, ''))).toEqual(['20 ms', '30 ms', '30 ms']);
  });

  it('retries a timeout like any other failure', async () => {
    const cid = await node.add('slow at first');
    const log: string[] = [];
    const files = fetcher({ client: countingClient(300), log: (line) => log.push(line) });
    node.hold(cid);
    files.want(cid);
    await waitFor(() => expect(log).toHaveLength(1));
    node.release(cid);
    await waitFor(() => expect(files.content(cid)).toBeDefined());
    expect(log[0]).toContain(`IPFS request to '${cid}' timed out`);
  });

  it('keeps at most `concurrency` requests in flight, starting the queued ones in want() order', async () => {
    const cids = await Promise.all(Array.from({ length: 12 }, (_, i) => node.add(`held ${i}`)));
    for (const cid of cids) node.hold(cid);
    try {
      const before = catRequests().length;
      const client = countingClient();
      const files = fetcher({ client, concurrency: 3 });
      for (const cid of cids) files.want(cid);
      expect(files.waiting).toBe(12);
      await waitFor(() => expect(catRequests().length - before).toBe(3));
      expect(catRequests().slice(before)).toEqual(
        cids.slice(0, 3).map((cid) => expect.objectContaining({ path: `/api/v0/cat?arg=${cid}` })),
      );
      // The fetcher starts requests when a path is wanted and when one settles, nothing else: all
      // twelve were wanted, none has settled, and it has called cat() for the first three only. A
      // fourth request could only come from a fourth cat() call.
      expect(client.calls).toEqual(cids.slice(0, 3));
      expect(client.pending).toBe(3);

      node.release(cids[1]!);
      await waitFor(() => expect(files.content(cids[1]!)).toBeDefined());
      await waitFor(() => expect(catRequests().length - before).toBe(4));
      expect(catRequests().at(-1)!.path).toBe(`/api/v0/cat?arg=${cids[3]}`);
      // the one that settled freed one slot, taken by the next in want() order, and no other
      expect(client.calls).toEqual(cids.slice(0, 4));
      expect(client.pending).toBe(3);
      expect(files.waiting).toBe(11);
    } finally {
      for (const cid of cids) node.release(cid);
    }
  });

  it('forget() stops the retries of a path, and a later want() fetches it again', async () => {
    const cid = await node.add('forgotten');
    const client = countingClient();
    const log: string[] = [];
    const files = fetcher({ client, log: (line) => log.push(line) });
    node.failNext(1_000);
    files.want(cid);
    // forgotten while it waits to be retried: it has failed twice or more, and has no request in flight
    await waitFor(() => {
      expect(log.length).toBeGreaterThanOrEqual(2);
      expect(client.pending).toBe(0);
    });
    files.forget(cid);
    expect(files.waiting).toBe(0);
    const calls = client.calls.length;
    await retriedAfterLongerThan(announcedWait(log.at(-1)!));
    expect(client.calls).toHaveLength(calls);

    node.failNext(0);
    files.want(cid);
    await waitFor(() => expect(files.content(cid)).toBeDefined());
    expect(client.calls).toHaveLength(calls + 1);
  });

  it('forget() drops fetched bytes', async () => {
    const cid = await node.add('dropped');
    const client = countingClient();
    const files = fetcher({ client });
    files.want(cid);
    await waitFor(() => expect(files.content(cid)).toBeDefined());
    files.forget(cid);
    expect(files.content(cid)).toBeUndefined();
    files.want(cid);
    await waitFor(() => expect(files.content(cid)).toBeDefined());
    expect(client.calls).toEqual([cid, cid]);
  });

  it('close() aborts the requests in flight and starts no retry', async () => {
    // too large for the client: retried every 20 ms or so until close()
    const failing = await node.add(new Uint8Array(2048));
    const held = await node.add('held at close');
    node.hold(held);
    try {
      const client = countingClient(600_000, 1024);
      const log: string[] = [];
      const files = fetcher({ client, log: (line) => log.push(line) });
      files.want(failing);
      files.want(held);
      // closed while the failing path waits to be retried (each of its tries has failed) and the
      // held one is in flight
      await waitFor(() => {
        expect(log.length).toBeGreaterThanOrEqual(2);
        expect(client.calls.filter((path) => path === failing)).toHaveLength(log.length);
        expect(catRequests()).toContainEqual({ method: 'POST', path: `/api/v0/cat?arg=${held}` });
      });
      expect(log[0]).toContain(`IPFS content from '${failing}' exceeds the 1024 bytes limit`);
      files.close();
      await waitFor(() => expect(client.pending).toBe(0));
      const calls = client.calls.length;
      await retriedAfterLongerThan(announcedWait(log.at(-1)!));
      expect(client.calls).toHaveLength(calls);
      expect(files.content(held)).toBeUndefined();
      expect(files.waiting).toBe(0);
    } finally {
      node.release(held);
    }
  });

  it('close() leaves nothing that keeps the process alive or rejects unhandled', async () => {
    const held = await node.add('held in child');
    // over the child's 1000 bytes limit: a failure, and a retry timer
    const failing = await node.add(new Uint8Array(2000));
    node.hold(held);
    // The child exits on its own only if close() aborted the held request (its timeout is 10 min)
    // and no retry timer holds it; an unhandled rejection would make its exit code 1.
    const script = `
      const { FileFetcher } = await import(${JSON.stringify(new URL('../../indexer/follower/file-fetcher.ts', import.meta.url).href)});
      const { createIpfsClient } = await import(${JSON.stringify(new URL('../../indexer/follower/ipfs-client.ts', import.meta.url).href)});
      const client = createIpfsClient({ url: process.env.IPFS_URL, timeoutMs: 600000, maxFileBytes: 1000 });
      const files = new FileFetcher({ client, minRetryMs: 600000, log: (line) => console.log(line) });
      files.want(process.env.FAILING);
      files.want(process.env.HELD);
      process.stdin.once('data', () => {
        files.close();
        process.stdin.destroy();
        console.log('closed');
      });
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, IPFS_URL: node.url, HELD: held, FAILING: failing },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => {
        expect(stdout).toContain(failing);
        expect(catRequests()).toContainEqual({ method: 'POST', path: `/api/v0/cat?arg=${held}` });
      });
      child.stdin.write('close\n');
      expect(await exited).toBe(0);
      expect(stdout).toContain('closed');
      expect(stderr).toBe('');
    } finally {
      child.kill();
      node.release(held);
    }
  });
});
