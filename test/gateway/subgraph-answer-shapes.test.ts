// The gateway behind a loopback subgraph that answers what each test sets: an answer whose rows
// break their collection's shape (a field of the wrong type) is refused as UPSTREAM_UNAVAILABLE,
// never passed on as null or as an internal error; and a fund's NAV records reach the public
// fields they stand for. The fake answers every field under the name it was asked as (aliases
// included), as graph-node does, so it checks what the gateway asks for as well as what it reads.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Kind, parse, type OperationDefinitionNode, type SelectionNode } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../gateway/server.ts';
import { loadRegistry } from '../../gateway/sources/registry.ts';
import { graphql, REGISTRY_FILE } from '../harness/stack.ts';

type Entity = Record<string, unknown>;

const registry = loadRegistry(REGISTRY_FILE);
const fund = registry.funds[0]!;
const vault = fund.vault.toLowerCase();

const META = {
  block: { number: 120, hash: `0x${'ab'.repeat(32)}`, timestamp: 1_735_700_000 },
  deployment: 'QmFakeSubgraph',
  hasIndexingErrors: false,
};

/** the entities of each collection the fake answers with, set by each test */
let collections: Record<string, Entity[]> = {};

/** `entity` with the fields `selections` ask for, each under its alias if it has one */
function project(entity: Entity, selections: readonly SelectionNode[]): Entity {
  return Object.fromEntries(
    selections.flatMap((selection) => {
      if (selection.kind !== Kind.FIELD) return [];
      const value = entity[selection.name.value];
      const nested =
        selection.selectionSet && value !== null && typeof value === 'object'
          ? project(value as Entity, selection.selectionSet.selections)
          : value;
      return [[selection.alias?.value ?? selection.name.value, nested]];
    }),
  );
}

function answer(query: string): Entity {
  const operation = parse(query).definitions[0] as OperationDefinitionNode;
  const data: Entity = {};
  for (const field of operation.selectionSet.selections) {
    if (field.kind !== Kind.FIELD) continue;
    const selections = field.selectionSet?.selections ?? [];
    data[field.alias?.value ?? field.name.value] =
      field.name.value === '_meta'
        ? project(META, selections)
        : (collections[field.name.value] ?? []).map((row) => project(row, selections));
  }
  return { data };
}

let subgraph: Server;
let gateway: Gateway;
beforeAll(async () => {
  subgraph = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const { query } = JSON.parse(Buffer.concat(chunks).toString()) as { query: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer(query)));
    });
  });
  await new Promise<void>((ready) => subgraph.listen(0, '127.0.0.1', ready));
  const { port } = subgraph.address() as AddressInfo;
  gateway = createGateway({
    registry,
    subgraph: { url: `http://127.0.0.1:${port}/subgraphs/name/fake`, timeoutMs: 5_000, maxBatch: 100 },
    chain: undefined,
    distributions: { base: undefined, timeoutMs: 1_000, cacheSize: 1 },
    logError: () => {},
  });
});
afterAll(() => new Promise<void>((closed) => subgraph.close(() => closed())));
beforeEach(() => {
  collections = {};
});

const event = (overrides: Entity): Entity => ({
  id: `0x${'12'.repeat(32)}-3`,
  contract: vault,
  eventName: 'FundClosed',
  blockNumber: '100',
  timestamp: '1735689600',
  txHash: `0x${'12'.repeat(32)}`,
  logIndex: '3',
  sortKey: String((100n << 32n) + 3n),
  args: '{}',
  fund: vault,
  ...overrides,
});

const navRecord = (epoch: number, status: string): Entity => ({
  epoch,
  status,
  navPerShare: '1000250',
  totalAssets: '5000000000',
  totalSupply: '4998750000',
  publishedAt: status === 'Published' ? '1735689600' : null,
  publishedTxHash: status === 'Published' ? `0x${'34'.repeat(32)}` : null,
});

const fundEntity = (latestPublishedNav: Entity | null, latestNav: Entity | null): Entity => ({
  id: vault,
  slug: fund.slug,
  closed: false,
  pausedModules: [],
  latestPublishedNav,
  latestNav,
});

const EVENTS_QUERY = '{ events { items { eventName fund } } }';

describe("the subgraph's protocol events", () => {
  it("are served with the fund a vault names, and null where the subgraph's fund is null", async () => {
    collections.protocolEvents = [event({ fund: vault }), event({ fund: null, logIndex: '2' })];
    const { data, errors } = await graphql(gateway, EVENTS_QUERY);
    expect(errors).toBeUndefined();
    expect(data?.events.items).toEqual([
      { eventName: 'FundClosed', fund: fund.slug },
      { eventName: 'FundClosed', fund: null },
    ]);
  });

  it.each([[12345], [{ id: vault }], [true]])(
    'are refused as UPSTREAM_UNAVAILABLE when one has fund %j, which is neither an address nor null',
    async (malformed) => {
      collections.protocolEvents = [event({ fund: vault }), event({ fund: malformed, logIndex: '2' })];
      const { data, errors } = await graphql(gateway, EVENTS_QUERY);
      expect(data?.events).toBeNull();
      expect(errors).toEqual([
        expect.objectContaining({
          message: 'The subgraph is unavailable; retry later.',
          extensions: expect.objectContaining({ code: 'UPSTREAM_UNAVAILABLE' }),
        }),
      ]);
    },
  );
});

describe("a fund's NAV records", () => {
  it("answer latestNav from the subgraph's latestPublishedNav and latestRecordedNav from its latestNav", async () => {
    collections.funds = [fundEntity(navRecord(3, 'Published'), navRecord(5, 'Draft'))];
    const { data, errors } = await graphql(
      gateway,
      `{ fund(slug: "${fund.slug}") { latestNav { epoch status } latestRecordedNav { epoch status } } }`,
    );
    expect(errors).toBeUndefined();
    expect(data?.fund).toEqual({
      latestNav: { epoch: 3, status: 'Published' },
      latestRecordedNav: { epoch: 5, status: 'Draft' },
    });
  });

  it('are refused as UPSTREAM_UNAVAILABLE when one has a status that is no NavStatus', async () => {
    collections.funds = [fundEntity(navRecord(3, 'Published'), navRecord(5, 'Rejected'))];
    const { data, errors } = await graphql(gateway, `{ fund(slug: "${fund.slug}") { latestNav { epoch } } }`);
    expect(data?.fund.latestNav).toBeNull();
    expect(errors).toEqual([
      expect.objectContaining({
        message: 'The subgraph is unavailable; retry later.',
        extensions: expect.objectContaining({ code: 'UPSTREAM_UNAVAILABLE' }),
      }),
    ]);
  });
});
