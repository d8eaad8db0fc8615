// Builds the gateway: its sources, the Yoga server for /graphql (armored, a budget of list items,
// a parse cache bounded in bytes, masked errors, no batching, CORS left to Express, no GraphiQL so
// no CDN), and an in-process executor that compiles a document once (graphql-jit) for the REST
// layer. The REST layer compiles only its route table's fixed documents, once each at start-up:
// no document text a client sends reaches it, so it keeps no cache of its own.
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import {
  execute,
  GraphQLError,
  parse,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type Token,
} from 'graphql';
import { createYoga, isAsyncIterable, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import {
  createContext,
  DEFAULT_HEALTH_MAX_LAG_BLOCKS,
  type GatewayContext,
  type GatewaySources,
} from './context.ts';
import { classifyGraphQLError } from './errors.ts';
import { FailureLog, graphqlPlace, type Upstreams } from './failure-log.ts';
import { useFreshnessHeaders } from './freshness-headers.ts';
import { listItemBudget, MAX_LIST_ITEMS } from './list-item-budget.ts';
import { useRequestErrors } from './request-errors.ts';
import { schema } from './schema.ts';
import { createChainSource, type ChainConfig } from './sources/chain.ts';
import { createDistributionSource, type DistributionsConfig } from './sources/distributions.ts';
import { createIndexingStatusSource } from './sources/indexing-status.ts';
import { indexRegistry, type Registry } from './sources/registry.ts';
import { createSubgraphClient, type SubgraphConfig } from './sources/subgraph.ts';

export const API_VERSION = '1.0.0';

interface ArmorLimits {
  maxDepth: number;
  maxCost: number;
  maxAliases: number;
  maxTokens: number;
  /** cost multiplier per nesting level */
  depthCostFactor: number;
}

/**
 * Introspection is counted, so the limits admit exactly the standard introspection query
 * (depth 21, cost 2985 with depth factor 1.2, 163 tokens) and reject anything heavier. The
 * schema has no cycles: no query over data fields gets near these bounds.
 */
export const DEFAULT_ARMOR_LIMITS: ArmorLimits = {
  maxDepth: 21,
  maxCost: 5000,
  depthCostFactor: 1.2,
  maxAliases: 15,
  maxTokens: 1000,
};

/**
 * What Yoga's parse cache may hold. Yoga's default keeps 1024 parsed documents and 1024 parse
 * errors keyed by the document text, which a client chooses: with 64 KiB bodies that was ~125 MB,
 * and a parsed document weighs far more than its text (measured: ~350 bytes per token for the route
 * table's documents and introspection, up to ~510 for a bare list of fields, so 1000 tokens in 4 KB
 * parse to ~0.5 MB). So the cache holds only documents of at most `maxDocumentChars` characters (the
 * standard introspection query, the longest legitimate document, has 2,046 with descriptions; the
 * route table's have at most 372) that passed validation, at most `entries` of them, and at most
 * `bytes`, estimated as 2 bytes per character and BYTES_PER_TOKEN per token; the least recently used
 * goes first. Longer documents are parsed on every request and dropped with it.
 *
 * Parse errors are not cached at all: an error keeps its stack's frames, and so the parser and every
 * token it read, until the stack is printed (measured: ~90 KB for an error after 1000 tokens), and
 * parsing a bad document again costs less than holding it.
 */
export const PARSE_CACHE_LIMITS = { entries: 256, bytes: 8 * 2 ** 20, maxDocumentChars: 4096 } as const;
/** the weight of a parsed token, with its AST nodes and location, rounded up from the measured 510 */
const BYTES_PER_TOKEN = 512;
/** what Yoga takes as its cache of parse errors: one that holds none */
const NO_ERROR_CACHE = { get: () => undefined, set: () => {} };

interface ParseCacheStats {
  entries: number;
  /** estimated bytes held: the documents' text and their ASTs */
  bytes: number;
}

/**
 * A least-recently-used cache keyed by document text, bounded in entries and in estimated bytes,
 * that never holds a document longer than `maxDocumentChars`. It has the get/set Yoga's
 * parserAndValidationCache takes.
 */
export class ParseCache<T> {
  private readonly held = new Map<string, { value: T; bytes: number }>();
  private heldBytes = 0;

  constructor(
    private readonly limits: { entries: number; bytes: number; maxDocumentChars: number },
    /** the estimated bytes of a value beside its key's text */
    private readonly weigh: (value: T) => number,
  ) {}

  get(key: string): T | undefined {
    if (key.length > this.limits.maxDocumentChars) return undefined;
    const entry = this.held.get(key);
    if (!entry) return undefined;
    this.held.delete(key); // re-inserted as the most recently used
    this.held.set(key, entry);
    return entry.value;
  }

  set(key: string, value: T): void {
    if (key.length > this.limits.maxDocumentChars) return;
    const bytes = 2 * key.length + this.weigh(value);
    if (bytes > this.limits.bytes) return;
    this.delete(key);
    this.held.set(key, { value, bytes });
    this.heldBytes += bytes;
    for (const oldest of this.held.keys()) {
      if (this.held.size <= this.limits.entries && this.heldBytes <= this.limits.bytes) break;
      this.delete(oldest);
    }
  }

  get stats(): ParseCacheStats {
    return { entries: this.held.size, bytes: this.heldBytes };
  }

  delete(key: string): void {
    const entry = this.held.get(key);
    if (!entry) return;
    this.held.delete(key);
    this.heldBytes -= entry.bytes;
  }
}

/** the tokens of a parsed document, counted along its location's token list */
function tokensOf(document: DocumentNode): number {
  let tokens = 0;
  for (let token: Token | null | undefined = document.loc?.startToken; token; token = token.next) tokens++;
  return tokens;
}

export interface GatewayConfig {
  registry: Registry;
  subgraph: SubgraphConfig;
  /** undefined when no RPC is configured */
  chain: ChainConfig | undefined;
  distributions: DistributionsConfig;
  /** the index-node status API health asks whether indexing has halted; undefined when there is none */
  indexingStatus?: { url: string; timeoutMs: number };
  /**
   * where the gateway's failures are logged, a line (a string) each: an upstream's outage when it
   * starts and ends, a bug every time (FailureLog); clients never see them
   */
  logError?: (error: unknown) => void;
  /** health turns `degraded` past this lag behind the chain head (default DEFAULT_HEALTH_MAX_LAG_BLOCKS) */
  healthMaxLagBlocks?: number;
}

interface CompiledOperation {
  /** runs the operation with a fresh per-request context; the context tells what the data reflects */
  run(variables: Record<string, unknown>): Promise<{ result: ExecutionResult; context: GatewayContext }>;
}

export interface Gateway {
  yoga: YogaServerInstance<Record<string, unknown>, GatewayContext>;
  schema: GraphQLSchema;
  sources: GatewaySources;
  /** parses, validates and compiles a document once; throws when it is invalid */
  compile(document: string | DocumentNode): CompiledOperation;
  /** what /graphql's cache of parsed documents holds now (bounded by PARSE_CACHE_LIMITS) */
  parseCache(): ParseCacheStats;
  /** the log of failed answers, /graphql's and the REST layer's: one outage of an upstream, one pair of lines */
  failures: FailureLog;
}

/**
 * armor words every limit as a "Syntax Error" although the document parsed; the client gets the
 * limit and what to do instead (armor's own error is dropped: it is never thrown after this). It
 * stays a bare GraphQL error, which the masking answers as BAD_INPUT and 400 like graphql-js's own.
 * armor states the cost it found as the float it computed (5970.982941065935): it is rounded up to a
 * whole number, which stays over the limit as the cost was.
 */
const refuseOverLimit = {
  onReject: [
    (_context: unknown, error: GraphQLError) => {
      const limit = error.message
        .replace(/^Syntax Error: /, '')
        .replace(/\d+\.\d+/g, (found) => String(Math.ceil(Number(found))));
      throw new GraphQLError(`${limit} Send it as several smaller queries.`);
    },
  ],
};

/** armor's limits on a document's shape, introspection included, each refused with refuseOverLimit's words */
function useArmor(limits: ArmorLimits): Plugin {
  return EnvelopArmorPlugin({
    maxDepth: { n: limits.maxDepth, ignoreIntrospection: false, ...refuseOverLimit },
    costLimit: {
      maxCost: limits.maxCost,
      depthCostFactor: limits.depthCostFactor,
      ignoreIntrospection: false,
      ...refuseOverLimit,
    },
    maxAliases: { n: limits.maxAliases, ...refuseOverLimit },
    maxTokens: { n: limits.maxTokens, ...refuseOverLimit },
    maxDirectives: refuseOverLimit,
    // introspection is open, so hiding "Did you mean" protects nothing and costs clients the hint
    blockFieldSuggestion: { enabled: false },
  });
}

/** the cap on the list items a document may ask for (list-item-budget.ts), over `registry`'s lists */
function useListItemBudget(registry: Registry): Plugin {
  const itemBudget = listItemBudget(registry, MAX_LIST_ITEMS);
  return { onValidate: ({ addValidationRule }) => addValidationRule(itemBudget) };
}

/** /graphql's parse cache: PARSE_CACHE_LIMITS, each document weighed by its tokens */
function createDocumentCache(): ParseCache<DocumentNode> {
  return new ParseCache<DocumentNode>(PARSE_CACHE_LIMITS, (document) =>
    // a document without locations (Yoga parses none so) cannot be weighed, and is not cached
    document.loc ? tokensOf(document) * BYTES_PER_TOKEN : Infinity,
  );
}

/**
 * Yoga keeps each cached document's validation verdict beside it, and the errors of an invalid one
 * weigh several times its AST (measured: ~350 KB for 120 unknown fields): a document that fails
 * validation (errors returned, or an armor limit thrown) leaves `documentCache`, so it is parsed and
 * validated again each time it is sent.
 */
function useValidDocumentsOnlyCache(documentCache: ParseCache<DocumentNode>): Plugin {
  return {
    onValidate({ params, validateFn, setValidationFn }) {
      const uncache = () => {
        const text = params.documentAST.loc?.source.body;
        if (text !== undefined) documentCache.delete(text);
      };
      setValidationFn((...args) => {
        try {
          const errors = validateFn(...args);
          if (errors.length > 0) uncache();
          return errors;
        } catch (error) {
          uncache();
          throw error;
        }
      });
    },
  };
}

/**
 * graphql-js's executor: Yoga's own (@graphql-tools/executor 1.5) puts a result's keys in the order
 * their resolvers finish, not in the order of the selection set as the GraphQL spec requires.
 */
const useGraphqlJsExecutor: Plugin = {
  onExecute: ({ setExecuteFn }) => setExecuteFn(execute),
};

/**
 * Yoga's warnings go where the gateway's errors go (tests silence both). Its error lines are
 * dropped: Yoga writes one for each error maskError changed, and maskError already logs the
 * service's own failures (with the upstream's cause) while the client's mistakes are not logged.
 */
function yogaLogging(logError: (error: unknown) => void) {
  return {
    debug: () => {},
    info: () => {},
    warn: (...args: unknown[]) => logError(args),
    error: () => {},
  };
}

/**
 * Every error an answer carries, classified (errors.ts): the client's own mistakes (syntax, armor
 * limits, variables) come back unmasked as BAD_INPUT; a bug is logged each time. An upstream's
 * failure is told by useFailureLog, which sees the whole answer, so that a request counts once
 * however many of its fields failed.
 */
function maskErrors(failures: FailureLog, logError: (error: unknown) => void) {
  return {
    maskError(error: unknown) {
      const classified = classifyGraphQLError(error);
      if (classified.code !== 'UPSTREAM_UNAVAILABLE')
        failures.failed(graphqlPlace(classified), classified, error, logError);
      return classified;
    },
  };
}

/** The upstreams as their errors name them (GatewayError.upstream), with the setting of each. */
function upstreamsOf(config: GatewayConfig): Upstreams {
  return {
    subgraph: { name: 'subgraph', setting: 'SUBGRAPH_URL', location: config.subgraph.url },
    chain: { name: 'chain RPC', setting: 'RPC_URL', location: config.chain?.rpcUrl },
    distributions: {
      name: 'dividend distribution',
      setting: 'DISTRIBUTIONS_BASE',
      location: config.distributions.base,
    },
    indexingStatus: {
      name: 'indexing status',
      setting: 'SUBGRAPH_STATUS_URL',
      location: config.indexingStatus?.url,
    },
  };
}

/** Tells `failures` of each /graphql answer (FailureLog.settled), its failures logged to `logError`. */
function useFailureLog(failures: FailureLog, logError: (error: unknown) => void): Plugin<GatewayContext> {
  return {
    onExecute: () => ({
      onExecuteDone({ args, result }) {
        if (!isAsyncIterable(result)) failures.settled(args.contextValue, result.errors ?? [], logError);
      },
    }),
  };
}

/**
 * what the gateway reads from, the indexing status's failures logged where its errors go, and a
 * distribution read again after it failed told to `failures` (the end of its upstream's outage)
 */
function createSources(
  config: GatewayConfig,
  logError: (error: unknown) => void,
  failures: FailureLog,
): GatewaySources {
  const chain = config.chain ? createChainSource(config.chain) : undefined;
  return {
    registry: indexRegistry(config.registry),
    // the chain tells the subgraph source when the newest block it served left the chain in a reorg
    subgraph: createSubgraphClient(config.subgraph, chain),
    chain,
    distributions: failures.distributionsAnswering(createDistributionSource(config.distributions)),
    indexingStatus:
      config.indexingStatus && createIndexingStatusSource({ ...config.indexingStatus, log: logError }),
    apiVersion: API_VERSION,
    healthMaxLagBlocks: config.healthMaxLagBlocks ?? DEFAULT_HEALTH_MAX_LAG_BLOCKS,
  };
}

/**
 * `document` parsed, validated and compiled (graphql-jit) once; each run gets a fresh context, and
 * tells `failures` which upstreams answered it
 */
function compileOperation(
  document: string | DocumentNode,
  sources: GatewaySources,
  failures: FailureLog,
): CompiledOperation {
  const ast = typeof document === 'string' ? parse(document) : document;
  const errors = validate(schema, ast);
  if (errors.length > 0) throw new Error(`invalid operation: ${errors.map((e) => e.message).join('; ')}`);
  const compiled = compileQuery(schema, ast);
  if (!isCompiledQuery(compiled)) {
    throw new Error(`cannot compile operation: ${(compiled.errors ?? []).map((e) => e.message).join('; ')}`);
  }
  return {
    async run(variables) {
      const context = createContext(sources);
      const result = (await compiled.query(undefined, context, variables)) as ExecutionResult;
      failures.settled(context, result.errors ?? []);
      return { result, context };
    },
  };
}

export function createGateway(config: GatewayConfig): Gateway {
  const logError = config.logError ?? ((error: unknown) => console.error('[gateway]', error));
  const failures = new FailureLog(upstreamsOf(config));
  const sources = createSources(config, logError, failures);
  const documentCache = createDocumentCache();

  const yoga = createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    context: () => createContext(sources),
    batching: false,
    multipart: false,
    logging: yogaLogging(logError),
    cors: false,
    // Yoga keeps each cached document's validation verdict in a WeakMap: they go with the document
    parserAndValidationCache: { documentCache, errorCache: NO_ERROR_CACHE },
    graphiql: false,
    landingPage: false,
    maskedErrors: maskErrors(failures, logError),
    plugins: [
      useArmor(DEFAULT_ARMOR_LIMITS),
      useListItemBudget(config.registry),
      useValidDocumentsOnlyCache(documentCache),
      useRequestErrors(schema),
      useGraphqlJsExecutor,
      useFreshnessHeaders(),
      useFailureLog(failures, logError),
    ],
  });

  return {
    yoga,
    schema,
    sources,
    compile: (document) => compileOperation(document, sources, failures),
    parseCache: () => documentCache.stats,
    failures,
  };
}
