// The one error taxonomy of the service. Resolvers and sources throw GatewayError with a
// code; GraphQL clients see the code in `extensions.code`, and the REST layer maps the
// code (never the message) to a problem+json kind. Upstream messages stay in `cause`,
// which is logged and never serialised.
import { GraphQLError } from 'graphql';

export const ERROR_CODES = [
  'NOT_FOUND',
  'BAD_INPUT',
  'UPSTREAM_UNAVAILABLE',
  'DEPRECATED',
  'INTERNAL',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;
  /** for BAD_INPUT: the argument or parameter at fault */
  readonly argument: string | undefined;
  /** for UPSTREAM_UNAVAILABLE: which upstream (subgraph, chain, distributions) */
  readonly upstream: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { argument?: string; upstream?: string; cause?: unknown } = {},
  ) {
    const extensions: Record<string, unknown> = { code };
    if (options.argument !== undefined) extensions.argument = options.argument;
    if (options.upstream !== undefined) extensions.upstream = options.upstream;
    super(message, { extensions, originalError: options.cause instanceof Error ? options.cause : undefined });
    this.name = 'GatewayError';
    this.code = code;
    this.argument = options.argument;
    this.upstream = options.upstream;
  }
}

export function notFound(message: string): GatewayError {
  return new GatewayError('NOT_FOUND', message);
}

export function badInput(argument: string, message: string): GatewayError {
  return new GatewayError('BAD_INPUT', message, { argument });
}

/** The message names the upstream only; the upstream's own words stay in `cause`. */
export function upstreamUnavailable(upstream: string, cause?: unknown): GatewayError {
  return new GatewayError('UPSTREAM_UNAVAILABLE', `The ${upstream} is unavailable; retry later.`, {
    upstream,
    cause,
  });
}

export function internalError(cause?: unknown): GatewayError {
  return new GatewayError('INTERNAL', 'Internal error.', { cause });
}

/**
 * Finds the taxonomy error behind a GraphQL error. Executors wrap thrown errors in a
 * located GraphQLError whose `originalError` is ours; anything else is INTERNAL.
 */
export function classifyError(error: unknown): GatewayError {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof GatewayError) return current;
    if (current instanceof GraphQLError) {
      current = current.originalError;
      continue;
    }
    break;
  }
  return internalError(error);
}
