// Health names the subgraph deployment serving the indexed data: with graph-node's default instant
// version switching, a redeploy under the same name starts serving a new, re-syncing deployment at
// once, and a monitor can only tell by the id.
import { describe, expect, inject, it } from 'vitest';
import { restServiceForSuite } from '../harness/stack.ts';

const service = restServiceForSuite();

describe('the deployment in health', () => {
  it('is the deployment id the subgraph answers with, on /v1/health and /graphql', async () => {
    const { deployment } = inject('indexer');
    const rest = (await (await fetch(`${service.base}/v1/health`)).json()) as {
      indexer: { deployment: string };
    };
    expect(rest.indexer.deployment).toBe(deployment);
    const graphql = await fetch(`${service.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ health { indexer { deployment } } }' }),
    });
    expect(await graphql.json()).toEqual({ data: { health: { indexer: { deployment } } } });
  });
});
