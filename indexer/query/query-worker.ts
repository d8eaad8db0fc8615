// A query worker: a thread of its own that executes the query API's requests, so that no query holds
// up the thread that indexes (and, under `npm start`, serves the REST API). It opens its own
// read-only connection to the store and builds the schemas from what query-workers.ts hands it;
// the HTTP server stays on the main thread and passes each request in and its answer, JSON text,
// out. A query that runs too long is ended by ending the thread (query-workers.ts): a synchronous
// query cannot be interrupted any other way.
import { parentPort, workerData } from 'node:worker_threads';
import type { SubgraphSchema } from '../subgraph-schema.ts';
import { buildLayouts } from '../store/layout.ts';
import { buildApiSchema } from './api-schema.ts';
import { executeQuery, type ExecutableApi, type GraphQLRequest } from './execute-query.ts';
import { buildIndexNodeApi, type DeploymentFeatures } from './index-node-api.ts';
import { buildQueryModel } from './sql-query.ts';
import { StoreReader } from './store-reader.ts';

/** What a query worker is started with: the store and what the index-node API reports of it. */
export interface QueryWorkerData {
  /** marks the thread as a query worker, which serves its parent once loaded */
  queryWorker: true;
  storePath: string;
  schema: SubgraphSchema;
  deployment: string;
  subgraphName: string;
  /** the chain indexed, and the first block indexed: what the index-node status API reports */
  network: string;
  startBlock: number;
  /** blocks of history the store keeps (graph-node's historyBlocks) */
  historyBlocks: number;
  /** the deployment's features, for the index-node API's subgraphFeatures */
  features?: DeploymentFeatures;
  /** the most a query may read, in bytes of entities */
  maxResultBytes: number;
}

/** Which API a request is for: the subgraph's, or the index-node status API. */
export type QueryApiName = 'subgraph' | 'indexNode';

/** A request for the worker; `transientFailure` is the indexer's state as the request arrived. */
export interface QueryJob {
  api: QueryApiName;
  /** the GraphQLRequest as JSON text */
  requestJson: string;
  transientFailure: string | null;
}

/**
 * What a worker says: it is ready, or could not start; or the answer to the job it was given (it
 * runs one at a time) as the JSON text to send, or why it could not be written.
 */
export type QueryWorkerMessage =
  | { ready: true }
  | { startFailure: string }
  | { body: string }
  | { failure: string };

function serveParent(): void {
  const port = parentPort!;
  const data = workerData as QueryWorkerData;
  let reader: StoreReader;
  try {
    reader = new StoreReader(data.storePath, data.deployment, data.startBlock);
  } catch (error) {
    port.postMessage({ startFailure: (error as Error).message } satisfies QueryWorkerMessage);
    return;
  }
  const layouts = buildLayouts(data.schema);
  let transientFailure: string | null = null;
  const indexNode = buildIndexNodeApi({
    ...data,
    tables: [...layouts.values()],
    transientFailure: () => transientFailure,
  });
  const apis: Record<QueryApiName, ExecutableApi> = {
    subgraph: { schema: buildApiSchema(buildQueryModel(data.schema, layouts)), subgraphErrors: true },
    indexNode,
  };
  port.on('message', (job: QueryJob) => {
    transientFailure = job.transientFailure;
    let message: QueryWorkerMessage;
    try {
      // the HTTP server has checked that it parses; a body of `null` asks nothing
      const request = (JSON.parse(job.requestJson) ?? {}) as GraphQLRequest;
      const api = {
        ...apis[job.api],
        reader,
        maxResultBytes: data.maxResultBytes,
        storePath: data.storePath,
      };
      message = { body: JSON.stringify(executeQuery(api, request)) };
    } catch (error) {
      message = { failure: (error as Error).stack ?? String(error) };
    }
    port.postMessage(message);
  });
  port.postMessage({ ready: true } satisfies QueryWorkerMessage);
}

// started as a worker by query-workers.ts, from this module's bundle (build/indexer-query-worker.mjs)
if (parentPort && (workerData as Partial<QueryWorkerData> | null)?.queryWorker === true) serveParent();
