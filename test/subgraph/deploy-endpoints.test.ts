// Before deploying to a self-hosted graph-node (and in the dry run), GRAPH_NODE_URL and
// GRAPH_IPFS_URL are checked against loopback servers standing for each: a refusal names the
// variable, the URL without its credentials or path, and the cause, instead of graph-cli's
// "HTTP error creating the subgraph: ECONNREFUSED" above an oclif stack.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { checkNodeEndpoints } from '../../subgraph/scripts/deploy-endpoints.ts';
import { closedPort } from '../reliability/servers/ports.ts';

const servers: Server[] = [];
afterAll(() => servers.forEach((server) => server.close()));

async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  servers.push(server);
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** graph-node's admin endpoint answers a method it lacks as JSON-RPC does */
const graphNode = () =>
  serve((_req, res) =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}'),
  );
const ipfs = () =>
  serve((req, res) =>
    req.url === '/api/v0/version'
      ? res.writeHead(200, { 'content-type': 'application/json' }).end('{"Version":"0.34.1"}')
      : res.writeHead(404).end(),
  );
/** a web server that is neither: Python's http.server answers a POST with 501 */
const webServer = () => serve((_req, res) => res.writeHead(501).end('Unsupported method'));

describe('the graph-node endpoint checks', () => {
  it('accept a graph-node admin endpoint and an IPFS API', async () => {
    await expect(
      checkNodeEndpoints({ nodeUrl: `http://${await graphNode()}`, ipfsUrl: `http://${await ipfs()}/` }),
    ).resolves.toBeUndefined();
  });

  it('name GRAPH_NODE_URL, without its credentials, when nothing listens there', async () => {
    const port = await closedPort();
    await expect(
      checkNodeEndpoints({
        nodeUrl: `http://admin:hunter2@127.0.0.1:${port}`,
        ipfsUrl: `http://${await ipfs()}`,
      }),
    ).rejects.toThrow(
      new Error(
        `GRAPH_NODE_URL (http://127.0.0.1:${port}/…) cannot be reached: connect ECONNREFUSED 127.0.0.1:${port}`,
      ),
    );
  });

  it('name GRAPH_NODE_URL when a server that is no graph-node answers there', async () => {
    const host = await webServer();
    await expect(
      checkNodeEndpoints({ nodeUrl: `http://${host}`, ipfsUrl: `http://${await ipfs()}` }),
    ).rejects.toThrow(
      `GRAPH_NODE_URL (http://${host}) answered HTTP 501 without JSON-RPC: it is no graph-node admin endpoint`,
    );
  });

  it('name GRAPH_IPFS_URL when it is no IPFS API', async () => {
    const host = await webServer();
    await expect(
      checkNodeEndpoints({ nodeUrl: `http://${await graphNode()}`, ipfsUrl: `http://${host}` }),
    ).rejects.toThrow(
      `GRAPH_IPFS_URL (http://${host}) answered /api/v0/version with HTTP 501 and no IPFS version: it is no IPFS API`,
    );
  });
});
