// graph-node's index-node status API (server/index-node/src/schema.graphql), served at /graphql
// beside the subgraph's endpoints: the part one embedded deployment can answer from its store, so
// tools that ask graph-node whether a subgraph is synced, healthy or failed (and where) get the same
// answers here, and what features the deployment uses. Proofs of indexing, cached calls, block data
// and subgraph sizes are not served: asking for them fails validation. Where graph-node knows more
// than the store records, the field says so. A store a query found damaged is reported failed.
import { buildSchema, type GraphQLSchema } from 'graphql';
import type { Subgraph } from '../runtime/manifest.ts';
import type { SubgraphSchema } from '../subgraph-schema.ts';
import type { BlockHeader } from '../store/meta-tables.ts';
import { sqlToJson, idFromSql, type TableLayout } from '../store/layout.ts';
import { damagedStoreMessage } from '../store/sqlite-store.ts';
import type { QueryContext } from './api-schema.ts';
import { storeDamageMet } from './execute-query.ts';
import { QueryError } from './sql-query.ts';

const sdl = `
scalar BigInt
scalar Bytes
scalar JSONObject

type Query {
  indexingStatusForCurrentVersion(subgraphName: String!): SubgraphIndexingStatus
  "Always null: the embedded indexer runs one version of its subgraph"
  indexingStatusForPendingVersion(subgraphName: String!): SubgraphIndexingStatus
  indexingStatusesForSubgraphName(subgraphName: String!): [SubgraphIndexingStatus!]!
  indexingStatuses(subgraphs: [String!]): [SubgraphIndexingStatus!]!
  entityChangesInBlock(subgraphId: String!, blockNumber: Int!): EntityChanges!
  "The hash of an indexed block; null for a block the store has no header of"
  blockHashFromNumber(network: String!, blockNumber: Int!): Bytes
  subgraphFeatures(subgraphId: String!): SubgraphFeatures!
}

type SubgraphFeatures {
  apiVersion: String
  specVersion: String!
  features: [Feature!]!
  dataSources: [String!]!
  handlers: [String!]!
  network: String
}

enum Feature {
  nonFatalErrors
  grafting
  fullTextSearch
  ipfsOnEthereumContracts
  aggregations
  declaredEthCalls
  immutableEntities
  bytesAsIds
}

type SubgraphIndexingStatus {
  subgraph: String!
  "Whether the subgraph has ever caught up with the chain head (to within 10 blocks)"
  synced: Boolean!
  health: Health!
  "If the subgraph has failed, this is the error caused it"
  fatalError: SubgraphError
  "The handler errors indexing went on after: only a manifest declaring the nonFatalErrors feature has any"
  nonFatalErrors: [SubgraphError!]!
  chains: [ChainIndexingStatus!]!
  "The entities that exist at the latest block"
  entityCount: BigInt!
  node: String
  paused: Boolean
  "Blocks of history the store keeps (2147483647, graph-node's value, when it keeps all)"
  historyBlocks: Int!
}

interface ChainIndexingStatus {
  network: String!
  chainHeadBlock: Block
  earliestBlock: EarliestBlock
  latestBlock: Block
  lastHealthyBlock: Block
}

type EthereumIndexingStatus implements ChainIndexingStatus {
  network: String!
  "The head the follower saw last, below latestBlock while the node is behind; its hash is null while the head is past the indexed blocks (the follower polls the head's number only)"
  chainHeadBlock: Block
  earliestBlock: EarliestBlock
  latestBlock: Block
  lastHealthyBlock: Block
}

type EntityChanges {
  updates: [EntityTypeUpdates!]!
  deletions: [EntityTypeDeletions!]!
}

type EntityTypeUpdates {
  type: String!
  entities: [JSONObject!]!
}

type EntityTypeDeletions {
  type: String!
  entities: [ID!]!
}

type Block {
  "null where the store has no header of the block"
  hash: Bytes
  number: BigInt!
}

type EarliestBlock {
  hash: Bytes! @deprecated(reason: "hash will always be reported as 0x0.")
  number: BigInt!
}

type SubgraphError {
  message: String!
  block: Block
  handler: String
  deterministic: Boolean!
}

enum Health {
  "Subgraph syncing normally"
  healthy
  "Subgraph syncing but with errors"
  unhealthy
  "Subgraph halted due to errors"
  failed
}
`;

/** What graph-node's subgraphFeatures reports of a deployment. */
export interface DeploymentFeatures {
  /** the mappings' apiVersion when they all share one, else null */
  apiVersion: string | null;
  specVersion: string;
  /** declared in the manifest, then those graph-node detects: declared calls, immutable entities, Bytes ids */
  features: string[];
  /** the kinds of the data sources and templates (`ethereum`, `file/ipfs`, `file/arweave`) */
  dataSources: string[];
  /** the kinds of the data sources' handlers: `event`, `call`, `block`, `block_filter_once`, ... */
  handlers: string[];
  network: string;
}

const BLOCK_HANDLER_KINDS = {
  every: 'block',
  once: 'block_filter_once',
  polling: 'block_filter_polling',
  call: 'block_filter_call',
} as const;

/** A deployment's features as graph-node's deployment_features and subgraphFeatures resolver give them. */
export function deploymentFeatures(subgraph: Subgraph, schema: SubgraphSchema): DeploymentFeatures {
  const mappings = [...subgraph.dataSources, ...subgraph.templates.values()].map((d) => d.mapping);
  const apiVersions = new Set(mappings.map((m) => m.apiVersion));
  const features = new Set(subgraph.features);
  const entities = [...schema.entities.values()];
  if (subgraph.declaresCalls) features.add('declaredEthCalls');
  if (entities.some((e) => e.immutable)) features.add('immutableEntities');
  if (entities.some((e) => e.idKind === 'Bytes')) features.add('bytesAsIds');
  const handlers = new Set<string>();
  for (const { mapping } of subgraph.dataSources) {
    if (mapping.handlers.size > 0) handlers.add('event');
    if (mapping.callHandlers.size > 0) handlers.add('call');
    for (const h of mapping.blockHandlers) handlers.add(BLOCK_HANDLER_KINDS[h.filter]);
  }
  return {
    apiVersion: apiVersions.size === 1 ? [...apiVersions][0]! : null,
    specVersion: subgraph.specVersion,
    features: [...features],
    dataSources: [...subgraph.declaredKinds].sort(),
    handlers: [...handlers].sort(),
    network: subgraph.network,
  };
}

interface IndexNodeDeployment {
  deployment: string;
  /** the store's file, which the failure of a damaged store names */
  storePath?: string;
  subgraphName: string;
  network: string;
  /** blocks of history the store keeps */
  historyBlocks: number;
  /** the entity tables */
  tables: TableLayout[];
  /** what subgraphFeatures reports; unknown to a query service opened over a store file alone */
  features?: DeploymentFeatures;
  /**
   * why indexing is held up, if it is, by a failure it waits out (a store that cannot be written,
   * an unexpected error indexing starts again after, a node far below the blocks indexed):
   * graph-node reports such a non-deterministic error as a failure until the restarted subgraph
   * gets past it (and, as graph-node, `_meta.hasIndexingErrors` counts deterministic errors only)
   */
  transientFailure?: () => string | null;
}

export interface IndexNodeApi {
  schema: GraphQLSchema;
  rootValue: Record<string, (args: never, ctx: QueryContext) => unknown>;
}

const block = (number: number, hash: string | null) => ({ number: String(number), hash });

function indexingStatus(d: IndexNodeDeployment, ctx: QueryContext) {
  const { latest, reader } = ctx;
  const hashAt = (number: number): string | null =>
    number === latest.number
      ? (latest.header?.hash ?? null)
      : number === latest.number - 1
        ? (latest.header?.parentHash ?? null)
        : (reader.storedBlock(number)?.hash ?? null);
  const latestBlock = latest.header ? block(latest.header.number, latest.header.hash) : null;
  let fatalError = null;
  if (latest.fatalError !== null) {
    const at = reader.fatalErrorContext();
    fatalError = {
      message: latest.fatalError,
      // the failed block is the latest, committed without its changes
      block: at.block === null ? null : block(at.block, hashAt(at.block)),
      handler: at.handler,
      deterministic: true,
    };
  } else {
    const damage = storeDamageMet(reader);
    // no one block failed: a query found the store damaged (indexing stops once it meets the damage
    // too, but it may never read those pages), a batch failed to commit, or the node is behind
    const failure =
      damage === null ? (d.transientFailure?.() ?? null) : damagedStoreMessage(d.storePath, damage);
    if (failure !== null) fatalError = { message: failure, block: null, handler: null, deterministic: false };
  }
  const nonFatalErrors = reader.handlerErrors().map((e) => ({
    message: e.message,
    block: block(e.block, e.hash),
    handler: e.handler,
    deterministic: true,
  }));
  // the block before the first error: graph-node declares the field but leaves it null; a client
  // reading it learns where the data it can trust ends
  const lastHealthyBlock =
    fatalError && latest.firstErrorBlock !== null
      ? block(latest.firstErrorBlock - 1, hashAt(latest.firstErrorBlock - 1))
      : null;
  return {
    subgraph: d.deployment,
    synced: reader.synced(),
    health: fatalError ? 'failed' : nonFatalErrors.length > 0 ? 'unhealthy' : 'healthy',
    fatalError,
    nonFatalErrors,
    chains: [
      {
        __typename: 'EthereumIndexingStatus',
        network: d.network,
        chainHeadBlock: latest.headSeen === null ? null : block(latest.headSeen, hashAt(latest.headSeen)),
        earliestBlock: { hash: '0x0', number: String(latest.earliest) },
        latestBlock,
        lastHealthyBlock,
      },
    ],
    // counted only when asked for: it reads every table, and health checks ask for the rest only
    entityCount: () => String(reader.entityCount(d.tables)),
    node: 'embedded',
    paused: reader.pausedAt() !== null,
    historyBlocks: d.historyBlocks,
  };
}

/** An entity version as graph-node's entityChangesInBlock gives it: its set fields as JSON. */
function entityJson(table: TableLayout, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of table.columns) {
    const value = row[column.field.name];
    if (value !== null && value !== undefined) out[column.field.name] = sqlToJson(column, value);
  }
  return out;
}

export function buildIndexNodeApi(d: IndexNodeDeployment): IndexNodeApi {
  const status = (ctx: QueryContext) => indexingStatus(d, ctx);
  const notIndexed = (deployment: string) =>
    new QueryError(`deployment \`${deployment}\` is not indexed here; this node indexes \`${d.deployment}\``);
  const ours = (subgraphName: string) => subgraphName === d.subgraphName;
  const rootValue = {
    subgraphFeatures: (args: { subgraphId: string }) => {
      if (args.subgraphId !== d.deployment) throw notIndexed(args.subgraphId);
      if (!d.features)
        throw new QueryError(`the manifest of deployment \`${d.deployment}\` is not known here`);
      return d.features;
    },
    indexingStatusForCurrentVersion: (args: { subgraphName: string }, ctx: QueryContext) =>
      ours(args.subgraphName) ? status(ctx) : null,
    indexingStatusForPendingVersion: () => null,
    indexingStatusesForSubgraphName: (args: { subgraphName: string }, ctx: QueryContext) =>
      ours(args.subgraphName) ? [status(ctx)] : [],
    // no list, or an empty one, asks for every deployment (graph-node's find_sites)
    indexingStatuses: (args: { subgraphs?: string[] | null }, ctx: QueryContext) =>
      !args.subgraphs?.length || args.subgraphs.includes(d.deployment) ? [status(ctx)] : [],
    entityChangesInBlock: (args: { subgraphId: string; blockNumber: number }, ctx: QueryContext) => {
      if (args.subgraphId !== d.deployment) throw notIndexed(args.subgraphId);
      const updates = [];
      const deletions = [];
      for (const table of d.tables) {
        const written = ctx.reader.versionsFrom(table, args.blockNumber);
        if (written.length) {
          updates.push({ type: table.entity.name, entities: written.map((row) => entityJson(table, row)) });
        }
        const removed = ctx.reader.removedAt(table, args.blockNumber);
        if (removed.length) {
          deletions.push({
            type: table.entity.name,
            entities: removed.map((id) => idFromSql(table.idKind, id)),
          });
        }
      }
      return { updates, deletions };
    },
    blockHashFromNumber: (args: { network: string; blockNumber: number }, ctx: QueryContext) => {
      if (args.network !== d.network) {
        throw new QueryError(
          `network \`${args.network}\` is not indexed here; this node indexes \`${d.network}\``,
        );
      }
      const header: BlockHeader | null =
        args.blockNumber === ctx.latest.number ? ctx.latest.header : ctx.reader.storedBlock(args.blockNumber);
      return header && args.blockNumber <= ctx.latest.number ? header.hash : null;
    },
  };
  return { schema: buildSchema(sdl), rootValue: rootValue as IndexNodeApi['rootValue'] };
}
