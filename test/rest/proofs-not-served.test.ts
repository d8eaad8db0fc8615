// A deployment without DISTRIBUTIONS_BASE serves no dividend proofs: that is permanent, so the
// proof endpoint answers 404 saying so, never a 503 inviting a retry; rounds are still served.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { indexedStack, listenRest, testGateway } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

let base: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const stack = await indexedStack();
  const gateway = testGateway(stack, { distributions: { base: undefined, timeoutMs: 1_000, cacheSize: 1 } });
  ({ url: base, close } = await listenRest(gateway));
});
afterAll(async () => {
  await close?.();
});

it('answers a proof request 404 "not served by this deployment" and still serves the round', async () => {
  const round = await call(base, '/v1/funds/harbor-stable-yield/dividends/30');
  expect(round.status).toBe(200);
  const proof = await call(
    base,
    '/v1/funds/harbor-stable-yield/dividends/30/proof?address=0x7dE67bF9C98a9616A035f68674c3cAb85e498E66',
  );
  expect(proof.status).toBe(404);
  expect(proof.body.type).toMatch(/\/not-found$/);
  expect(proof.body.detail).toContain('not served by this deployment');
});
