// Fetches the files of file data sources in the background, as graph-node's polling monitor does
// (core/src/polling_monitor): a bounded number of requests at once, the rest queued in the order
// they were wanted, and a file that cannot be had yet (timeout, server error, too large) tried
// again after an exponential backoff, forever, since IPFS content may appear at any time.
import { backoffMs, type Backoff } from '../../common/backoff.ts';
import type { IpfsClient } from './ipfs-client.ts';

export interface FileFetcherOptions {
  client: Pick<IpfsClient, 'cat'>;
  /** cat() calls in flight at most (default 10) */
  concurrency?: number;
  /** wait before the first retry of a path; doubles with each failure (default 5 s, graph-node's) */
  minRetryMs?: number;
  /** longest wait between tries (default DEFAULT_FILE_MAX_RETRY_MS) */
  maxRetryMs?: number;
  log?: (line: string) => void;
}

/** First and shortest wait before a file that failed is tried again, unless configured otherwise. */
const DEFAULT_FILE_MIN_RETRY_MS = 5_000;

/**
 * Longest wait between tries of a file unless INDEXER_FILE_MAX_RETRY_MS says otherwise (600 s,
 * graph-node's GRAPH_FDS_MAX_BACKOFF).
 */
export const DEFAULT_FILE_MAX_RETRY_MS = 600_000;

interface Fetch {
  failures: number;
  controller?: AbortController;
  timer?: NodeJS.Timeout;
}

export class FileFetcher {
  private readonly client: Pick<IpfsClient, 'cat'>;
  private readonly concurrency: number;
  /** the waits before a path is tried again, after each failure in a row */
  private readonly retryBackoff: Backoff;
  private readonly log: (line: string) => void;
  private readonly fetched = new Map<string, Uint8Array>();
  private readonly fetches = new Map<string, Fetch>();
  // a Set keeps insertion order: the queue, without duplicates
  private readonly queue = new Set<string>();
  private inFlight = 0;
  private closed = false;

  constructor(options: FileFetcherOptions) {
    this.client = options.client;
    this.concurrency = Math.max(1, options.concurrency ?? 10);
    const minMs = options.minRetryMs ?? DEFAULT_FILE_MIN_RETRY_MS;
    this.retryBackoff = { minMs, maxMs: Math.max(minMs, options.maxRetryMs ?? DEFAULT_FILE_MAX_RETRY_MS) };
    this.log = options.log ?? (() => {});
  }

  /** paths wanted and not yet fetched */
  get waiting(): number {
    return this.fetches.size;
  }

  want(path: string): void {
    if (this.closed || this.fetched.has(path) || this.fetches.has(path)) return;
    this.fetches.set(path, { failures: 0 });
    this.queue.add(path);
    this.pump();
  }

  content(path: string): Uint8Array | undefined {
    return this.fetched.get(path);
  }

  forget(path: string): void {
    this.fetched.delete(path);
    const fetch = this.fetches.get(path);
    if (!fetch) return;
    this.fetches.delete(path);
    this.queue.delete(path);
    clearTimeout(fetch.timer);
    // its slot frees when the aborted cat() settles
    fetch.controller?.abort();
  }

  close(): void {
    this.closed = true;
    this.queue.clear();
    for (const fetch of this.fetches.values()) {
      clearTimeout(fetch.timer);
      fetch.controller?.abort();
    }
    this.fetches.clear();
  }

  private pump(): void {
    while (!this.closed && this.inFlight < this.concurrency) {
      const next = this.queue.values().next();
      if (next.done) return;
      this.queue.delete(next.value);
      const fetch = this.fetches.get(next.value);
      if (fetch) this.start(next.value, fetch);
    }
  }

  private start(path: string, fetch: Fetch): void {
    const controller = new AbortController();
    fetch.controller = controller;
    this.inFlight++;
    // cat() may throw before it returns a promise; both ways end in settle()
    Promise.resolve()
      .then(() => this.client.cat(path, controller.signal))
      .then(
        (bytes) => this.settle(path, fetch, bytes, undefined),
        (error: unknown) => this.settle(path, fetch, undefined, error),
      );
  }

  private settle(path: string, fetch: Fetch, bytes: Uint8Array | undefined, error: unknown): void {
    this.inFlight--;
    fetch.controller = undefined;
    // forgotten (and maybe wanted again as a new fetch) or closed while the request ran
    if (this.closed || this.fetches.get(path) !== fetch) {
      this.pump();
      return;
    }
    if (bytes) {
      this.fetches.delete(path);
      this.fetched.set(path, bytes);
    } else {
      fetch.failures++;
      const wait = backoffMs(fetch.failures - 1, this.retryBackoff);
      const message = error instanceof Error ? error.message : String(error);
      this.log(`file ${path}: try ${fetch.failures} failed: ${message}; trying again in ${formatWait(wait)}`);
      fetch.timer = setTimeout(() => {
        fetch.timer = undefined;
        if (this.closed || this.fetches.get(path) !== fetch) return;
        // back of the queue, as graph-node's monitor puts a retried request
        this.queue.add(path);
        this.pump();
      }, wait);
      // a file that may never come must not keep the process alive
      fetch.timer.unref();
    }
    this.pump();
  }
}

function formatWait(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
