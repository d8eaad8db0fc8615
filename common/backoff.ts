// How long the project waits before trying again after failures in a row: a first wait, doubled after
// each further failure up to a bound. The indexer backs off so (a range run again, an RPC request
// retried, a follower restarted after a store failure, an IPFS file fetched again), and so does the
// service's Redis connection; each used to carry its own copy of the formula. It lives in common/
// because the service and the indexer are separate processes, neither of which may import the other
// (see common/env.ts). None of them adds jitter: each is one client waiting on one server it needs.
// It imports nothing.

/** The first wait and the longest one. */
export interface Backoff {
  minMs: number;
  maxMs: number;
}

/**
 * The wait before the next try after `attempt + 1` failures in a row (attempt 0: the first
 * failure): `minMs` doubled `attempt` times, at most `maxMs`.
 */
export function backoffMs(attempt: number, { minMs, maxMs }: Backoff): number {
  // 2 ** 1024 is Infinity, and a first wait of 0 times that NaN; any bound is reached long before 2 ** 64
  return Math.min(minMs * 2 ** Math.min(attempt, 64), maxMs);
}
