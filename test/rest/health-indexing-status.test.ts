// Health reports the indexer's own verdict from its index-node status API: a halted indexer keeps
// answering its last block through the subgraph, and on a chain without new blocks nothing else
// tells it from a current one. The status API here is the harness's embedded indexer, or a
// loopback server standing for a graph-node whose indexer has failed or that stops answering.
import { createServer, type Server } from 'node:http';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { gatewayConfig, graphql, indexedStack, startRestService } from '../harness/stack.ts';
import { createGateway } from '../../gateway/server.ts';
import { closedPort } from '../reliability/servers/ports.ts';
import { MAX_ANSWER_BYTES } from '../../common/bounded-fetch.ts';

const HEALTH =
  '{ health { status indexer { indexingHealth fatalError { message blockNumber deterministic } } } }';

const servers: Server[] = [];
afterAll(() => servers.forEach((server) => server.close()));

/**
 * A loopback index-node status API that knows `deployment` (the harness's) and reports for it what
 * `answer()` returns when it is asked, and nothing for any other deployment.
 */
async function statusApi(answer: () => object, deployment = inject('indexer').deployment): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const { variables } = JSON.parse(Buffer.concat(chunks).toString()) as {
        variables: { deployment: string };
      };
      const statuses = variables.deployment === deployment ? [{ subgraph: deployment, ...answer() }] : [];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { indexingStatuses: statuses } }));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/graphql`;
}

async function gatewayAsking(url: string, logged: unknown[] = []) {
  const stack = await indexedStack();
  return createGateway(
    gatewayConfig(stack, {
      // no chain: the other signals of health stay quiet, so its status is the indexer's alone
      chain: undefined,
      indexingStatus: { url, timeoutMs: 5_000 },
      logError: (line) => logged.push(line),
    }),
  );
}

describe("health's indexing status", () => {
  it("is the embedded indexer's own answer on GET /v1/health: healthy, with no fatal error", async () => {
    const { base, stop } = await startRestService();
    try {
      const health = (await (await fetch(`${base}/v1/health`)).json()) as {
        status: string;
        indexer: { indexingHealth: string; fatalError: unknown };
      };
      expect(health.indexer).toMatchObject({ indexingHealth: 'healthy', fatalError: null });
      expect(health.status).toBe('ok');
    } finally {
      await stop();
    }
  });

  it('turns health degraded and says why when the indexer has halted, URLs in the message cut', async () => {
    const url = await statusApi(() => ({
      health: 'failed',
      fatalError: {
        message: 'store error: connection to https://user:pw@db.example:5432/graph?key=k1 refused',
        deterministic: false,
        block: null,
      },
    }));
    const answer = await graphql(await gatewayAsking(url), HEALTH);
    expect(answer.data?.health).toEqual({
      status: 'degraded',
      indexer: {
        indexingHealth: 'failed',
        fatalError: {
          message: 'store error: connection to https://db.example:5432/… refused',
          blockNumber: null,
          deterministic: false,
        },
      },
    });
  });

  it('names the block a deterministic failure stopped at', async () => {
    const url = await statusApi(() => ({
      health: 'failed',
      fatalError: {
        message: 'handler panicked',
        deterministic: true,
        block: { number: '1234', hash: '0x12' },
      },
    }));
    const answer = await graphql(await gatewayAsking(url), HEALTH);
    expect(answer.data?.health.indexer.fatalError).toEqual({
      message: 'handler panicked',
      blockNumber: 1234,
      deterministic: true,
    });
  });

  it('is null, and health left to its other signals, while the status API does not answer', async () => {
    const logged: unknown[] = [];
    const port = await closedPort();
    const gateway = await gatewayAsking(`http://127.0.0.1:${port}/graphql`, logged);
    for (let request = 0; request < 2; request++) {
      const answer = await graphql(gateway, HEALTH);
      expect(answer.data?.health).toEqual({
        status: 'ok',
        indexer: { indexingHealth: null, fatalError: null },
      });
    }
    expect(logged).toHaveLength(1);
    expect(String(logged[0])).toMatch(
      new RegExp(
        `^indexing status: SUBGRAPH_STATUS_URL \\(http://127\\.0\\.0\\.1:${port}/…\\) cannot say: .*ECONNREFUSED`,
      ),
    );
  });

  it('says once that the status API answers again, and reports what it answers', async () => {
    const logged: unknown[] = [];
    let answering = false;
    const url = await statusApi(() =>
      answering ? { health: 'healthy', fatalError: null } : { health: 'sideways', fatalError: null },
    );
    const gateway = await gatewayAsking(url, logged);
    expect((await graphql(gateway, HEALTH)).data?.health.indexer.indexingHealth).toBeNull();
    answering = true;
    expect((await graphql(gateway, HEALTH)).data?.health.indexer.indexingHealth).toBe('healthy');
    expect(logged.map(String)).toEqual([
      expect.stringMatching(
        /cannot say: it answered health "sideways"; health's indexingHealth is null meanwhile$/,
      ),
      expect.stringMatching(
        /^indexing status: SUBGRAPH_STATUS_URL \(http:\/\/127\.0\.0\.1:\d+\/…\) answers again$/,
      ),
    ]);
  });

  it('is null, saying why, when the status API answers more than the service reads of one answer', async () => {
    const logged: unknown[] = [];
    const padding = ' '.repeat(MAX_ANSWER_BYTES);
    const url = await statusApi(() => ({ health: 'healthy', fatalError: null, padding }));
    const answer = await graphql(await gatewayAsking(url, logged), HEALTH);
    expect(answer.data?.health.indexer.indexingHealth).toBeNull();
    expect(logged.map(String)).toEqual([
      expect.stringContaining(
        'cannot say: the indexing status API answered more than 32 MiB, the most the service reads of one answer',
      ),
    ]);
  });

  it('is null when the status API does not know the deployment the subgraph serves', async () => {
    const logged: unknown[] = [];
    // the status API of another graph-node: it indexes another deployment
    const url = await statusApi(() => ({ health: 'healthy', fatalError: null }), 'QmAnotherDeployment');
    const answer = await graphql(await gatewayAsking(url, logged), HEALTH);
    expect(answer.data?.health.indexer.indexingHealth).toBeNull();
    expect(logged.map(String)).toEqual([
      expect.stringContaining(
        `cannot say: it does not know deployment ${inject('indexer').deployment}, which SUBGRAPH_URL serves`,
      ),
    ]);
  });
});
