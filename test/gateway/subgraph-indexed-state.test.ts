// The subgraph source's reading of its latest block (indexedBlock) names the deployment that
// answered, as `_meta.deployment` gives it: after a redeploy under the same name the block numbers
// go on, and only the deployment tells that the data may be another build's (the REST cache keys
// its bodies' validity on it).
import { inject } from 'vitest';
import { describe, expect, it } from 'vitest';
import { createSubgraphClient } from '../../gateway/sources/subgraph.ts';

describe("the subgraph source's indexed state", () => {
  it('names the deployment the subgraph says answered', async () => {
    const { queryUrl, deployment } = inject('indexer');
    const source = createSubgraphClient({ url: queryUrl, timeoutMs: 10_000, maxBatch: 1000 });
    const state = await source.indexedBlock();
    expect(state.deployment).toBe(deployment);
  });
});
