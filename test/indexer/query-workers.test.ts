// Queries run on worker threads (query-workers.ts), never on the thread that indexes: a query past
// its time limit is answered "Query timed out" and its worker ended, and the next one is answered
// in full; a second worker answers while the first runs a slow query and ends once idle; a store that
// cannot be read stops the start, saying so; a query that runs its worker out of memory is told so,
// and the requests unanswered at close get a 503. The store holds 50,000 more events than the
// fixture, so that a filter no index serves takes a while on each.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { indexerConfigFromEnv } from '../../indexer/config.ts';
import type { QueryService } from '../../indexer/query/create-query-service.ts';
import { DEFAULT_MAX_RESULT_BYTES } from '../../indexer/query/execute-query.ts';
import {
  DEFAULT_QUERY_TIMEOUT_MS,
  QueryWorkers,
  queryWorkerHeapMb,
} from '../../indexer/query/query-workers.ts';
import { queryAnswer, scanningQuery } from './graphql-client.ts';
import {
  commitBlock,
  createFixture,
  fixtureQueryService,
  fixtureStoreOptions,
  header,
  protocolEvent,
  vault3,
  writeFixture,
  type Fixture,
} from './store-fixture.ts';

const FILLER_EVENTS = 50_000;
/** a heap the workers start in, and sixty lists of a thousand events overflow (forty-eight MiB would too) */
const HEAP_MB = 24;

let fixture: Fixture;

beforeAll(() => {
  fixture = createFixture();
  writeFixture(fixture.store);
  commitBlock(fixture.store, header(14), 20, (w) => {
    for (let i = 0; i < FILLER_EVENTS; i++) {
      const index = 2_000_000 + i;
      const id = '0x' + index.toString(16).padStart(8, '0');
      w.set('ProtocolEvent', id, protocolEvent(index, 14, 'Filler', (14n << 40n) + BigInt(i), vault3));
    }
  });
});

afterAll(() => fixture?.cleanup());

describe('query workers: the time limit', () => {
  let service: QueryService;
  let url: string;

  beforeAll(async () => {
    service = fixtureQueryService(fixture, { timeoutMs: 50 });
    url = await service.listen(0);
  });

  afterAll(() => service?.close());

  it('answers a query still running at its time limit "Query timed out", naming the limit and how to ask for less', async () => {
    const answer = await queryAnswer(url, scanningQuery(100));
    expect(answer.data).toBeUndefined();
    expect(answer.errors).toEqual([
      {
        message:
          'Query timed out: it was not answered within the limit of 50 ms; ask for less: a smaller `first`, fewer nested collections, a narrower `where`, or pages by key rather than a deep `skip`',
      },
    ]);
  });

  it('answers the next query in full once the worker that ran out of time has been ended', async () => {
    await queryAnswer(url, scanningQuery(100));
    expect(await queryAnswer(url, '{ _meta { block { number } } funds(orderBy: slug) { slug } }')).toEqual({
      data: {
        _meta: { block: { number: 14 } },
        funds: [{ slug: 'Beta-Growth' }, { slug: 'alpha-income' }, { slug: 'gamma_reserve' }],
      },
    });
  });

  it('is 10,000 ms unless INDEXER_QUERY_TIMEOUT_MS says otherwise', () => {
    const base = { RPC_URL: 'http://127.0.0.1:8545', NETWORK: 'sepolia' };
    expect(DEFAULT_QUERY_TIMEOUT_MS).toBe(10_000);
    expect(indexerConfigFromEnv(base).queryTimeoutMs).toBe(10_000);
    expect(indexerConfigFromEnv({ ...base, INDEXER_QUERY_TIMEOUT_MS: '2500' }).queryTimeoutMs).toBe(2_500);
  });

  it('refuses an INDEXER_QUERY_TIMEOUT_MS outside 100 to 3,600,000 ms, naming it', () => {
    const base = { RPC_URL: 'http://127.0.0.1:8545', NETWORK: 'sepolia' };
    for (const value of ['99', '3600001', '5s', '-1']) {
      expect(() => indexerConfigFromEnv({ ...base, INDEXER_QUERY_TIMEOUT_MS: value })).toThrow(
        /^INDEXER_QUERY_TIMEOUT_MS must be an integer /,
      );
    }
  });
});

/** What the workers read: the fixture's store, with the default result-size limit. */
const workerData = () => ({ ...fixtureStoreOptions(fixture), maxResultBytes: DEFAULT_MAX_RESULT_BYTES });

const request = (query: string) => JSON.stringify({ query });

describe('query workers: memory', () => {
  it('answers a query that runs its worker out of memory saying so, naming the heap, and answers the next in full', async () => {
    const workers = new QueryWorkers({
      data: workerData(),
      workers: 1,
      timeoutMs: 60_000,
      heapMb: HEAP_MB,
    });
    try {
      await workers.start();
      const fields = Array.from(
        { length: 60 },
        (_, i) => `e${i}: protocolEvents(first: 1000) { id args txHash }`,
      );
      const outcome = await workers.run('subgraph', request(`{ ${fields.join(' ')} }`));
      expect(outcome).toEqual({
        body: JSON.stringify({
          errors: [
            {
              message: `the query needs more memory than a query worker has (${HEAP_MB} MiB); ask for less: a smaller \`first\`, fewer nested collections, fewer fields or a narrower \`where\``,
            },
          ],
        }),
      });
      expect(await workers.run('subgraph', request('{ _meta { block { number } } }'))).toEqual({
        body: JSON.stringify({ data: { _meta: { block: { number: 14 } } } }),
      });
    } finally {
      await workers.close();
    }
  });

  it('gives each worker a heap of four times the result-size limit, and at least 128 MiB', () => {
    expect(queryWorkerHeapMb(DEFAULT_MAX_RESULT_BYTES)).toBe(128);
    expect(queryWorkerHeapMb(100 * 2 ** 20)).toBe(400);
  });
});

describe('query workers: closing', () => {
  it('answers the requests it has not answered 503, saying the service is stopping, and logs nothing', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const workers = new QueryWorkers({
      data: workerData(),
      workers: 1,
      timeoutMs: 60_000,
    });
    await workers.start();
    const running = workers.run('subgraph', request(scanningQuery(100)));
    const waiting = workers.run('subgraph', request('{ _meta { block { number } } }'));
    await workers.close();
    const stopping = {
      status: 503,
      body: JSON.stringify({
        errors: [{ message: 'the query service is stopping; try again once it is back' }],
      }),
    };
    expect(await running).toEqual(stopping);
    expect(await waiting).toEqual(stopping);
    expect(await workers.run('subgraph', request('{ _meta { block { number } } }'))).toEqual(stopping);
    expect(logged).not.toHaveBeenCalled();
    logged.mockRestore();
  });
});

describe('query workers: more than one', () => {
  it('answers a query on a second worker while the first runs a slow one', async () => {
    // the slow query takes seconds; on a loaded machine more than the default time limit
    const served = fixtureQueryService(fixture, { timeoutMs: 90_000 });
    try {
      const url = await served.listen(0);
      const finished: string[] = [];
      const slow = queryAnswer(url, scanningQuery(1000)).then((answer) => {
        finished.push('slow');
        return answer;
      });
      // the slow query is on the first worker by now
      await new Promise((resolve) => setTimeout(resolve, 200));
      const meta = await queryAnswer(url, '{ _meta { block { number } } }');
      finished.push('meta');
      expect(meta).toEqual({ data: { _meta: { block: { number: 14 } } } });
      expect((await slow).data?.s999).toEqual([]);
      expect(finished).toEqual(['meta', 'slow']);
    } finally {
      await served.close();
    }
  }, 120_000);

  it('ends a worker beyond the first once it has been idle', async () => {
    const workers = new QueryWorkers({
      data: workerData(),
      workers: 2,
      timeoutMs: 60_000,
      extraIdleMs: 100,
    });
    try {
      await workers.start();
      expect(workers.size).toBe(1);
      const slow = workers.run('subgraph', request(scanningQuery(50)));
      const meta = workers.run('subgraph', request('{ _meta { block { number } } }'));
      expect(workers.size).toBe(2);
      expect(await meta).toEqual({ body: JSON.stringify({ data: { _meta: { block: { number: 14 } } } }) });
      await slow;
      await vi.waitFor(() => expect(workers.size).toBe(1), { timeout: 10_000, interval: 50 });
      // the last worker stays, ready for the next request
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(workers.size).toBe(1);
    } finally {
      await workers.close();
    }
  });

  it('refuses to start over a store file that cannot be read, saying so', async () => {
    const workers = new QueryWorkers({
      data: { ...workerData(), storePath: join(fixture.dir, 'missing.sqlite') },
      workers: 2,
      timeoutMs: 60_000,
    });
    await expect(workers.start()).rejects.toThrow(/^the query service cannot read the store: /);
    expect(workers.size).toBe(0);
  });
});
