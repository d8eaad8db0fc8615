// A dividend proof's `claimed` is the one part of it read live from the chain (isClaimed): it is read
// only when asked for, and a failing chain RPC nulls it alone, beside its error, while the proof, read
// from the round's distribution, is still answered. GET /v1/funds/{slug}/dividends/{epoch}/proof,
// whose body has `claimed`, still answers 503 while the RPC fails, as it promises.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../rest/openapi-responses.ts';
import { graphql, indexedStack, type IndexedStack, listenRest, testGateway } from '../harness/stack.ts';
import type { Gateway } from '../../gateway/server.ts';

let stack: IndexedStack;
/** a gateway whose chain RPC refuses connections (the discard port) */
let deadChain: Gateway;
beforeAll(async () => {
  stack = await indexedStack();
  deadChain = testGateway(stack, {
    chain: { rpcUrl: 'http://127.0.0.1:9/', timeoutMs: 1_000, maxBatch: 10 },
  });
});

/** the scenario's first round and the account and amount of its distribution's first leaf */
function firstLeaf() {
  const round = stack.devnet.ledger.rounds[0];
  if (!round) throw new Error('the scenario posted no dividend round');
  const dump = JSON.parse(readFileSync(join(stack.devnet.dataDir, round.uri), 'utf8'));
  const [account, amount] = dump.values[0].value as [string, string];
  return { round, account, amount };
}

const proofQuery = (fields: string) => {
  const { round, account } = firstLeaf();
  return `{ fund(slug: "${round.fund}") { dividend(epoch: ${round.epoch}) { proof(address: "${account}") { ${fields} } } } }`;
};

describe('a dividend proof while the chain RPC fails', () => {
  it('is answered whole when claimed is not asked for', async () => {
    const { round, account, amount } = firstLeaf();
    const answer = await graphql(deadChain, proofQuery('account amountRaw merkleRoot'));
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.fund.dividend.proof).toEqual({
      account,
      amountRaw: amount,
      merkleRoot: round.merkleRoot,
    });
  });

  it('has claimed null beside its UPSTREAM_UNAVAILABLE error, and its other fields answered', async () => {
    const { account } = firstLeaf();
    const answer = await graphql(deadChain, proofQuery('account claimed'));
    expect(answer.data?.fund.dividend.proof).toEqual({ account, claimed: null });
    expect(answer.errors?.map((e) => [e.extensions?.code, e.path])).toEqual([
      ['UPSTREAM_UNAVAILABLE', ['fund', 'dividend', 'proof', 'claimed']],
    ]);
  });

  it('is answered by the REST proof route with 503 upstream-unavailable', async () => {
    const { round, account } = firstLeaf();
    const server = await listenRest(deadChain);
    try {
      const { status, body } = await call(
        server.url,
        `/v1/funds/${round.fund}/dividends/${round.epoch}/proof?address=${account}`,
      );
      expect(status).toBe(503);
      expect(body.type).toMatch(/\/problems\/upstream-unavailable$/);
    } finally {
      await server.close();
    }
  });
});
