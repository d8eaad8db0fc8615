// What the indexer's error messages quote of a server's answer that is not what it asked for: a
// proxy's HTML error page in front of the node or a file server is quoted by its title, on one line,
// in at most 200 characters (the README's promise, rpc-errors.ts inBrief), whichever client met it:
// the handlers' chain reader (its reads, its batches of declared calls and a node's refusal of
// batches) or the file clients' bounded HTTP reads. These messages become the follower's log lines (a range's retry reason).
// The server is a real loopback HTTP server answering nginx's 502 page (and a long plain-text 503).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChainReader,
  ChainReadPending,
  type ClosableChainReader,
} from '../../indexer/follower/chain-reader.ts';
import { createHandlerChainReader } from '../../indexer/chain-node.ts';
import { createArweaveClient } from '../../indexer/follower/arweave-client.ts';
import { createIpfsClient } from '../../indexer/follower/ipfs-client.ts';

const BLOCK_HASH = `0x${'ab'.repeat(32)}` as const;
const ADDRESS = `0x${'12'.repeat(20)}` as const;
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';

// nginx's page, with the padding nginx adds for browsers that replace short error pages: well over
// 200 characters, several lines, the title first
const BAD_GATEWAY_PAGE = [
  '<html>',
  '<head><title>502 Bad Gateway</title></head>',
  '<body>',
  '<center><h1>502 Bad Gateway</h1></center>',
  '<hr><center>nginx/1.25.3</center>',
  '</body>',
  '</html>',
  ...Array.from({ length: 6 }, () => '<!-- a padding to disable MSIE and Chrome friendly error page -->'),
  '',
].join('\r\n');

// a proxy's answer in plain text, many lines of it
const LONG_PLAIN_ANSWER = Array.from({ length: 20 }, (_, i) => `upstream node ${i} is not reachable`).join(
  '\n',
);

/**
 * The server's answer to every request but the IPFS gateway probe: nginx's 502 page; to `/plain`,
 * a long plain-text 503; to `/batch-refused`, a JSON-RPC error refusing batches in many lines.
 */
function startBadGateway(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    // the IPFS client's gateway probe (only-if-cached) finds a gateway that lacks the probe block
    if (request.method === 'HEAD') {
      response.writeHead(412).end();
      return;
    }
    if (request.url === '/batch-refused') {
      const error = { code: -32600, message: `${LONG_PLAIN_ANSWER}\nbatch requests are not supported` };
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error }));
      return;
    }
    if (request.url === '/plain') {
      response.writeHead(503, { 'content-type': 'text/plain' }).end(LONG_PLAIN_ANSWER);
      return;
    }
    response.writeHead(502, 'Bad Gateway', { 'content-type': 'text/html' }).end(BAD_GATEWAY_PAGE);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

/**
 * The error a chain read throws, once it is answered: a read cut short (ChainReadPending: this
 * thread, which serves the loopback server too, was blocked) is made again after its answer came.
 */
async function chainReadError(read: () => unknown): Promise<Error> {
  for (;;) {
    try {
      read();
    } catch (error) {
      if (!(error instanceof ChainReadPending)) return error as Error;
      await error.answered(AbortSignal.timeout(30_000));
      continue;
    }
    throw new Error('the read returned');
  }
}

let badGateway: { server: Server; url: string };

beforeAll(async () => {
  badGateway = await startBadGateway();
});

afterAll(async () => {
  await new Promise((resolve) => badGateway?.server.close(resolve));
});

describe("a proxy's HTML error page in an error message", () => {
  let reader: ClosableChainReader;

  beforeAll(() => {
    reader = createChainReader({ rpcUrl: badGateway.url, timeoutMs: 10_000 });
  });

  afterAll(async () => {
    await reader?.close();
  });

  it("is quoted by its title when it answers a handler's chain read", async () => {
    const error = await chainReadError(() => reader.balance(ADDRESS, BLOCK_HASH));
    expect(error.message).toBe('eth_getBalance: HTTP 502: 502 Bad Gateway');
  });

  it("is quoted by its title when it answers a batch of a handler's declared calls", async () => {
    const calls = [
      { to: ADDRESS, data: '0x12345678' as const },
      { to: ADDRESS, data: '0x87654321' as const },
    ];
    const error = await chainReadError(() => reader.prefetchCalls(calls, BLOCK_HASH));
    expect(error.message).toBe(
      'eth_call: the node did not answer a batch of 2 declared calls: HTTP 502: 502 Bad Gateway',
    );
  });

  it("is cut to 200 characters on one line when a long plain-text answer answers a handler's chain read", async () => {
    const plainReader = createChainReader({ rpcUrl: `${badGateway.url}/plain`, timeoutMs: 10_000 });
    try {
      const error = await chainReadError(() => plainReader.code(ADDRESS, BLOCK_HASH));
      const quoted = LONG_PLAIN_ANSWER.replace(/\n/g, ' ').slice(0, 199);
      expect(error.message).toBe(`eth_getCode: HTTP 503: ${quoted}…`);
    } finally {
      await plainReader.close();
    }
  });

  it("is cut to 200 characters on one line in the log line of a node's refusal of batches", async () => {
    const lines: string[] = [];
    const refusing = createHandlerChainReader(
      { rpcUrl: `${badGateway.url}/batch-refused`, rpcTimeoutMs: 10_000 },
      (line) => lines.push(line),
    );
    try {
      const calls = [
        { to: ADDRESS, data: '0x12345678' as const },
        { to: ADDRESS, data: '0x87654321' as const },
      ];
      await chainReadError(() => refusing.prefetchCalls(calls, BLOCK_HASH));
      const quoted = LONG_PLAIN_ANSWER.replace(/\n/g, ' ').slice(0, 199);
      expect(lines).toEqual([
        `rpc: the node refused a JSON-RPC batch ("${quoted}…"); handlers' declared calls go out one call at a time from now on`,
      ]);
    } finally {
      await refusing.close();
    }
  });

  it('is quoted by its title when it answers an Arweave file request', async () => {
    const arweave = createArweaveClient({ url: badGateway.url, timeoutMs: 10_000, maxFileBytes: 1024 });
    await expect(arweave.cat('some-transaction-id')).rejects.toHaveProperty(
      'message',
      "Arweave file 'some-transaction-id' is not available: HTTP 502 Bad Gateway: 502 Bad Gateway",
    );
  });

  it('is quoted by its title when it answers an IPFS gateway request', async () => {
    const ipfs = createIpfsClient({ url: badGateway.url, timeoutMs: 10_000, maxFileBytes: 1024 });
    await expect(ipfs.cat(CID)).rejects.toHaveProperty(
      'message',
      `IPFS content from '${CID}' is not available: HTTP 502 Bad Gateway: 502 Bad Gateway`,
    );
  });
});
