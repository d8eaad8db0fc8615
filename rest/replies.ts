// How every part of the REST app answers a request: the base URL its links and documents name,
// the base of its problem types, a refusal or a failure as a problem+json, and what the log keeps
// of a failure (the gateway's FailureLog, which names the route). createRestApp
// (rest/app.ts) builds these once from its configuration and hands them to each part it
// assembles (guards, route handlers, documents, final handlers), so the parts share one wording.
import type { TLSSocket } from 'node:tls';
import type { Request, Response } from 'express';
import { classifyError, type GatewayError } from '../gateway/errors.ts';
import type { FailureLog } from '../gateway/failure-log.ts';
import { KIND_OF_CODE, problemBody, sendProblem, type ProblemKindName } from './problems.ts';

export interface Replies {
  /** the public base URL: the configured one, else the request's protocolOf and Host */
  baseOf: (req: Request) => string;
  /** the base of problem `type` URIs: problemBaseFor the configured one and baseOf(req) */
  problemBaseOf: (req: Request) => string;
  /** answers with a problem of `kind` about the request's path */
  problem: (req: Request, res: Response, kind: ProblemKindName, detail: string, parameter?: string) => void;
  /**
   * answers a failure with the problem its error code calls for (an internal error's own message is
   * never shown), after telling logFailure of it
   */
  errorProblem: (req: Request, res: Response, error: unknown) => void;
  /** tells the log of a failure of the request's (FailureLog.failed: an outage once, a bug each time) */
  logFailure: (req: Request, error: unknown) => void;
}

/** the request's route as the log names it: its method and path pattern (the path without a route) */
function routeOf(req: Request): string {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  return `${req.method} ${typeof route === 'string' ? route : req.path}`;
}

/**
 * The base of problem `type` URIs: the configured one, else the problem pages under the public base
 * URL (undefined when neither is known: Node's refusals come before any request names a host).
 */
export function problemBaseFor<PublicBase extends string | undefined>(
  problemBase: string | undefined,
  publicBase: PublicBase,
): string | PublicBase {
  return problemBase ?? (publicBase === undefined ? publicBase : `${publicBase}/problems`);
}

/**
 * The protocol the client reached the service with, which names it in every absolute URL the
 * service writes: the connection's own, or behind a proxy TRUST_PROXY trusts, what the outermost
 * trusted proxy wrote in X-Forwarded-Proto, and only http or https (in any case). Anything else
 * (Express passed the header's first item on as it came) would put a client's text into Link
 * headers and documents that caches keep for an hour. A proxy that appends its item to the header
 * leaves the client's in front of it, where Express reads: the item read here is the one as many
 * places from the end as the request passed trusted proxies (Express's req.ips, which TRUST_PROXY
 * bounds as it does for X-Forwarded-For), the header's only item behind proxies that overwrite it.
 */
export function protocolOf(req: Request): 'http' | 'https' {
  const own = (req.socket as TLSSocket).encrypted ? 'https' : 'http';
  const forwarded = req.get('X-Forwarded-Proto');
  const trust = req.app.get('trust proxy fn') as (address: string | undefined, hop: number) => boolean;
  if (forwarded === undefined || !trust(req.socket.remoteAddress, 0)) return own;
  const items = forwarded.split(',');
  // the socket's peer is a trusted proxy even when it sends no X-Forwarded-For
  const trustedProxies = Math.max(1, req.ips.length);
  const item = items[Math.max(0, items.length - trustedProxies)]!.trim().toLowerCase();
  return item === 'http' || item === 'https' ? item : own;
}

export function createReplies(
  config: { publicBaseUrl?: string; problemBase?: string },
  failures: FailureLog,
  logError: (line: string) => void,
): Replies {
  const baseOf = (req: Request) =>
    config.publicBaseUrl ?? `${protocolOf(req)}://${req.get('host') ?? 'localhost'}`;
  const problemBaseOf = (req: Request) => problemBaseFor(config.problemBase, baseOf(req));
  const problem = (req: Request, res: Response, kind: ProblemKindName, detail: string, parameter?: string) =>
    sendProblem(res, problemBody(problemBaseOf(req), kind, detail, req.path, parameter));
  const logFailure = (req: Request, error: unknown, classified: GatewayError = classifyError(error)) =>
    failures.failed(routeOf(req), classified, error, logError);
  const errorProblem = (req: Request, res: Response, error: unknown) => {
    const classified = classifyError(error);
    logFailure(req, error, classified);
    const kind = KIND_OF_CODE[classified.code];
    const detail =
      kind === 'internal-error' ? 'The service failed while answering; retry later.' : classified.message;
    const body = problemBody(problemBaseOf(req), kind, detail, req.path, classified.argument);
    // a refusal that lasts until the operator mends the upstream names no time to retry at
    sendProblem(res, body, classified.lasting ? false : (classified.retryAfterSeconds ?? true));
  };
  return { baseOf, problemBaseOf, problem, errorProblem, logFailure };
}
