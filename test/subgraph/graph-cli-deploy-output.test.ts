// A deploy prints the URLs graph-cli reports back, so that the query URL README says to put in
// SUBGRAPH_URL can be copied from it, while the secrets of the deploy's own arguments stay hidden:
// the real graph-cli deploys to a loopback server answering as graph-node's admin endpoint
// (subgraph_deploy answers the subgraph's routes as graph-node does: ":8000/subgraphs/name/<name>")
// and one answering as an IPFS API, reached through URLs carrying credentials and keys. (graph-cli
// itself cannot reach an IPFS API through a URL with user info or a query.)
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runGraph } from '../../subgraph/scripts/graph-cli.ts';

const servers: Server[] = [];
afterAll(() => servers.forEach((server) => server.close()));

async function serve(handler: RequestListener): Promise<number> {
  const server = createServer(handler);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

/** the manifest's IPFS hash; graph-cli parses it as a CID before pinning it */
const MANIFEST_HASH = 'QmWmyoMoctfbAaiEs2G46gpeUmhqFRDW6KWo64y5r581Vz';

/** graph-node's admin endpoint: subgraph_deploy answers the routes of the name it was given */
const graphNodeAdmin = () =>
  serve((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { id, params } = JSON.parse(body) as { id: number; params: { name: string } };
      const result = {
        playground: `:8000/subgraphs/name/${params.name}/graphql`,
        queries: `:8000/subgraphs/name/${params.name}`,
      };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    });
  });

/** an IPFS API under a key's path that holds the manifest and pins it */
const ipfsApi = () =>
  serve((req, res) => {
    const path = new URL(req.url!, 'http://ipfs').pathname;
    if (path === '/key456/api/v0/cat') res.writeHead(200).end('specVersion: 0.0.5\n');
    else if (path === '/key456/api/v0/pin/add')
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"Pins":["${MANIFEST_HASH}"]}\n`);
    else res.writeHead(404).end();
  });

describe('the output of a deploy', () => {
  it('shows the query URL graph-node answers whole, and none of the secrets of the node and IPFS URLs or the deploy key', async () => {
    const nodePort = await graphNodeAdmin();
    const ipfsPort = await ipfsApi();
    const printed: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      await runGraph(
        [
          'deploy',
          'fund-protocol',
          '--ipfs-hash',
          MANIFEST_HASH,
          '--node',
          `http://deployer:pw777@127.0.0.1:${nodePort}/key123/?apikey=APIKEY42`,
          '--ipfs',
          `http://127.0.0.1:${ipfsPort}/key456/api/v0`,
          '--deploy-key',
          'DEPLOYKEY999',
          '--version-label',
          'v1.0.0',
        ],
        { stream: true },
      );
    } finally {
      write.mockRestore();
    }
    const output = printed.join('');
    expect(output).toContain(`Deploying to Graph node http://127.0.0.1:${nodePort}/…\n`);
    expect(output).toContain('Deployed to http://127.0.0.1:8000/subgraphs/name/fund-protocol/graphql\n');
    expect(output).toContain('Queries (HTTP):     http://127.0.0.1:8000/subgraphs/name/fund-protocol\n');
    for (const secret of ['pw777', 'deployer', 'key123', 'APIKEY42', 'key456', 'DEPLOYKEY999'])
      expect(output).not.toContain(secret);
  });
});
