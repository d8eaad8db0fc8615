// Builds the gateway: its sources, the Yoga server for /graphql (armored, masked errors,
// no batching, CORS left to Express, no GraphiQL so no CDN), and an in-process executor
// that compiles a document once (graphql-jit) for the REST layer.
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import {
  GraphQLError,
  parse,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import {
  createContext,
  DEFAULT_HEALTH_MAX_LAG_BLOCKS,
  type GatewayContext,
  type GatewaySources,
} from './context.ts';
import { classifyGraphQLError } from './errors.ts';
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
  armor?: ArmorLimits;
  graphqlEndpoint?: string;
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

/** An error Yoga reports that is the client's mistake, not the service's. */
function isClientMistake(reported: unknown): boolean {
  return reported instanceof GraphQLError && classifyGraphQLError(reported).code === 'BAD_INPUT';
}

export function createGateway(config: GatewayConfig): Gateway {
  const sources: GatewaySources = {
    registry: indexRegistry(config.registry),
    subgraph: createSubgraphClient(config.subgraph),
    chain: config.chain ? createChainSource(config.chain) : undefined,
    distributions: createDistributionSource(config.distributions),
    apiVersion: API_VERSION,
    healthMaxLagBlocks: config.healthMaxLagBlocks ?? DEFAULT_HEALTH_MAX_LAG_BLOCKS,
  };
  const limits = config.armor ?? DEFAULT_ARMOR_LIMITS;
  const logError = config.logError ?? ((error: unknown) => console.error('[gateway]', error));

  const yoga = createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    graphqlEndpoint: config.graphqlEndpoint ?? '/graphql',
    context: () => createContext(sources),
    batching: false,
    // Yoga's own log lines go where the gateway's errors go (tests silence both), except its reports
    // of the client's mistakes, answered BAD_INPUT: bad traffic must not fill the error log
    logging: {
      debug: () => {},
      info: () => {},
      warn: (...args: unknown[]) => logError(args),
      error: (...args: unknown[]) => {
        if (!args.every(isClientMistake)) logError(args);
      },
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
        maxDepth: { n: limits.maxDepth, ignoreIntrospection: false },
        costLimit: {
          maxCost: limits.maxCost,
          depthCostFactor: limits.depthCostFactor,
          ignoreIntrospection: false,
        },
        maxAliases: { n: limits.maxAliases },
        maxTokens: { n: limits.maxTokens },
        blockFieldSuggestion: { enabled: true },
      }),
      useRequestErrors(schema),
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
