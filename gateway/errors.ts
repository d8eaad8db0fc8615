// The one error taxonomy of the service. Resolvers and sources throw GatewayError with a
// code; GraphQL clients see the code in `extensions.code`, and the REST layer maps the
// code (never the message) to a problem+json kind. Upstream messages stay in `cause`,
// which is logged and never serialised.
import { GraphQLError } from 'graphql';
import { answerTooLarge } from '../common/bounded-fetch.ts';

/**
 * PERSISTED_QUERY_NOT_SUPPORTED is the one code a protocol fixes: Apollo clients sending a persisted
 * query's hash in place of its text resend the text only on it (or on its message, which would say
 * nothing to anyone else); under BAD_INPUT every query of theirs failed.
 */
export const ERROR_CODES = [
  'NOT_FOUND',
  'BAD_INPUT',
  'UPSTREAM_UNAVAILABLE',
  'INTERNAL',
  'PERSISTED_QUERY_NOT_SUPPORTED',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;
  /** for BAD_INPUT: the argument or parameter at fault */
  readonly argument: string | undefined;
  /**
   * for UPSTREAM_UNAVAILABLE: which upstream, as the message names it: 'subgraph', 'chain RPC' or
   * 'dividend distribution' (gateway/server.ts upstreamsOf gives each one's setting)
   */
  readonly upstream: string | undefined;
  /**
   * for UPSTREAM_UNAVAILABLE: the upstream answered, but with something the service refuses until its
   * operator fixes it (a distribution file failing a check), so retrying gets the same answer
   */
  readonly lasting: boolean;
  /**
   * for UPSTREAM_UNAVAILABLE that is not lasting: the seconds a retry should wait, where the usual
   * few (rest/problems.ts UPSTREAM_RETRY_AFTER_SECONDS) would be too soon; undefined, those
   */
  readonly retryAfterSeconds: number | undefined;
  /** the HTTP status of a /graphql answer carrying it, for a request that cannot run at all */
  readonly httpStatus: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      argument?: string;
      upstream?: string;
      lasting?: boolean;
      retryAfterSeconds?: number;
      cause?: unknown;
      /** the error whose place in the document this one names (its locations and field path) */
      at?: GraphQLError;
      /** the HTTP status of a /graphql answer carrying this error; Yoga strips it from the body */
      httpStatus?: number;
    } = {},
  ) {
    const extensions: Record<string, unknown> = { code };
    if (options.argument !== undefined) extensions.argument = options.argument;
    if (options.upstream !== undefined) extensions.upstream = options.upstream;
    if (options.httpStatus !== undefined) extensions.http = { status: options.httpStatus };
    super(message, {
      nodes: options.at?.nodes,
      source: options.at?.source,
      positions: options.at?.positions,
      path: options.at?.path,
      extensions,
      originalError: options.cause instanceof Error ? options.cause : undefined,
    });
    this.name = 'GatewayError';
    this.code = code;
    this.argument = options.argument;
    this.upstream = options.upstream;
    this.lasting = options.lasting ?? false;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.httpStatus = options.httpStatus;
  }

  /** This error where `located` happened: a resolver's error as graphql-js placed it in the document. */
  placedAt(located: GraphQLError): GatewayError {
    return new GatewayError(this.code, this.message, {
      argument: this.argument,
      upstream: this.upstream,
      lasting: this.lasting,
      retryAfterSeconds: this.retryAfterSeconds,
      cause: this.originalError,
      at: located,
      httpStatus: this.httpStatus,
    });
  }
}

export function notFound(message: string): GatewayError {
  return new GatewayError('NOT_FOUND', message);
}

export function badInput(argument: string, message: string): GatewayError {
  return new GatewayError('BAD_INPUT', message, { argument });
}

/**
 * The message names the upstream, and `reason` when given: the service's own words about what
 * failed, never the upstream's, which stay in `cause`. Without one, an answer too large to read
 * (common/bounded-fetch.ts) in `cause` gives its own.
 */
export function upstreamUnavailable(
  upstream: string,
  cause?: unknown,
  reason = answerTooLarge(cause)?.reason,
): GatewayError {
  const what = reason === undefined ? '' : `: ${reason}`;
  return new GatewayError('UPSTREAM_UNAVAILABLE', `The ${upstream} is unavailable${what}; retry later.`, {
    upstream,
    cause,
  });
}

/**
 * An upstream that answered with something the service refuses, a fault that lasts until the
 * service's operator fixes it: still UPSTREAM_UNAVAILABLE (the answer depends on that upstream),
 * but its message says why, in the service's own words, and that retrying will not help.
 */
export function upstreamRefused(upstream: string, reason: string, cause?: unknown): GatewayError {
  return new GatewayError(
    'UPSTREAM_UNAVAILABLE',
    `The ${upstream} is refused: ${reason}. This lasts until the service's operator fixes it; retrying will not help.`,
    { upstream, lasting: true, cause },
  );
}

/**
 * A request to /graphql that cannot run because of the client's own mistake (a body that is not
 * JSON, a syntax or validation error, an unknown operation name, a variable of the wrong type):
 * BAD_INPUT with HTTP 400, as /v1 answers bad input. Yoga's own statuses would be 200 for some
 * of these and 400 for others, depending on what the client accepts.
 */
export function badRequest(message: string, at?: GraphQLError): GatewayError {
  return new GatewayError('BAD_INPUT', message, { at, httpStatus: 400 });
}

/** A request naming a persisted query instead of sending its text (see ERROR_CODES): HTTP 400. */
export function persistedQueryNotSupported(message: string): GatewayError {
  return new GatewayError('PERSISTED_QUERY_NOT_SUPPORTED', message, { httpStatus: 400 });
}

export function internalError(cause?: unknown): GatewayError {
  return new GatewayError('INTERNAL', 'Internal error.', { cause });
}

/**
 * What the server logs of an error answered as `classified`: the failure itself when it is ours
 * (INTERNAL), the upstream's words when an upstream failed (they never reach the client), nothing
 * for a client's mistake or a missing resource.
 */
export function loggedCause(classified: GatewayError, error: unknown): unknown {
  if (classified.code === 'INTERNAL') return error;
  if (classified.code === 'UPSTREAM_UNAVAILABLE') return classified.originalError ?? classified;
  return undefined;
}

/**
 * Finds the taxonomy error behind a GraphQL error. Executors wrap thrown errors in a
 * located GraphQLError whose `originalError` is ours; anything else is INTERNAL. The answer keeps
 * the field path and locations of the wrapper, so a client knows which field failed.
 */
export function classifyError(error: unknown): GatewayError {
  const found = taxonomyErrorBehind(error) ?? internalError(error);
  return error instanceof GraphQLError && error.path !== undefined && found.path === undefined
    ? found.placedAt(error)
    : found;
}

function taxonomyErrorBehind(error: unknown): GatewayError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof GatewayError) return current;
    if (!(current instanceof GraphQLError)) return undefined;
    current = current.originalError;
  }
  return undefined;
}

/**
 * classifyError for what Yoga reports on /graphql. graphql-js and Yoga raise the client's mistakes
 * before any resolver runs: as GraphQL errors outside any field (no path) with nothing but GraphQL
 * errors behind them (a resolver's or a bug's error would be another kind). Their message is
 * graphql-js's or Yoga's and names what to fix, so it is kept; their extensions are not (Yoga's
 * codes are not ours, and they may carry a parser's internal error).
 */
export function classifyGraphQLError(error: unknown): GatewayError {
  if (error instanceof GraphQLError && error.path === undefined && raisedByGraphQL(error)) {
    return badRequest(error.message, error);
  }
  return classifyError(error);
}

function raisedByGraphQL(error: GraphQLError): boolean {
  for (let current: Error | undefined = error; current; ) {
    if (!(current instanceof GraphQLError) || current instanceof GatewayError) return false;
    current = current.originalError;
  }
  return true;
}
