// What the indexer says of an RPC_URL whose 2xx answer is JSON, or a page, but no JSON-RPC answer (a
// GraphQL server's {"errors": …}, a portal's page): the start-up check and the follower's retry line
// quote it (indexer/follower/rpc-fetch.ts), where viem alone reported a JavaScript TypeError
// ("Cannot read properties of undefined (reading 'error')"). The node is a real loopback HTTP server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { checkChain, createChainSource } from '../../indexer/chain-node.ts';

/** graph-node's answer to a query while its database is down */
const GRAPHQL_ERRORS = '{"errors":[{"message":"Store error: database unavailable"}]}';
const REFUSAL = 'the node answered something that is no JSON-RPC answer: ';

const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

/**
 * A server answering every request with `answer` and HTTP 200, or a batch with `batchRefusal` when
 * given (as a node that takes no batches does); its URL.
 */
async function nodeAnswering(answer: string, batchRefusal?: string): Promise<string> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const refused = body.startsWith('[') ? batchRefusal : undefined;
      response.writeHead(200, { 'content-type': 'application/json' }).end(refused ?? answer);
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Why the start-up check refuses the node at `rpcUrl`. */
async function startUpRefusal(rpcUrl: string): Promise<string> {
  return checkChain(rpcUrl, 'devnet').then(
    () => 'accepted',
    (error: Error) => error.message,
  );
}

describe('an RPC_URL answering JSON that is no JSON-RPC answer', () => {
  it('is refused at start-up quoting what it answered', async () => {
    expect(await startUpRefusal(await nodeAnswering(GRAPHQL_ERRORS))).toBe(
      `the node at RPC_URL does not answer eth_chainId: HTTP request failed: ${REFUSAL}${GRAPHQL_ERRORS}`,
    );
  });

  it("is quoted in the follower's retry line", async () => {
    const rpcUrl = await nodeAnswering(GRAPHQL_ERRORS);
    const stop = new AbortController();
    const lines: string[] = [];
    const chain = createChainSource({ rpcUrl, rpcTimeoutMs: 5_000 }, stop.signal, (line) => {
      lines.push(line);
      stop.abort();
    });
    await chain.headNumber().catch(() => undefined);
    expect(lines).toEqual([
      `rpc eth_blockNumber failed (HTTP request failed: ${REFUSAL}${GRAPHQL_ERRORS}); retrying in 250 ms`,
    ]);
  });

  it('is quoted when it answers the single calls sent after the node refused batches', async () => {
    const rpcUrl = await nodeAnswering(
      GRAPHQL_ERRORS,
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}',
    );
    expect(await startUpRefusal(rpcUrl)).toBe(
      `the node at RPC_URL does not answer eth_chainId: HTTP request failed: ${REFUSAL}${GRAPHQL_ERRORS}`,
    );
  });

  it('is cut, with the words before it, to 200 characters on one line when it is long', async () => {
    const long = JSON.stringify({ data: { note: 'x'.repeat(300) } });
    expect(await startUpRefusal(await nodeAnswering(long))).toBe(
      `the node at RPC_URL does not answer eth_chainId: HTTP request failed: ${`${REFUSAL}${long}`.slice(0, 199)}…`,
    );
  });

  it('is quoted by its title when it is a page', async () => {
    const page = '<html><head><title>Sign in to the RPC portal</title></head><body>…</body></html>';
    expect(await startUpRefusal(await nodeAnswering(page))).toBe(
      `the node at RPC_URL does not answer eth_chainId: HTTP request failed: ${REFUSAL}Sign in to the RPC portal`,
    );
  });
});
