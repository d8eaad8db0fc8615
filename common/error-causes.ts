// What failed, from a chain of causes: fetch throws a bare "fetch failed" whose cause is the
// socket's error (connect ECONNREFUSED 127.0.0.1:8000, getaddrinfo ENOTFOUND …), and a client such
// as viem wraps that again, so the innermost error is the one that says what to fix. The service's
// upstream sources and start-up checks and the subgraph's deploy script each name such a failure in
// one line; each used to unwrap the chain itself, to one level or to the end. It lives in common/
// because the service and the subgraph's scripts both use it. It imports nothing.

/**
 * The last Error of `error`'s chain of causes: `error` itself when its cause is no Error. A chain
 * that comes back to an error already walked (any code may set `cause`) ends at the last new one,
 * so a start-up check naming a failure cannot hang on it.
 */
export function innermostCause(error: unknown): unknown {
  const walked = new Set<unknown>([error]);
  let current = error;
  while (current instanceof Error && current.cause instanceof Error && !walked.has(current.cause)) {
    current = current.cause;
    walked.add(current);
  }
  return current;
}

/** The message of `error`'s innermost cause (a thrown value that is no Error, as a string). */
export function innermostMessage(error: unknown): string {
  const cause = innermostCause(error);
  return cause instanceof Error ? cause.message : String(cause);
}
