// What the service checks in network mode before it listens (gateway/start-up-checks.ts), against
// real servers on loopback: the harness's indexer and devnet, a second anvil (nothing deployed, then
// given Sepolia's chain id), and HTTP servers that are no subgraph. A wrong SUBGRAPH_URL, RPC_URL or
// REGISTRY is refused with what to fix; an unreachable upstream is waited for, within a bound. And
// what the gateway does with such a chain at request time: a contract read that returns no data is
// INTERNAL (no retry mends it), and health's chainId is the chain the RPC serves.
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { createRpcClient } from '../../devnet/rpc.ts';
import { MAX_ANSWER_BYTES } from '../../common/bounded-fetch.ts';
import {
  checkChainMatchesRegistry,
  checkIndexingStatusEndpoint,
  checkSubgraphEndpoint,
  type UpstreamWait,
} from '../../gateway/start-up-checks.ts';
import { graphql, indexedStack, REGISTRY_FILE, testGateway, type IndexedStack } from '../harness/stack.ts';
import { closedPort } from '../reliability/servers/ports.ts';

const SEPOLIA_CHAIN_ID = 11155111;
/** graph-node's answer, with HTTP 200, to any query while its database is down */
const DATABASE_UNAVAILABLE = '{"errors":[{"message":"Store error: database unavailable"}]}';
const servers: Server[] = [];
let stack: IndexedStack;
let anvil: AnvilInstance;

beforeAll(async () => {
  stack = await indexedStack();
  anvil = await startAnvil();
});
afterAll(async () => {
  servers.forEach((server) => server.close());
  await anvil?.stop();
});

/** A loopback HTTP server answering with `handler`; its base URL. */
async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A short wait, recording what it tells. */
function shortWait(): UpstreamWait & { lines: string[] } {
  const lines: string[] = [];
  return { waitMs: 600, retryEveryMs: 100, log: (line) => lines.push(line), lines };
}

const subgraph = (url: string) => checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, shortWait());
const chain = (rpcUrl: string, wait = shortWait()) =>
  checkChainMatchesRegistry({ rpcUrl, timeoutMs: 2_000, maxBatch: 1 }, stack.registry, REGISTRY_FILE, wait);

describe('the SUBGRAPH_URL check', () => {
  it('accepts a graph-node-dialect subgraph, and gives the deployment it serves', async () => {
    await expect(subgraph(stack.subgraphUrl)).resolves.toBe(inject('indexer').deployment);
  });

  it('refuses a path that serves no subgraph with graph-node’s own words, the path hidden', async () => {
    const typo = stack.subgraphUrl.replace(/fund-protocol$/, 'fund-protocl');
    const refusal = subgraph(typo);
    await expect(refusal).rejects.toThrow(
      'it answered a _meta query with HTTP 404 and the errors "no subgraph is served at …": it serves no graph-node subgraph there',
    );
    await expect(refusal).rejects.not.toThrow(/fund-protocl/);
  });

  it('refuses a web server that answers HTML', async () => {
    const url = await serve((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'),
    );
    await expect(subgraph(url)).rejects.toThrow(
      'it answered a _meta query with HTTP 200 (text/html), not JSON: it is no graph-node subgraph endpoint',
    );
  });

  it('refuses a GraphQL server of another schema', async () => {
    const url = await serve((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"hello":"world"}}'),
    );
    await expect(subgraph(url)).rejects.toThrow('without _meta.block.number');
  });

  it('waits for an unreachable subgraph, then refuses naming the cause', async () => {
    const wait = shortWait();
    const url = `http://127.0.0.1:${await closedPort()}/subgraphs/name/x`;
    await expect(checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, wait)).rejects.toThrow(
      /^no answer within 0\.6 s: .*ECONNREFUSED/,
    );
    expect(wait.lines).toEqual([
      expect.stringMatching(/^waiting up to 0\.6 s for SUBGRAPH_URL \(.*ECONNREFUSED/),
    ]);
  });

  it('goes on once a restarting subgraph answers', async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests += 1;
      // a proxy in front of a graph-node that is starting: 503 twice, then the subgraph
      if (requests <= 2) res.writeHead(503).end();
      else
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"data":{"_meta":{"block":{"number":7},"hasIndexingErrors":false}}}');
    });
    const wait = shortWait();
    // its _meta names no deployment
    await expect(checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, wait)).resolves.toBeNull();
    expect(requests).toBe(3);
    expect(wait.lines).toHaveLength(1);
  });
});

describe('the SUBGRAPH_URL check meeting a graph-node that fails', () => {
  it('waits for a graph-node whose database is unavailable, then refuses with its words', async () => {
    const url = await serve((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(DATABASE_UNAVAILABLE),
    );
    const wait = shortWait();
    const said = 'it answered a _meta query with HTTP 200 and the errors "Store error: database unavailable"';
    await expect(checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, wait)).rejects.toThrow(
      new Error(`still failing after 0.6 s: ${said}`),
    );
    expect(wait.lines).toEqual([`waiting up to 0.6 s for SUBGRAPH_URL (${said}); retrying every 0.1 s`]);
  });

  it('waits for a subgraph whose connection closes in the middle of its answer, then refuses naming that', async () => {
    const url = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"data":{"_meta":', () => req.socket.destroy());
    });
    const wait = shortWait();
    await expect(checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, wait)).rejects.toThrow(
      new Error('no answer within 0.6 s: other side closed'),
    );
    expect(wait.lines).toEqual([
      'waiting up to 0.6 s for SUBGRAPH_URL (other side closed); retrying every 0.1 s',
    ]);
  });

  it('refuses a server failing with a plain-text HTTP 500, quoting it, as a failure rather than as no subgraph', async () => {
    // graph-node's answer to a request it failed on (server/http/src/service.rs, InternalError)
    const url = await serve((_req, res) =>
      res
        .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Internal server error: Failed to read request body'),
    );
    await expect(subgraph(url)).rejects.toThrow(
      new Error(
        'it answered a _meta query with HTTP 500 (text/plain; charset=utf-8): "Internal server error: Failed to read request body": the server failed answering it (its log says why)',
      ),
    );
  });

  it('refuses an answer larger than the service reads', async () => {
    let sent = 0;
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const mebibyte = Buffer.alloc(2 ** 20, 'a');
      const more = () => {
        while (sent <= MAX_ANSWER_BYTES) {
          sent += mebibyte.length;
          if (!res.write(mebibyte)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', () => (sent = Number.POSITIVE_INFINITY));
      more();
    });
    await expect(subgraph(url)).rejects.toThrow(
      new Error(
        'it answered more than 32 MiB, the most the service reads of one answer: it is no graph-node subgraph endpoint',
      ),
    );
  });
});

describe('the SUBGRAPH_URL check meeting a subgraph that has indexed nothing yet', () => {
  /** graph-node's answer to every query of a deployment before its first block (store/postgres/src/deployment.rs) */
  const NOT_STARTED =
    'Store error: query execution failed: Subgraph `QmTVqahxEPumHx4y1dUKpH9SAtP5ZqREhDm6JfRDkcWSwn` has not started syncing yet. Wait for it to ingest a few blocks before querying it';
  const answering = (message: string) => (_req: IncomingMessage, res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ message }] }));

  it('waits for a graph-node deployment that has not started syncing, then refuses saying it has indexed nothing yet', async () => {
    const url = await serve(answering(NOT_STARTED));
    const wait = shortWait();
    const said = `the subgraph exists but has indexed nothing yet: it answered a _meta query with HTTP 200 and the errors ${JSON.stringify(NOT_STARTED)}`;
    await expect(checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, wait)).rejects.toThrow(
      new Error(
        `still failing after 0.6 s: ${said}: start the service once its indexer has indexed the first blocks (its indexing status shows how far it is)`,
      ),
    );
    expect(wait.lines).toEqual([`waiting up to 0.6 s for SUBGRAPH_URL (${said}); retrying every 0.1 s`]);
  });

  it('goes on once the deployment has indexed a block', async () => {
    let requests = 0;
    const url = await serve((req, res) => {
      requests += 1;
      if (requests <= 2) answering(NOT_STARTED)(req, res);
      else
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            '{"data":{"_meta":{"block":{"number":1},"deployment":"QmTVqahxEPumHx4y1dUKpH9SAtP5ZqREhDm6JfRDkcWSwn","hasIndexingErrors":false}}}',
          );
    });
    await expect(checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, shortWait())).resolves.toBe(
      'QmTVqahxEPumHx4y1dUKpH9SAtP5ZqREhDm6JfRDkcWSwn',
    );
    expect(requests).toBe(3);
  });

  it('waits for a subgraph The Graph’s gateway has no indexers for yet', async () => {
    const url = await serve(answering('no indexers found'));
    await expect(checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, shortWait())).rejects.toThrow(
      /^still failing after 0\.6 s: the subgraph exists but has indexed nothing yet: .*"no indexers found"/,
    );
  });

  it('refuses at once an API key The Graph’s gateway does not accept, saying what to fix', async () => {
    const url = await serve(answering('auth error: API key not found'));
    const wait = shortWait();
    await expect(checkSubgraphEndpoint({ url, timeoutMs: 2_000 }, wait)).rejects.toThrow(
      new Error(
        `it answered a _meta query with HTTP 200 and the errors "auth error: API key not found": The Graph's gateway refuses the API key in SUBGRAPH_URL: check the key in Subgraph Studio (its billing and spending limit, and the subgraphs and domains it is authorized for), or put another key in SUBGRAPH_URL`,
      ),
    );
    expect(wait.lines).toEqual([]);
  });
});

describe('the SUBGRAPH_STATUS_URL check meeting a graph-node that fails', () => {
  it('waits for a status API whose database is unavailable, then refuses with its words', async () => {
    const url = await serve((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(DATABASE_UNAVAILABLE),
    );
    const wait = shortWait();
    const said =
      'it answered an indexingStatuses query with HTTP 200 and the errors "Store error: database unavailable"';
    await expect(
      checkIndexingStatusEndpoint({ url, timeoutMs: 2_000 }, 'QmDeployment', wait),
    ).rejects.toThrow(new Error(`still failing after 0.6 s: ${said}`));
    expect(wait.lines).toEqual([
      `waiting up to 0.6 s for SUBGRAPH_STATUS_URL (${said}); retrying every 0.1 s`,
    ]);
  });
});

describe('the RPC_URL check and the chain at request time', () => {
  it('accepts the chain the registry describes', async () => {
    await expect(chain(stack.devnet.rpcUrl)).resolves.toBeUndefined();
  });

  it('refuses an endpoint whose answer to eth_chainId is no JSON-RPC result, such as a GraphQL server’s, saying what RPC_URL should be', async () => {
    // a GraphQL server answering a body without a query with HTTP 200, as graph-node once did
    const url = await serve((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"errors":[{"message":"The query is empty"}]}'),
    );
    await expect(chain(url)).rejects.toThrow(
      new Error(
        "its answer to eth_chainId is no JSON-RPC result (Cannot convert undefined to a BigInt): point RPC_URL at the chain's JSON-RPC endpoint",
      ),
    );
  });

  it('refuses a subgraph endpoint, which answers a JSON-RPC request HTTP 400', async () => {
    await expect(chain(stack.subgraphUrl)).rejects.toThrow(
      new Error("it does not answer eth_chainId: HTTP 400: point RPC_URL at the chain's JSON-RPC endpoint"),
    );
  });

  it('refuses a chain without code at the registry’s addresses, naming the file, fields and addresses', async () => {
    const refusal = chain(anvil.rpcUrl);
    await expect(refusal).rejects.toThrow(
      `REGISTRY ${REGISTRY_FILE} names addresses without contract code on chain 31337: `,
    );
    const vault = stack.registry.funds[0]!.vault;
    await expect(refusal).rejects.toThrow(`funds[0].vault ${vault}`);
    await expect(refusal).rejects.toThrow(/contracts\[1\]\.address \(FundRegistry\) 0x/);
  });

  it('refuses a registry whose funds’ decimals, share token and policy disagree with their contracts, naming each field', async () => {
    const registry = structuredClone(stack.registry);
    const [harbor, summit] = registry.funds;
    harbor!.baseAsset.decimals = 18;
    harbor!.shareToken = summit!.shareToken;
    const kelly = registry.policies.find((p) => p.slug === summit!.policy)!;
    const own = registry.policies.find((p) => p.slug === harbor!.policy)!;
    harbor!.policy = kelly.slug;
    const refusal = checkChainMatchesRegistry(
      { rpcUrl: stack.devnet.rpcUrl, timeoutMs: 2_000, maxBatch: 1 },
      registry,
      REGISTRY_FILE,
      shortWait(),
    );
    await expect(refusal).rejects.toThrow(
      new Error(
        `REGISTRY ${REGISTRY_FILE} disagrees with the contracts on chain 31337: ` +
          `funds[0].shareToken is ${summit!.shareToken}, but the vault's shareToken() is ${stack.registry.funds[0]!.shareToken}; ` +
          `funds[0].policy is "${kelly.slug}" (${kelly.address}), but the vault's policy() is ${own.address} (policy "${own.slug}"); ` +
          "funds[0].baseAsset.decimals is 18, but the token's decimals() is 6. " +
          "The service formats amounts with the registry's decimals and reads reserve bounds from its policy, so every answer of these funds would be wrong: correct those fields",
      ),
    );
  });

  it('answers a read of an address without code as INTERNAL, not as an RPC to retry', async () => {
    const gateway = testGateway(stack, {
      chain: { rpcUrl: anvil.rpcUrl, timeoutMs: 5_000, maxBatch: 10 },
    });
    const slug = stack.registry.funds[0]!.slug;
    const answer = await graphql(gateway, `{ fund(slug: "${slug}") { reserve { balance } } }`);
    expect(answer.errors?.map((e) => e.extensions?.code)).toEqual(['INTERNAL']);
  });

  it('refuses a node of another chain than the registry’s', async () => {
    await createRpcClient(anvil.rpcUrl).request('anvil_setChainId', [SEPOLIA_CHAIN_ID]);
    await expect(chain(anvil.rpcUrl)).rejects.toThrow(
      `it serves chain ${SEPOLIA_CHAIN_ID}, but REGISTRY ${REGISTRY_FILE} is for chain 31337 (chain.id)`,
    );
  });

  it('says in health the chain the RPC serves, not the registry’s', async () => {
    // the vaults' code on the Sepolia-id anvil, so that health's live reads succeed there
    const devnet = createRpcClient(stack.devnet.rpcUrl);
    const other = createRpcClient(anvil.rpcUrl);
    for (const { vault } of stack.registry.funds)
      await other.request('anvil_setCode', [vault, await devnet.request('eth_getCode', [vault, 'latest'])]);
    const gateway = testGateway(stack, {
      chain: { rpcUrl: anvil.rpcUrl, timeoutMs: 5_000, maxBatch: 10 },
    });
    const answer = await graphql(gateway, '{ health { indexer { chainId } } }');
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.health.indexer.chainId).toBe(SEPOLIA_CHAIN_ID);
  });

  it('refuses a server that is no Ethereum node', async () => {
    const url = await serve((_req, res) => res.writeHead(501).end('Unsupported method'));
    await expect(chain(url)).rejects.toThrow(/^it does not answer eth_chainId: /);
  });

  it('waits for an unreachable node, then refuses naming the cause', async () => {
    const wait = shortWait();
    await expect(chain(`http://127.0.0.1:${await closedPort()}`, wait)).rejects.toThrow(
      /^no answer within 0\.6 s: /,
    );
    expect(wait.lines).toEqual([expect.stringMatching(/^waiting up to 0\.6 s for RPC_URL/)]);
  });
});
