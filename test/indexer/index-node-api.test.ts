// graph-node's index-node status API at /graphql, over the store holding the known history of
// store-fixture.ts (blocks 10..13, the head seen at 20): the deployment's status, sync and health,
// its chain's blocks, the entity count, the changes one block made, and block hashes; then the status
// of a store whose indexing failed; and the features of the probe subgraph and of the harness
// indexer's deployment. Requests go through the real HTTP server.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deploymentFeatures } from '../../indexer/query/index-node-api.ts';
import { loadSubgraph } from '../../indexer/runtime/manifest.ts';
import { parseSubgraphSchema } from '../../indexer/subgraph-schema.ts';
import { buildProbeSubgraph } from './probe-build.ts';
import { queryErrorOf, queryIndexer } from './graphql-client.ts';
import { loadEditedProbe } from './runtime/runtime-harness.ts';
import {
  deployment,
  extraEvents,
  header,
  navHistory,
  navId,
  vault1,
  vault2,
  vault3,
  type Fixture,
  serveFixture,
  type ServedFixture,
} from './store-fixture.ts';

/** The fixture's history served (serveFixture), `prepare`d further; `url` is its index-node API. */
async function serve(prepare?: (fixture: Fixture) => void): Promise<ServedFixture> {
  const served = await serveFixture(prepare);
  return { ...served, url: `${new URL(served.url).origin}/graphql` };
}

const STATUS = `subgraph synced health entityCount node paused historyBlocks nonFatalErrors { message }
  fatalError { message handler deterministic block { number hash } }
  chains { __typename network chainHeadBlock { number hash } earliestBlock { number hash }
           latestBlock { number hash } lastHealthyBlock { number hash } }`;

describe('the index-node status of a deployment indexing', () => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serve();
  });
  afterAll(() => served?.close());

  it('reports it healthy, not yet synced to the head it saw, with its chain’s blocks and entity count', async () => {
    const data = await queryIndexer<{ indexingStatuses: unknown[] }>(
      served.url,
      `{ indexingStatuses { ${STATUS} } }`,
    );
    const current = 3 + navHistory[13]!.length + 5 + extraEvents;
    expect(data.indexingStatuses).toEqual([
      {
        subgraph: deployment,
        synced: false,
        health: 'healthy',
        entityCount: String(current),
        node: 'embedded',
        paused: false,
        historyBlocks: 2_147_483_647,
        nonFatalErrors: [],
        fatalError: null,
        chains: [
          {
            __typename: 'EthereumIndexingStatus',
            network: 'devnet',
            chainHeadBlock: { number: '20', hash: null },
            // graph-node's earliest block: the one before the start block
            earliestBlock: { number: '9', hash: '0x0' },
            latestBlock: { number: '13', hash: header(13).hash },
            lastHealthyBlock: null,
          },
        ],
      },
    ]);
  });

  it('finds the status by deployment or subgraph name, and nothing for others', async () => {
    const data = await queryIndexer(
      served.url,
      `{ mine: indexingStatuses(subgraphs: ["${deployment}"]) { subgraph }
         all: indexingStatuses(subgraphs: []) { subgraph }
         others: indexingStatuses(subgraphs: ["QmOther"]) { subgraph }
         current: indexingStatusForCurrentVersion(subgraphName: "fund-protocol") { subgraph }
         unknown: indexingStatusForCurrentVersion(subgraphName: "other") { subgraph }
         pending: indexingStatusForPendingVersion(subgraphName: "fund-protocol") { subgraph }
         named: indexingStatusesForSubgraphName(subgraphName: "fund-protocol") { subgraph }
         unnamed: indexingStatusesForSubgraphName(subgraphName: "other") { subgraph } }`,
    );
    expect(data).toEqual({
      mine: [{ subgraph: deployment }],
      // an empty list asks for every deployment, as graph-node reads it
      all: [{ subgraph: deployment }],
      others: [],
      current: { subgraph: deployment },
      unknown: null,
      pending: null,
      named: [{ subgraph: deployment }],
      unnamed: [],
    });
  });

  it('lists the entities a block wrote and the ids it removed', async () => {
    const data = await queryIndexer<{
      b12: { updates: { type: string; entities: { id: string }[] }[]; deletions: unknown[] };
      b13: { updates: { type: string; entities: unknown[] }[]; deletions: unknown[] };
    }>(
      served.url,
      `{ b12: entityChangesInBlock(subgraphId: "${deployment}", blockNumber: 12) { updates { type entities } deletions { type entities } }
         b13: entityChangesInBlock(subgraphId: "${deployment}", blockNumber: 13) { updates { type entities } deletions { type entities } } }`,
    );
    const idsOf = (changes: { type: string; entities: { id: string }[] }[]) =>
      changes.map((c) => [c.type, c.entities.map((e) => e.id)]);
    expect(idsOf(data.b12.updates)).toEqual([
      ['Fund', [vault1, vault3]],
      ['NavRecord', [navId(vault2, 1), navId(vault2, 2)]],
      ['ProtocolEvent', ['0x00000003', '0x00000004', '0x00000005']],
    ]);
    expect(data.b12.deletions).toEqual([]);
    const alpha = data.b12.updates[0]!.entities[0] as Record<string, unknown>;
    expect(alpha).toMatchObject({
      id: vault1,
      slug: 'alpha-income',
      latestNav: navId(vault1, 2),
      closed: false,
    });
    expect(data.b13.updates.map((u) => [u.type, u.entities.length])).toEqual([
      ['ProtocolEvent', extraEvents],
    ]);
    expect(data.b13.deletions).toEqual([{ type: 'NavRecord', entities: [navId(vault2, 2)] }]);
  });

  it('gives the hash of an indexed block, and null past them', async () => {
    const data = await queryIndexer(
      served.url,
      `{ latest: blockHashFromNumber(network: "devnet", blockNumber: 13)
         earlier: blockHashFromNumber(network: "devnet", blockNumber: 11)
         ahead: blockHashFromNumber(network: "devnet", blockNumber: 14) }`,
    );
    expect(data).toEqual({ latest: header(13).hash, earlier: header(11).hash, ahead: null });
  });

  it('names what it does not index, and refuses what it does not serve', async () => {
    expect(
      await queryErrorOf(
        served.url,
        '{ entityChangesInBlock(subgraphId: "QmOther", blockNumber: 1) { deletions { type } } }',
      ),
    ).toContain(`deployment \`QmOther\` is not indexed here; this node indexes \`${deployment}\``);
    expect(
      await queryErrorOf(served.url, '{ blockHashFromNumber(network: "mainnet", blockNumber: 1) }'),
    ).toContain('network `mainnet` is not indexed here; this node indexes `devnet`');
    expect(
      await queryErrorOf(
        served.url,
        `{ proofOfIndexing(subgraph: "${deployment}", blockNumber: 1, blockHash: "0x00") }`,
      ),
    ).toContain('Cannot query field "proofOfIndexing" on type "Query"');
  });
});

describe('the index-node status of a deployment whose indexing failed', () => {
  let served: ServedFixture;
  beforeAll(async () => {
    // the follower commits the failed block without its changes, with the failure
    served = await serve(({ store }) => {
      store.begin();
      store.recordFatalError('Handler handleNav failed at block 14: boom', 14, 'handleNav');
      store.commit(header(14), 20);
    });
  });
  afterAll(() => served?.close());

  it('reports it failed, naming the block and handler, with the last healthy block', async () => {
    const data = await queryIndexer<{ indexingStatuses: Record<string, unknown>[] }>(
      served.url,
      `{ indexingStatuses { ${STATUS} } }`,
    );
    const [status] = data.indexingStatuses;
    expect(status).toMatchObject({
      health: 'failed',
      fatalError: {
        message: 'Handler handleNav failed at block 14: boom',
        handler: 'handleNav',
        deterministic: true,
        block: { number: '14', hash: header(14).hash },
      },
    });
    expect((status!.chains as Record<string, unknown>[])[0]!.lastHealthyBlock).toEqual({
      number: '13',
      hash: header(13).hash,
    });
  });
});

describe('the index-node status of a deployment indexing past handler errors (nonFatalErrors)', () => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serve(({ store }) => {
      store.begin();
      store.recordHandlerErrors(header(14), [
        {
          dataSource: 'FundVault',
          handler: 'handleNav',
          message: 'Handler handleNav failed at block 14: boom',
        },
      ]);
      store.setPausedAt(14);
      store.commit(header(14), 20);
    });
  });
  afterAll(() => served?.close());

  it('reports it unhealthy and paused, listing the errors with their blocks and handlers', async () => {
    const data = await queryIndexer<{ indexingStatuses: Record<string, unknown>[] }>(
      served.url,
      '{ indexingStatuses { health paused fatalError { message } nonFatalErrors { message handler deterministic block { number hash } } } }',
    );
    expect(data.indexingStatuses).toEqual([
      {
        health: 'unhealthy',
        paused: true,
        fatalError: null,
        nonFatalErrors: [
          {
            message: 'Handler handleNav failed at block 14: boom',
            handler: 'handleNav',
            deterministic: true,
            block: { number: '14', hash: header(14).hash },
          },
        ],
      },
    ]);
  });
});

describe('the features of a deployment (subgraphFeatures)', () => {
  it('are what graph-node reports of the probe subgraph: declared and detected features, data source and handler kinds', async () => {
    const probe = await loadSubgraph({ buildDir: buildProbeSubgraph() });
    const probeSchema = parseSubgraphSchema(readFileSync(probe.schemaFile, 'utf8'));
    expect(deploymentFeatures(probe, probeSchema)).toEqual({
      apiVersion: '0.0.9',
      specVersion: '1.3.0',
      features: ['ipfsOnEthereumContracts', 'declaredEthCalls', 'immutableEntities'],
      dataSources: ['ethereum', 'file/arweave', 'file/ipfs'],
      handlers: ['block', 'block_filter_call', 'block_filter_once', 'block_filter_polling', 'call', 'event'],
      network: 'devnet',
    });
  });

  it('name the data source kinds as the manifest spells them, as graph-node reports them', async () => {
    // older graph-cli versions wrote `ethereum/contract`; both run as `ethereum`
    const probe = await loadEditedProbe((manifest) =>
      manifest.replace(/^( {2}- kind: )ethereum\n( {4}name: EveryBlock)$/m, '$1ethereum/contract\n$2'),
    );
    const probeSchema = parseSubgraphSchema(readFileSync(probe.schemaFile, 'utf8'));
    expect(deploymentFeatures(probe, probeSchema).dataSources).toEqual([
      'ethereum',
      'ethereum/contract',
      'file/arweave',
      'file/ipfs',
    ]);
  });

  it("are served for the indexer's deployment, and refused for another, naming the one indexed", async () => {
    const indexer = inject('indexer');
    const url = `${new URL(indexer.queryUrl).origin}/graphql`;
    const fields = 'apiVersion specVersion features dataSources handlers network';
    const data = await queryIndexer<{ subgraphFeatures: unknown }>(
      url,
      `{ subgraphFeatures(subgraphId: "${indexer.deployment}") { ${fields} } }`,
    );
    expect(data.subgraphFeatures).toEqual({
      apiVersion: '0.0.9',
      specVersion: '1.3.0',
      features: ['immutableEntities', 'bytesAsIds'],
      dataSources: ['ethereum'],
      handlers: ['event'],
      network: 'devnet',
    });
    expect(await queryErrorOf(url, `{ subgraphFeatures(subgraphId: "QmOther") { ${fields} } }`)).toBe(
      `deployment \`QmOther\` is not indexed here; this node indexes \`${indexer.deployment}\``,
    );
  });
});
