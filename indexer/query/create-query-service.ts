// Wires the query side of the embedded indexer from a store file: the query workers, each with its
// own read connection and the generated schemas, and the HTTP server on this thread that hands them
// requests. The indexer builder and the tests both start it from here.
import type { Server } from 'node:http';
import { DEFAULT_MAX_RESULT_BYTES } from './execute-query.ts';
import type { QueryWorkerData } from './query-worker.ts';
import { DEFAULT_QUERY_TIMEOUT_MS, QueryWorkers } from './query-workers.ts';
import { createQueryServer, listen } from './server.ts';

/**
 * Query workers per service: one slow query leaves another to answer the rest (the gateway's
 * health check among them), without taking more of the two cores indexing shares.
 */
const QUERY_WORKERS = 2;

/** The store and what the index-node API reports of it (QueryWorkerData), and the service's limits. */
export interface QueryServiceOptions extends Omit<QueryWorkerData, 'queryWorker' | 'maxResultBytes'> {
  /** what holds indexing up while it waits to try again, for the index-node status API */
  transientFailure?: () => string | null;
  /**
   * the most a query may read, in bytes of entities (graph-node's GRAPH_GRAPHQL_ERROR_RESULT_SIZE;
   * default DEFAULT_MAX_RESULT_BYTES; INDEXER_QUERY_MAX_RESULT_BYTES under `npm run indexer`)
   */
  maxResultBytes?: number;
  /**
   * the most a request may take from its arrival to its answer (default DEFAULT_QUERY_TIMEOUT_MS;
   * INDEXER_QUERY_TIMEOUT_MS under `npm run indexer`)
   */
  timeoutMs?: number;
  /** how long the server keeps an idle keep-alive connection (HTTP_KEEP_ALIVE_TIMEOUT_MS under `npm run indexer`) */
  keepAliveTimeoutMs?: number;
}

export interface QueryService {
  /** starts the query workers and listens on loopback; resolves with the URL of /subgraphs/name/<name> */
  listen(port: number): Promise<string>;
  close(): Promise<void>;
}

export function createQueryService(options: QueryServiceOptions): QueryService {
  const { transientFailure, maxResultBytes, timeoutMs, keepAliveTimeoutMs, ...store } = options;
  const workers = new QueryWorkers({
    data: { ...store, maxResultBytes: maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES },
    workers: QUERY_WORKERS,
    timeoutMs: timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
    transientFailure,
  });
  let server: Server | null = null;
  return {
    async listen(port) {
      await workers.start();
      server = createQueryServer({
        subgraphName: options.subgraphName,
        deployment: options.deployment,
        run: (api, request) => workers.run(api, request),
        keepAliveTimeoutMs,
      });
      const base = await listen(server, port);
      return `${base}/subgraphs/name/${options.subgraphName}`;
    },
    async close() {
      if (server) {
        const s = server;
        server = null;
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
      await workers.close();
    },
  };
}
