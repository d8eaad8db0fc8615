// Wires the query side of the embedded indexer from a store file: the reader connection, the
// generated schema and the HTTP server. The indexer builder and the tests both start it from here.
import type { Server } from 'node:http';
import type { SubgraphSchema } from '../subgraph-schema.ts';
import { buildLayouts } from '../store/layout.ts';
import { buildApiSchema } from './api-schema.ts';
import { buildIndexNodeApi, type DeploymentFeatures } from './index-node-api.ts';
import {
  createQueryServer,
  DEFAULT_MAX_RESULT_BYTES,
  executeQuery,
  listen,
  type GraphQLRequest,
} from './server.ts';
import { buildQueryModel } from './sql-query.ts';
import { StoreReader } from './store-reader.ts';
import type { ExecutionResult } from 'graphql';

export interface QueryServiceOptions {
  storePath: string;
  schema: SubgraphSchema;
  deployment: string;
  subgraphName: string;
  /** the chain indexed, and the first block indexed: what the index-node status API reports */
  network: string;
  startBlock: number;
  /** blocks of history the store keeps (graph-node's historyBlocks) */
  historyBlocks: number;
  /** what holds indexing up while it waits to try again, for the index-node status API */
  transientFailure?: () => string | null;
  /** the deployment's features, for the index-node API's subgraphFeatures */
  features?: DeploymentFeatures;
  /**
   * the most a query may read, in bytes of entities (graph-node's GRAPH_GRAPHQL_ERROR_RESULT_SIZE;
   * default DEFAULT_MAX_RESULT_BYTES; INDEXER_QUERY_MAX_RESULT_BYTES under `npm run indexer`)
   */
  maxResultBytes?: number;
  /** how long the server keeps an idle keep-alive connection (HTTP_KEEP_ALIVE_TIMEOUT_MS under `npm run indexer`) */
  keepAliveTimeoutMs?: number;
}

export interface QueryService {
  /** executes a request in-process (same path as HTTP) */
  execute(request: GraphQLRequest): ExecutionResult;
  /** starts listening; resolves with the URL of /subgraphs/name/<name> */
  listen(port: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

export function createQueryService(options: QueryServiceOptions): QueryService {
  const reader = new StoreReader(options.storePath, options.deployment, options.startBlock);
  const layouts = buildLayouts(options.schema);
  const model = buildQueryModel(options.schema, layouts);
  const schema = buildApiSchema(model);
  const indexNode = buildIndexNodeApi({ ...options, tables: [...layouts.values()] });
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  let server: Server | null = null;
  return {
    execute: (request) => executeQuery({ schema, reader, subgraphErrors: true, maxResultBytes }, request),
    async listen(port, host) {
      server = createQueryServer({
        schema,
        reader,
        subgraphName: options.subgraphName,
        indexNode,
        maxResultBytes,
        keepAliveTimeoutMs: options.keepAliveTimeoutMs,
      });
      const base = await listen(server, port, host);
      return `${base}/subgraphs/name/${options.subgraphName}`;
    },
    async close() {
      if (server) {
        const s = server;
        server = null;
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
      reader.close();
    },
  };
}
