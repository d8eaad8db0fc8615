// The service after a new version of the subgraph is deployed under the name SUBGRAPH_URL gives:
// graph-node switches the name to the new deployment at once, and it re-indexes from its start
// block, for hours on a real chain. Here node B of load-balanced-subgraph.ts, stuck some blocks
// back, answers as that new deployment (its deployment id rewritten, in `_meta` and in
// graph-node's refusals alike). A service that has read the head from the old deployment answers
// 503 saying the subgraph is being re-indexed and how far it has got, not "retry in a few
// seconds"; its log says how to serve the old deployment meanwhile; and health names the
// deployment SUBGRAPH_URL now serves.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  startLoadBalancedSubgraph,
  startNodeBehind,
  type LoadBalancedSubgraph,
} from '../rest/load-balanced-subgraph.ts';
import { indexedStack, type IndexedStack, listenRest, testGateway } from '../harness/stack.ts';

/** the new version's deployment id */
const NEW_DEPLOYMENT = 'QmTVqahxEPumHx4y1dUKpH9SAtP5ZqREhDm6JfRDkcWSwn';
const FUND = 'harbor-stable-yield';

let stack: IndexedStack;
let balancer: LoadBalancedSubgraph;
let nodeB: { queryUrl: string; stop(): Promise<void> };
/** the block the new deployment has re-indexed to */
let resyncedTo: number;
/** the deployment both nodes serve, which the new version replaces */
const oldDeployment = () => inject('indexer').deployment;
const head = () => stack.devnet.ledger.endBlock;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  stack = await indexedStack();
  resyncedTo = head() - 40;
  nodeB = await startNodeBehind(stack.devnet, resyncedTo);
  balancer = await startLoadBalancedSubgraph({ A: stack.subgraphUrl, B: nodeB.queryUrl });
}, 120_000);

afterAll(async () => {
  for (const close of closers) await close();
  await balancer?.close();
  await nodeB?.stop();
});

/** Every answer as the new deployment gives it: node B's, its deployment id the new one's. */
function redeployed(): void {
  balancer.route(() => 'B');
  balancer.rewrite((answer) =>
    JSON.parse(JSON.stringify(answer).replaceAll(oldDeployment(), NEW_DEPLOYMENT)),
  );
}

/** A service that has read the head from the old deployment (node A); what it logs goes to `logged`. */
async function serviceAtHead(logged: string[] = []): Promise<string> {
  balancer.route(() => 'A');
  balancer.rewrite(undefined);
  const gateway = testGateway(stack, { subgraph: { url: balancer.url, timeoutMs: 10_000, maxBatch: 1000 } });
  const { url, close } = await listenRest(gateway, { logError: (line) => logged.push(String(line)) });
  closers.push(close);
  const health = await (await fetch(`${url}/v1/health`)).json();
  expect(health.indexer).toMatchObject({ deployment: oldDeployment(), maxIndexedBlock: head() });
  return url;
}

const resyncing = (reached: string) =>
  `The subgraph is being re-indexed: a new version of it (deployment ${NEW_DEPLOYMENT}) indexes the chain from its start and has reached ${reached}, not yet block ${head()}, the newest this service has read, and older data is not served in its place. Retry later: re-indexing can take hours.`;

describe('a new deployment re-indexing under the same name', () => {
  it('is answered 503 saying the subgraph is being re-indexed and how far it has got', async () => {
    const service = await serviceAtHead();
    redeployed();
    const response = await fetch(`${service}/v1/funds/${FUND}/nav`);
    expect(response.status).toBe(503);
    expect((await response.json()).detail).toBe(resyncing(`block ${resyncedTo}`));
  });

  it('asks the client to retry after a minute, not the few seconds of a node catching up', async () => {
    const service = await serviceAtHead();
    redeployed();
    const response = await fetch(`${service}/v1/funds/${FUND}/nav`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('60');
  });

  it('tells the operator’s log how to serve the old deployment meanwhile', async () => {
    const logged: string[] = [];
    const service = await serviceAtHead(logged);
    redeployed();
    await fetch(`${service}/v1/funds/${FUND}/nav`);
    expect(logged).toEqual([
      expect.stringContaining(
        `SUBGRAPH_URL now serves deployment ${NEW_DEPLOYMENT}, a new version that replaced ${oldDeployment()} and is at block ${resyncedTo}; requests needing block ${head()} fail until it gets there. To serve ${oldDeployment()} meanwhile, point SUBGRAPH_URL at its /subgraphs/id/${oldDeployment()} path.`,
      ),
    ]);
  });

  it('shows in health as the deployment served, beside the failure of the indexed fields', async () => {
    const service = await serviceAtHead();
    redeployed();
    const response = await fetch(`${service}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ health { status indexer { deployment maxIndexedBlock } } }' }),
    });
    const answer = await response.json();
    expect(answer.data.health).toEqual({
      status: 'degraded',
      indexer: { deployment: NEW_DEPLOYMENT, maxIndexedBlock: null },
    });
    expect(answer.errors).toEqual([
      expect.objectContaining({
        message: resyncing(`block ${resyncedTo}`),
        path: ['health', 'indexer', 'maxIndexedBlock'],
      }),
    ]);
  });

  it('says it has reached no block yet while graph-node answers that it has not started syncing', async () => {
    const service = await serviceAtHead();
    balancer.rewrite(() => ({
      errors: [
        {
          message: `Store error: query execution failed: Subgraph \`${NEW_DEPLOYMENT}\` has not started syncing yet. Wait for it to ingest a few blocks before querying it`,
        },
      ],
    }));
    const response = await fetch(`${service}/v1/funds/${FUND}/nav`);
    expect(response.status).toBe(503);
    expect((await response.json()).detail).toBe(resyncing('no block yet'));
  });
});
