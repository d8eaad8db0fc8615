// The HTTP face of the embedded indexer: graph-node's query endpoints `/subgraphs/name/<name>` and
// `/subgraphs/id/<deployment>`, and its index-node status API at `/graphql`, accepting GraphQL over
// POST (JSON body) or GET (query string).
// Each request is parsed, validated against the generated schema, and executed inside one read
// transaction of the store; resolvers are synchronous, so a request never interleaves with another.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  GraphQLError,
  execute,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import type { QueryContext, TopLevelRead } from './api-schema.ts';
import type { IndexNodeApi } from './index-node-api.ts';
import { QueryError } from './sql-query.ts';
import type { LatestBlock, StoreReader } from './store-reader.ts';

export interface QueryServerOptions {
  schema: GraphQLSchema;
  reader: StoreReader;
  /** served at /subgraphs/name/<subgraphName> */
  subgraphName: string;
  /** graph-node's index-node status API, served at /graphql */
  indexNode: IndexNodeApi;
}

/** What a request executes against: a schema, and the root its query fields resolve from. */
export interface ExecutableApi {
  schema: GraphQLSchema;
  rootValue?: unknown;
  /** a subgraph's API: its answers follow graph-node's error policy (see applyErrorPolicy) */
  subgraphErrors?: boolean;
}

export interface GraphQLRequest {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

const MAX_BODY_BYTES = 1 << 20;

/** Executes one GraphQL request against the store; the result is what graph-node would send. */
/** What a query withholding its data for indexing errors still answers (graph-node's post_process). */
const KEPT_ON_DENY = new Set(['_meta', '__schema', '__type']);

/**
 * graph-node's error policy: consecutive top-level fields with the same `block` argument form a
 * group, which allows indexing errors only if each of its fields says `subgraphError: allow`
 * (`_meta`, `__typename` and the introspection fields cannot). A group reading a block at or after
 * the first indexing error gets the answer's `indexing_error`, unless it holds `_meta` alone; where
 * it does not allow errors, its fields other than `_meta` and introspection are left out of the
 * data (null when nothing is left).
 */
function applyErrorPolicy(
  result: ExecutionResult,
  reads: readonly TopLevelRead[],
  latest: LatestBlock,
): ExecutionResult {
  const first = latest.firstErrorBlock;
  if (first === null || result.errors || !result.data) return result;
  const noted = new Map(reads.map((r) => [r.key, r]));
  const groups: TopLevelRead[][] = [];
  // the data's keys are in the query's order; fields without a read noted take no `block`
  for (const key of Object.keys(result.data)) {
    const read = noted.get(key) ?? { key, constraint: 'latest', block: latest.number, allowsErrors: false };
    const last = groups.at(-1);
    if (last && last[0]!.constraint === read.constraint) last.push(read);
    else groups.push([read]);
  }
  const data: Record<string, unknown> = { ...result.data };
  let indexingError = false;
  for (const group of groups) {
    if (group[0]!.block < first || group.every((r) => r.key === '_meta')) continue;
    indexingError = true;
    if (group.some((r) => !r.allowsErrors))
      for (const r of group) if (!KEPT_ON_DENY.has(r.key)) delete data[r.key];
  }
  if (!indexingError) return result;
  return { data: Object.keys(data).length > 0 ? data : null, errors: [new GraphQLError('indexing_error')] };
}

export function executeQuery(
  options: ExecutableApi & { reader: StoreReader },
  request: GraphQLRequest,
): ExecutionResult {
  if (typeof request.query !== 'string') return { errors: [new GraphQLError('The query is empty')] };
  let document: DocumentNode;
  try {
    document = parse(request.query);
  } catch (e) {
    return { errors: [e as GraphQLError] };
  }
  const validationErrors = validate(options.schema, document, specifiedRules);
  if (validationErrors.length > 0) return { errors: validationErrors };
  const variables =
    request.variables && typeof request.variables === 'object'
      ? (request.variables as Record<string, unknown>)
      : {};
  let contextValue: QueryContext | null = null;
  const result = options.reader.read(() => {
    contextValue = { reader: options.reader, latest: options.reader.latest(), reads: [] };
    return execute({
      schema: options.schema,
      rootValue: options.rootValue,
      document,
      contextValue,
      variableValues: variables,
      operationName: typeof request.operationName === 'string' ? request.operationName : undefined,
    });
  });
  if (result instanceof Promise) throw new Error('query execution unexpectedly went asynchronous');
  const { reads, latest } = contextValue!;
  if (!result.errors) return options.subgraphErrors ? applyErrorPolicy(result, reads, latest) : result;
  return {
    ...result,
    errors: result.errors.map((error) => {
      const original = error.originalError;
      if (!original || original instanceof QueryError || original instanceof GraphQLError) return error;
      console.error('indexer query failed:', original);
      return new GraphQLError('Internal error while resolving the query', {
        nodes: error.nodes,
        path: error.path,
      });
    }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function createQueryServer(options: QueryServerOptions): Server {
  const subgraph: ExecutableApi = { schema: options.schema, subgraphErrors: true };
  const apis = new Map<string, ExecutableApi>([
    [`/subgraphs/name/${options.subgraphName}`, subgraph],
    [`/subgraphs/id/${options.reader.deployment}`, subgraph],
    ['/graphql', options.indexNode],
  ]);
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const api = apis.get(url.pathname.replace(/\/$/, ''));
    if (!api) {
      send(res, 404, { errors: [{ message: `no subgraph is served at ${url.pathname}` }] });
      return;
    }
    const respond = (request: GraphQLRequest) => {
      try {
        send(res, 200, executeQuery({ ...api, reader: options.reader }, request));
      } catch (e) {
        console.error('indexer query failed:', e);
        send(res, 500, { errors: [{ message: 'Internal error while executing the query' }] });
      }
    };
    if (req.method === 'GET') {
      const variables = url.searchParams.get('variables');
      let parsed: unknown;
      try {
        parsed = variables ? JSON.parse(variables) : undefined;
      } catch {
        send(res, 400, { errors: [{ message: 'variables is not valid JSON' }] });
        return;
      }
      respond({
        query: url.searchParams.get('query') ?? undefined,
        variables: parsed,
        operationName: url.searchParams.get('operationName') ?? undefined,
      });
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST' }).end();
      return;
    }
    readBody(req).then(
      (text) => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          send(res, 400, { errors: [{ message: 'request body is not valid JSON' }] });
          return;
        }
        respond((body ?? {}) as GraphQLRequest);
      },
      () => send(res, 413, { errors: [{ message: 'request body too large' }] }),
    );
  });
}

/** Listens on `port` (0: OS-assigned) and resolves with the bound URL base. */
export function listen(server: Server, port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      resolve(`http://${host}:${address.port}`);
    });
  });
}
