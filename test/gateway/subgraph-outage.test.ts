// What a query answers while the subgraph is down (its URL refuses connections): the fields that read
// it are null beside their UPSTREAM_UNAVAILABLE errors and the rest of the answer stands. Health is
// still answered on /graphql, degraded, with the fields read from the index null beside their errors;
// GET /v1/health, whose record SPEC types whole, answers 503 as every route does when its data fails.
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../rest/openapi-responses.ts';
import {
  graphql,
  type GraphQLResponse,
  indexedStack,
  type IndexedStack,
  listenRest,
  registryOnlyGateway,
  testGateway,
} from '../harness/stack.ts';

/** a subgraph URL nothing listens on (the discard port) */
const DOWN = { url: 'http://127.0.0.1:9/subgraph', timeoutMs: 1_000, maxBatch: 10 };

let stack: IndexedStack;
beforeAll(async () => {
  stack = await indexedStack();
});

const errorPlaces = (answer: GraphQLResponse) => answer.errors?.map((e) => [e.extensions?.code, e.path]);

describe('a fund while the subgraph is down', () => {
  it('is listed with its status null beside the error, and the protocol beside it is answered', async () => {
    const answer = await graphql(registryOnlyGateway(), '{ protocol { name } funds { slug status } }');
    const slugs = stack.registry.funds.map((f) => f.slug);
    expect(answer.data).toEqual({
      protocol: { name: stack.registry.protocol.name },
      funds: slugs.map((slug) => ({ slug, status: null })),
    });
    expect(errorPlaces(answer)).toEqual(
      slugs.map((_s, i) => ['UPSTREAM_UNAVAILABLE', ['funds', i, 'status']]),
    );
  });

  it('is answered by its slug with its registry fields, its status null beside the error', async () => {
    const fund = stack.registry.funds[0]!;
    const answer = await graphql(
      registryOnlyGateway(),
      `{ fund(slug: "${fund.slug}") { slug addresses { vault } status } }`,
    );
    expect(answer.data).toEqual({
      fund: { slug: fund.slug, addresses: { vault: fund.vault }, status: null },
    });
    expect(errorPlaces(answer)).toEqual([['UPSTREAM_UNAVAILABLE', ['fund', 'status']]]);
  });
});

const HEALTH = `health { status indexer { chainId contractsTracked deployment maxIndexedBlock lastUpdatedAt
  hasIndexingErrors chainHeadBlock lagBlocks indexingHealth } nav { latestEpoch } pausedModules }`;

/** the indexed fields of health, as a subgraph outage leaves them */
const INDEXED_UNKNOWN = {
  contractsTracked: null,
  deployment: null,
  maxIndexedBlock: null,
  lastUpdatedAt: null,
  hasIndexingErrors: null,
  lagBlocks: null,
  indexingHealth: null,
};

/** where the errors of a health read from the index are, beside each field it nulls */
const INDEXED_ERRORS = ['contractsTracked', 'maxIndexedBlock', 'lastUpdatedAt', 'hasIndexingErrors']
  .map((field) => ['UPSTREAM_UNAVAILABLE', ['health', 'indexer', field]])
  .concat([['UPSTREAM_UNAVAILABLE', ['health', 'nav']]]);

describe('health while the subgraph is down', () => {
  it('is degraded with its indexed fields null beside their errors, beside the registry fields', async () => {
    const answer = await graphql(registryOnlyGateway(), `{ contracts { name } ${HEALTH} }`);
    expect(answer.data).toEqual({
      contracts: stack.registry.contracts.map((c) => ({ name: c.name })),
      health: {
        status: 'degraded',
        indexer: { chainId: stack.registry.chain.id, chainHeadBlock: null, ...INDEXED_UNKNOWN },
        nav: null,
        // no chain RPC to read them live, and no index to read them from
        pausedModules: null,
      },
    });
    expect(errorPlaces(answer)).toEqual([
      ...INDEXED_ERRORS,
      ['UPSTREAM_UNAVAILABLE', ['health', 'pausedModules']],
    ]);
  });

  it('reads the paused modules live from a working chain RPC', async () => {
    const gateway = testGateway(stack, { subgraph: DOWN });
    const answer = await graphql(gateway, `{ ${HEALTH} }`);
    const paused = stack.devnet.ledger.funds.flatMap((f) =>
      Object.entries(f.pausedModules).flatMap(([module, on]) => (on ? [`${f.slug}:${module}`] : [])),
    );
    expect(errorPlaces(answer)).toEqual(INDEXED_ERRORS);
    expect(answer.data?.health).toEqual({
      status: 'degraded',
      indexer: { chainId: 31337, chainHeadBlock: expect.any(Number), ...INDEXED_UNKNOWN },
      nav: null,
      pausedModules: expect.arrayContaining(paused),
    });
    expect(answer.data?.health.pausedModules).toHaveLength(paused.length);
  });

  it('is answered by GET /v1/health with 503 upstream-unavailable, its record being incomplete', async () => {
    const gateway = testGateway(stack, { subgraph: DOWN });
    const server = await listenRest(gateway);
    try {
      const { status, body } = await call(server.url, '/v1/health');
      expect(status).toBe(503);
      expect(body).toMatchObject({
        type: expect.stringMatching(/\/upstream-unavailable$/),
        detail: 'The subgraph is unavailable; retry later.',
      });
    } finally {
      await server.close();
    }
  });
});
