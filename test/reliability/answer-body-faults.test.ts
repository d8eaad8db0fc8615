// Upstream answers that go wrong after good headers, made by a real server on loopback in front of
// anvil's RPC and the indexer's subgraph endpoint (servers/body-fault-proxy.ts): a body that stalls
// or trickles is given up within the upstream's timeout, and holds up no other request; a body
// past the most the service reads of one answer is not read further. Each test then clears the
// fault and checks that the very next request succeeds: recovery needs no restart.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES } from '../../common/bounded-fetch.ts';
import { indexedStack, testGateway, type IndexedStack } from '../harness/stack.ts';
import { publicRestService } from './public-rest-service.ts';
import { expectProblem, get, type RawResponse } from './problems.ts';
import { startBodyFaultProxy, type BodyFaultProxy } from './servers/body-fault-proxy.ts';

/** How long the service waits for an upstream that misbehaves in a test. */
const TIMEOUT_MS = 2_000;
/** How long a test waits for an answer: it fails the test, rather than hangs it, without the fix. */
const ANSWERED_WITHIN_MS = 3 * TIMEOUT_MS;
/** Four times the most the service reads of one answer, so that reading it whole shows. */
const HUGE_BYTES = 4 * MAX_ANSWER_BYTES;
/** What the service may have taken of an answer past the cap: socket buffers and one chunk more. */
const READ_AT_MOST = MAX_ANSWER_BYTES + 16 * 2 ** 20;

let stack: IndexedStack;
let rpc: BodyFaultProxy;
let subgraph: BodyFaultProxy;
let service: { url: string; close(): Promise<void> };

beforeAll(async () => {
  stack = await indexedStack();
  [rpc, subgraph] = await Promise.all([
    startBodyFaultProxy(stack.devnet.rpcUrl),
    startBodyFaultProxy(stack.subgraphUrl),
  ]);
  // a public base, no response cache: every request reaches the upstreams (publicRestService)
  service = await publicRestService(
    testGateway(stack, {
      subgraph: { url: subgraph.url, timeoutMs: TIMEOUT_MS, maxBatch: 1000 },
      chain: { rpcUrl: rpc.url, timeoutMs: TIMEOUT_MS, maxBatch: 200 },
      distributions: { base: undefined, timeoutMs: TIMEOUT_MS, cacheSize: 1 },
      logError: () => {},
    }),
  );
});

afterEach(() => {
  rpc.set({ kind: 'pass' });
  subgraph.set({ kind: 'pass' });
});

afterAll(async () => {
  await service?.close();
  await Promise.all([rpc?.close(), subgraph?.close()]);
});

const fundSlug = () => stack.devnet.ledger.funds[0]!.slug;
const reservePath = () => `/v1/funds/${fundSlug()}/reserve`;

/** GET `path`, given up (failing the test) after ANSWERED_WITHIN_MS. */
const answer = (path: string): Promise<RawResponse> =>
  get(service.url, path, { signal: AbortSignal.timeout(ANSWERED_WITHIN_MS) });

async function expectOk(path: string): Promise<void> {
  const response = await answer(path);
  expect(response.status, `${path}: ${response.text.slice(0, 200)}`).toBe(200);
}

describe('an RPC answer that stops after its headers', () => {
  async function expectGivenUpAndOthersAnswered(): Promise<void> {
    // the live read and the requests that only want the chain head for a header or health, at once:
    // they all wait on the same head read
    const [reserve, events, nav, health] = await Promise.all([
      answer(reservePath()),
      answer('/v1/events?limit=5'),
      answer(`/v1/funds/${fundSlug()}/nav`),
      answer('/v1/health'),
    ]);
    expectProblem(reserve, 503, 'upstream-unavailable');
    expect(events.status, events.text.slice(0, 200)).toBe(200);
    expect(nav.status, nav.text.slice(0, 200)).toBe(200);
    expect(health.status, health.text.slice(0, 200)).toBe(200);
    expect((JSON.parse(health.text) as { status: string }).status).toBe('degraded');
  }

  it('is given up within the timeout when it stalls, holds up no other route, and the next request after it clears is answered', async () => {
    rpc.set({ kind: 'stall' });
    await expectGivenUpAndOthersAnswered();
    rpc.set({ kind: 'pass' });
    await expectOk(reservePath());
  });

  it('is given up within the timeout when it trickles, holds up no other route, and the next request after it clears is answered', async () => {
    rpc.set({ kind: 'trickle', everyMs: 200 });
    await expectGivenUpAndOthersAnswered();
    rpc.set({ kind: 'pass' });
    await expectOk(reservePath());
  });
});

describe('an answer larger than the most the service reads', () => {
  it('from the RPC is refused with a 503 naming the limit, read no further than it', async () => {
    rpc.set({ kind: 'huge', bytes: HUGE_BYTES });
    const body = expectProblem(await answer(reservePath()), 503, 'upstream-unavailable');
    expect(body.detail).toBe(
      'The chain RPC is unavailable: it answered more than 32 MiB, the most the service reads of one answer; retry later.',
    );
    const sent = rpc.hugeAnswersSent();
    expect(sent.length).toBeGreaterThan(0);
    for (const bytes of sent) expect(bytes).toBeLessThan(READ_AT_MOST);
    rpc.set({ kind: 'pass' });
    await expectOk(reservePath());
  });

  it('from the subgraph is refused with a 503 naming the limit, asked once and read no further than it', async () => {
    subgraph.set({ kind: 'huge', bytes: HUGE_BYTES });
    const body = expectProblem(await answer('/v1/funds'), 503, 'upstream-unavailable');
    expect(body.detail).toBe(
      'The subgraph is unavailable: it answered more than 32 MiB, the most the service reads of one answer; retry later.',
    );
    const sent = subgraph.hugeAnswersSent();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeLessThan(READ_AT_MOST);
    subgraph.set({ kind: 'pass' });
    await expectOk('/v1/funds');
  });
});
