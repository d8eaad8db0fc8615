// Builds the gateway: its sources, the Yoga server for /graphql (armored, a budget of list items,
// masked errors, no batching, CORS left to Express, no GraphiQL so no CDN), and an in-process
// executor that compiles a document once (graphql-jit) for the REST layer.
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
} from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import {
  createContext,
  DEFAULT_HEALTH_MAX_LAG_BLOCKS,
  type GatewayContext,
  type GatewaySources,
} from './context.ts';
import { classifyGraphQLError } from './errors.ts';
import { useFreshnessHeaders } from './freshness-headers.ts';
import { listItemBudget, MAX_LIST_ITEMS } from './list-item-budget.ts';
import { useRequestErrors } from './request-errors.ts';
import { schema } from './schema.ts';
import { createChainSource, type ChainConfig } from './sources/chain.ts';
import { createDistributionSource, type DistributionsConfig } from './sources/distributions.ts';
import { indexRegistry, type Registry } from './sources/registry.ts';
import { createSubgraphClient, type SubgraphConfig } from './sources/subgraph.ts';

export const API_VERSION = '1.0.0';

export interface ArmorLimits {
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

export interface GatewayConfig {
  registry: Registry;
  subgraph: SubgraphConfig;
  /** undefined when no RPC is configured */
  chain: ChainConfig | undefined;
  distributions: DistributionsConfig;
  /** where internal errors are reported (masked for clients) */
  logError?: (error: unknown) => void;
  /** health turns `degraded` past this lag behind the chain head (default DEFAULT_HEALTH_MAX_LAG_BLOCKS) */
  healthMaxLagBlocks?: number;
}

export interface CompiledOperation {
  /** runs the operation with a fresh per-request context; the context tells what the data reflects */
  run(variables: Record<string, unknown>): Promise<{ result: ExecutionResult; context: GatewayContext }>;
}

export interface Gateway {
  yoga: YogaServerInstance<Record<string, unknown>, GatewayContext>;
  schema: GraphQLSchema;
  sources: GatewaySources;
  /** parses, validates and compiles a document once; throws when it is invalid */
  compile(document: string | DocumentNode): CompiledOperation;
}

/**
 * armor words every limit as a "Syntax Error" although the document parsed; the client gets the
 * limit and what to do instead (armor's own error is dropped: it is never thrown after this). It
 * stays a bare GraphQL error, which the masking answers as BAD_INPUT and 400 like graphql-js's own.
 */
const refuseOverLimit = {
  onReject: [
    (_context: unknown, error: GraphQLError) => {
      throw new GraphQLError(
        `${error.message.replace(/^Syntax Error: /, '')} Send it as several smaller queries.`,
      );
    },
  ],
};

/**
 * graphql-js's executor: Yoga's own (@graphql-tools/executor 1.5) puts a result's keys in the order
 * their resolvers finish, not in the order of the selection set as the GraphQL spec requires.
 */
const useGraphqlJsExecutor: Plugin = {
  onExecute: ({ setExecuteFn }) => setExecuteFn(execute),
};

export function createGateway(config: GatewayConfig): Gateway {
  const sources: GatewaySources = {
    registry: indexRegistry(config.registry),
    subgraph: createSubgraphClient(config.subgraph),
    chain: config.chain ? createChainSource(config.chain) : undefined,
    distributions: createDistributionSource(config.distributions),
    apiVersion: API_VERSION,
    healthMaxLagBlocks: config.healthMaxLagBlocks ?? DEFAULT_HEALTH_MAX_LAG_BLOCKS,
  };
  const limits = DEFAULT_ARMOR_LIMITS;
  const logError = config.logError ?? ((error: unknown) => console.error('[gateway]', error));
  const itemBudget = listItemBudget(config.registry, MAX_LIST_ITEMS);
  const useListItemBudget: Plugin = {
    onValidate: ({ addValidationRule }) => addValidationRule(itemBudget),
  };

  const yoga = createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    context: () => createContext(sources),
    batching: false,
    multipart: false,
    // Yoga's warnings go where the gateway's errors go (tests silence both). Its error lines are
    // dropped: Yoga writes one for each error maskError changed, and maskError already logs the
    // service's own failures (with the upstream's cause) while the client's mistakes are not logged
    logging: {
      debug: () => {},
      info: () => {},
      warn: (...args: unknown[]) => logError(args),
      error: () => {},
    },
    cors: false,
    graphiql: false,
    landingPage: false,
    maskedErrors: {
      maskError(error) {
        // the client's own mistakes (syntax, armor limits, variables) come back unmasked as BAD_INPUT
        const classified = classifyGraphQLError(error);
        if (classified.code === 'INTERNAL') logError(error);
        else if (classified.code === 'UPSTREAM_UNAVAILABLE') logError(classified.originalError ?? classified);
        return classified;
      },
    },
    plugins: [
      EnvelopArmorPlugin({
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
      }),
      useListItemBudget,
      useRequestErrors(schema),
      useGraphqlJsExecutor,
      useFreshnessHeaders(),
    ],
  });

  function compile(document: string | DocumentNode): CompiledOperation {
    const ast = typeof document === 'string' ? parse(document) : document;
    const errors = validate(schema, ast);
    if (errors.length > 0) throw new Error(`invalid operation: ${errors.map((e) => e.message).join('; ')}`);
    const compiled = compileQuery(schema, ast);
    if (!isCompiledQuery(compiled)) {
      throw new Error(
        `cannot compile operation: ${(compiled.errors ?? []).map((e) => e.message).join('; ')}`,
      );
    }
    return {
      async run(variables) {
        const context = createContext(sources);
        const result = (await compiled.query(undefined, context, variables)) as ExecutionResult;
        return { result, context };
      },
    };
  }

  return { yoga, schema, sources, compile };
}
