// What the query server refuses before a query can hold a query worker, its memory or its stack:
// selection sets nested past graph-node's GRAPH_GRAPHQL_MAX_DEPTH (255, in graph-node's words,
// fragments counted as graph-node counts them), values nested past 255 levels inline or in
// variables, and results past INDEXER_QUERY_MAX_RESULT_BYTES (graph-node's
// GRAPH_GRAPHQL_ERROR_RESULT_SIZE), which stop the query reading as soon as they are passed. A
// failure that is no GraphQL error still gets a message. Requests go through the real HTTP server.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { indexerConfigFromEnv } from '../../indexer/config.ts';
import { queryAnswer, scanningQuery } from './graphql-client.ts';
import { buildApiSchema } from '../../indexer/query/api-schema.ts';
import type { QueryService } from '../../indexer/query/create-query-service.ts';
import { DEFAULT_MAX_RESULT_BYTES, executeQuery } from '../../indexer/query/execute-query.ts';
import { buildQueryModel } from '../../indexer/query/sql-query.ts';
import { StoreReader } from '../../indexer/query/store-reader.ts';
import { buildLayouts } from '../../indexer/store/layout.ts';
import {
  createFixture,
  deployment,
  extraEvents,
  schema,
  writeFixture,
  type Fixture,
  fixtureQueryService,
} from './store-fixture.ts';

let fixture: Fixture;
const services: QueryService[] = [];

interface Answer {
  data?: Record<string, unknown> | null;
  errors?: { message: string }[];
}

type Query = (query: string) => Promise<Answer>;

/** A query service over the fixture store, its limit `maxResultBytes` or the default: its URL, and a query function. */
async function serve(maxResultBytes?: number): Promise<{ url: string; query: Query }> {
  const service = fixtureQueryService(fixture, { maxResultBytes });
  services.push(service);
  const url = await service.listen(0);
  const query: Query = async (text) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: text }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Answer;
  };
  return { url, query };
}

let url: string;
let query: Query;

beforeAll(async () => {
  fixture = createFixture();
  writeFixture(fixture.store);
  ({ url, query } = await serve());
});

/** Posts a request body written as JSON text. */
async function postText(body: string): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(res.status).toBe(200);
  return (await res.json()) as Answer;
}

afterAll(async () => {
  for (const service of services) await service.close();
  fixture?.cleanup();
});

afterEach(() => {
  vi.restoreAllMocks();
});

const TOO_DEEP = 'query has a depth that exceeds the limit of `255`';

/**
 * A query of `sets` selection sets nested in one another, the query's own included (graph-node's
 * depth of the innermost is `sets - 1`): navRecords, fund, navRecords, fund, ... down to an id.
 */
function nestedSelections(sets: number): string {
  let inner = 'id';
  for (let level = sets - 1; level >= 1; level--) {
    inner = `${level % 2 === 1 ? 'navRecords(first: 1)' : 'fund'} { ${inner} }`;
  }
  return `{ ${inner} }`;
}

/** A where filter of `ors` nested `or`s: 2 * ors + 1 levels of lists and objects. */
function nestedOrs(ors: number): string {
  let where = '{ epoch: 1 }';
  for (let i = 0; i < ors; i++) where = `{ or: [${where}] }`;
  return where;
}

/** The same filter as a variable's JSON text (JSON.stringify itself would overflow the stack). */
function nestedOrsJson(ors: number): string {
  return '{"or":['.repeat(ors) + '{"epoch":1}' + ']}'.repeat(ors);
}

describe('query limits: depth', () => {
  it('accepts selection sets nested 255 deep, the innermost at depth 254', async () => {
    const answer = await query(nestedSelections(255));
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.navRecords).toHaveLength(1);
  });

  it("refuses selection sets nested 256 deep in graph-node's words", async () => {
    expect(await query(nestedSelections(256))).toEqual({ errors: [{ message: TOO_DEEP }] });
  });

  it('refuses a query thousands of selection sets deep without overflowing the stack', async () => {
    expect(await query(nestedSelections(20_000))).toEqual({ errors: [{ message: TOO_DEEP }] });
  });

  it('counts each fragment spread as a level, as graph-node does', async () => {
    // `fragment F<i> on Fund { navRecords { fund { ...F<i+1> } } }`: F<i>'s selection set is at
    // depth 2 + 3i, so the last of 85 fragments (F84) is at 254 and the last of 86 (F85) at 257
    const chain = (last: number): string => {
      const fragments = [];
      for (let i = 0; i < last; i++) {
        fragments.push(`fragment F${i} on Fund { navRecords(first: 1) { fund { ...F${i + 1} } } }`);
      }
      fragments.push(`fragment F${last} on Fund { id }`);
      return `{ funds(first: 1) { ...F0 } } ${fragments.join(' ')}`;
    };
    expect((await query(chain(84))).errors).toBeUndefined();
    expect(await query(chain(85))).toEqual({ errors: [{ message: TOO_DEEP }] });
  });
});

describe('query limits: nested values', () => {
  const refusal = (what: string) =>
    `${what} nests lists and objects deeper than the limit of \`255\` levels; flatten nested \`and\`/\`or\` filters`;

  it('accepts a where filter nesting 255 levels of lists and objects', async () => {
    const answer = await query(`{ navRecords(where: ${nestedOrs(127)}) { epoch } }`);
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.navRecords).toEqual([{ epoch: 1 }, { epoch: 1 }]);
  });

  it('refuses an inline where filter nested deeper, however deep, with an error saying so', async () => {
    for (const ors of [128, 1_200, 3_000, 20_000]) {
      expect(await query(`{ navRecords(where: ${nestedOrs(ors)}) { id } }`)).toEqual({
        errors: [{ message: refusal('the query has a value that') }],
      });
    }
  });

  const withVariable = (ors: number) =>
    `{"query":"query($w: NavRecord_filter) { navRecords(where: $w) { epoch } }","variables":{"w":${nestedOrsJson(ors)}}}`;

  it('accepts a variable nesting 255 levels', async () => {
    expect(await postText(withVariable(127))).toEqual({ data: { navRecords: [{ epoch: 1 }, { epoch: 1 }] } });
  });

  it('refuses a variable nested deeper, however deep, with an error naming it', async () => {
    for (const ors of [128, 1_200, 20_000]) {
      expect(await postText(withVariable(ors))).toEqual({ errors: [{ message: refusal('variable `$w`') }] });
    }
  });
});

describe('query limits: failures that are no GraphQL error', () => {
  const api = () => ({ schema: buildApiSchema(buildQueryModel(schema, buildLayouts(schema))) });
  /** A reader whose every read throws `error`. */
  const failingReader = (error: Error) =>
    ({
      read: () => {
        throw error;
      },
    }) as unknown as StoreReader;

  it('answers a stack overflow as a query too deeply nested', () => {
    const answer = executeQuery(
      { ...api(), reader: failingReader(new RangeError('Maximum call stack size exceeded')) },
      { query: '{ funds { id } }' },
    );
    expect(JSON.parse(JSON.stringify(answer))).toEqual({
      errors: [{ message: 'the query is too deeply nested' }],
    });
  });

  it('answers any other failure as an internal error with a message, logged once', () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const answer = executeQuery(
      { ...api(), reader: failingReader(new TypeError('a bug')) },
      { query: '{ funds { id } }' },
    );
    expect(JSON.parse(JSON.stringify(answer))).toEqual({
      errors: [{ message: 'Internal error while resolving the query' }],
    });
    expect(logged).toHaveBeenCalledTimes(1);
  });
});

describe('query limits: result size', () => {
  const events = '{ protocolEvents(first: 1000) { id } }';

  it('answers a query within the limit in full', async () => {
    const within = await serve(1_000_000);
    const answer = await within.query(events);
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.protocolEvents).toHaveLength(5 + extraEvents);
  });

  it("refuses a result past the limit with that error alone, in graph-node's words, naming the limit and how to ask for less", async () => {
    const small = await serve(5_000);
    const answer = await small.query(`${events.slice(0, -2)} funds { slug } }`);
    expect(answer.data).toBeUndefined();
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors![0]!.message).toMatch(
      /^the result size of \d+ is larger than the allowed limit of 5000; ask for fewer entities: a smaller `first`, fewer nested collections or aliases, or a narrower `where`$/,
    );
  });

  it('reads nothing more once the limit is passed', () => {
    // executed here, as a query worker executes it, to count the reads
    const reader = new StoreReader(fixture.path, deployment, 10);
    try {
      const reads = vi.spyOn(reader, 'all');
      const lookups = vi.spyOn(reader, 'byId');
      const answer = executeQuery(
        {
          schema: buildApiSchema(buildQueryModel(schema, buildLayouts(schema))),
          subgraphErrors: true,
          reader,
          maxResultBytes: 5_000,
        },
        {
          query: `{ a: protocolEvents(first: 1000) { id } b: protocolEvents(first: 1000) { id } c: funds { latestNav { id } } }`,
        },
      );
      expect(answer.errors?.[0]?.message).toContain('allowed limit of 5000');
      expect(reads).toHaveBeenCalledTimes(1);
      expect(lookups).not.toHaveBeenCalled();
    } finally {
      reader.close();
    }
  });

  it('is 20,000,000 bytes unless INDEXER_QUERY_MAX_RESULT_BYTES says otherwise', () => {
    const base = { RPC_URL: 'http://127.0.0.1:8545', NETWORK: 'sepolia' };
    expect(DEFAULT_MAX_RESULT_BYTES).toBe(20_000_000);
    expect(indexerConfigFromEnv(base).queryMaxResultBytes).toBe(DEFAULT_MAX_RESULT_BYTES);
    expect(
      indexerConfigFromEnv({ ...base, INDEXER_QUERY_MAX_RESULT_BYTES: '5000000' }).queryMaxResultBytes,
    ).toBe(5_000_000);
  });

  it('refuses an INDEXER_QUERY_MAX_RESULT_BYTES that is not a number of bytes from 1000, naming it', () => {
    const base = { RPC_URL: 'http://127.0.0.1:8545', NETWORK: 'sepolia' };
    for (const value of ['1e6', '999', '-1', '20 MB']) {
      expect(() => indexerConfigFromEnv({ ...base, INDEXER_QUERY_MAX_RESULT_BYTES: value })).toThrow(
        `INDEXER_QUERY_MAX_RESULT_BYTES must be an integer of at least 1000 in decimal digits, got "${value}"`,
      );
    }
  });
});

describe('query limits: npm run indexer', () => {
  const repoRoot = resolve(import.meta.dirname, '../..');
  const dataDir = mkdtempSync(join(tmpdir(), 'indexer-limits-'));
  let child: ChildProcess;
  let endpoint = '';

  beforeAll(async () => {
    child = spawn(process.execPath, [join(repoRoot, 'build', 'indexer-main.mjs')], {
      cwd: repoRoot,
      env: {
        ...process.env,
        RPC_URL: inject('devnet').rpcUrl,
        NETWORK: 'devnet',
        PORT: '0',
        DATA_DIR: dataDir,
        INDEXER_QUERY_MAX_RESULT_BYTES: '1000',
        INDEXER_QUERY_TIMEOUT_MS: '100',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // the query endpoint is printed at start; `synced to block` once the devnet's events are in
    for await (const line of createInterface({ input: child.stdout! })) {
      endpoint ||= /^query endpoint: (\S+)/.exec(line)?.[1] ?? '';
      if (/synced to block/.test(line)) break;
    }
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves queries with the INDEXER_QUERY_MAX_RESULT_BYTES it is given', async () => {
    const answer = await queryAnswer(endpoint, '{ protocolEvents(first: 10) { id } }');
    expect(answer.errors?.[0]?.message).toMatch(/is larger than the allowed limit of 1000;/);
  });

  it('serves queries with the INDEXER_QUERY_TIMEOUT_MS it is given', async () => {
    // a thousand filters each reading every event of the devnet's and matching none: about a second
    const answer = await queryAnswer(endpoint, scanningQuery(1000));
    expect(answer.errors?.[0]?.message).toMatch(
      /^Query timed out: it was not answered within the limit of 100 ms;/,
    );
  });
});
