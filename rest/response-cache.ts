// The server-side response cache: a 200 body with its ETag is kept for its tier's lifetime, or
// until it is outdated (OutdatedBodies: a newer indexed block than it reflects or its block
// replaced, the subgraph's indexing errors come or gone, or a chain head past its live reads'), so
// repeated requests and If-None-Match revalidations are answered before any query runs. Entries
// are bounded in number and their bodies in total bytes (oldest evicted first): the key space is open-ended (NAV history `from` x `limit` alone has billions of keys,
// bodies up to hundreds of KiB), so a count alone would let traffic pin gigabytes.
import { createHash } from 'node:crypto';
import type { IndexedState } from '../gateway/sources/subgraph.ts';

/** What a body's data reflects, to know when it is outdated. */
export interface Basis {
  /**
   * the indexed block the body reflects (its timestamp gives the data's lag) and whether the
   * subgraph had indexing errors then; null when it reads no indexed data
   */
  indexed: (IndexedState & { timestamp: number | null }) | null;
  /** the chain head its live chain reads reflect at least; null when it reads nothing live */
  chainHead: number | null;
}

export interface CachedResponse {
  body: Buffer;
  etag: string;
  /** headers computed when the body was built */
  headers: Record<string, string>;
  storedAt: number;
  maxAgeSeconds: number;
  basis: Basis;
}

/** How often, at most, a cache hit asks whether a newer block is indexed or on chain. */
export const DEFAULT_BLOCK_CHECK_MS = 2000;

/** A watch's reading and when it was asked for. */
interface BlockReading<T> {
  value: T;
  askedAt: number;
}

/**
 * The latest value of a block read (the indexed block, the chain head), read at most once per
 * `intervalMs` however many requests ask: they share the read in flight. A failed read is null.
 * A body just built may show a newer value than the last read (`saw`), which is then taken at
 * once: the bodies built before it are outdated from the next request on, instead of answering
 * beside it for up to `intervalMs` (health at block N+1 while the NAV still says N).
 */
export class LatestBlockWatch<T> {
  private latestRead: Promise<BlockReading<T> | null> | null = null;
  private askedAt = 0;
  /** the latest value read or seen */
  private known: T | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly intervalMs: number,
    /** whether `a` is a later block than `b` */
    private readonly isLater: (a: T, b: T) => boolean,
  ) {}

  latest(now: number): Promise<BlockReading<T> | null> {
    if (this.latestRead === null || now - this.askedAt >= this.intervalMs) {
      const askedAt = now;
      this.askedAt = askedAt;
      this.latestRead = this.read().then(
        (value) => {
          this.known = value;
          return { value, askedAt };
        },
        () => null,
      );
    }
    return this.latestRead;
  }

  /** Takes `value`, seen in a body built at `now`, as the latest reading if it is later. */
  saw(value: T, now: number): void {
    if (this.known !== undefined && !this.isLater(value, this.known)) return;
    this.known = value;
    this.latestRead = Promise.resolve({ value, askedAt: now });
    this.askedAt = now;
  }
}

/**
 * Whether a cached body is outdated: the subgraph holds a newer indexed block than the body
 * reflects, or, asked after the body was built, another block at its height (a reorg); or its
 * indexing-errors flag changed since the body was built (health would say ok beside a degraded
 * subgraph); or the chain head is past the one its live reads reflect. Serving it for the rest of
 * its tier's lifetime would hide a claim, a new NAV or a reverted block from a client that does not
 * cache, as most agents do not. A lower block is no evidence of a reorg: it is a query node behind
 * the others (and the subgraph source refuses to read below the newest block seen, so the watch
 * cannot read one). When a watch cannot read, the cached body stands, within its lifetime.
 */
export class OutdatedBodies {
  constructor(
    private readonly indexed: LatestBlockWatch<IndexedState>,
    private readonly chainHead: LatestBlockWatch<number> | undefined,
  ) {}

  /** Lets the watches learn of a newer block from a body just built (see LatestBlockWatch.saw). */
  built(basis: Basis, now: number): void {
    if (basis.indexed !== null) {
      const { number, hash, hasIndexingErrors } = basis.indexed;
      this.indexed.saw({ number, hash, hasIndexingErrors }, now);
    }
    if (basis.chainHead !== null) this.chainHead?.saw(basis.chainHead, now);
  }

  async outdate(entry: CachedResponse, now: number): Promise<boolean> {
    const { indexed, chainHead } = entry.basis;
    if (indexed !== null) {
      const seen = await this.indexed.latest(now);
      if (seen !== null) {
        if (seen.value.number > indexed.number) return true;
        // a reading asked for before the body was built may predate it: only a later one tells a
        // reorg or a change of the errors flag
        const replaced = seen.value.number === indexed.number && seen.value.hash !== indexed.hash;
        const errorsChanged = seen.value.hasIndexingErrors !== indexed.hasIndexingErrors;
        if ((replaced || errorsChanged) && seen.askedAt >= entry.storedAt) return true;
      }
    }
    if (chainHead !== null && this.chainHead) {
      const seen = await this.chainHead.latest(now);
      if (seen !== null && seen.value > chainHead) return true;
    }
    return false;
  }
}

export function etagOf(body: Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 2 ** 20;

export class ResponseCache {
  private readonly entries = new Map<string, CachedResponse>();
  private bodyBytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBodyBytes: number,
  ) {}

  /** the entry while it is still within its lifetime */
  get(key: string, now: number): CachedResponse | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.storedAt >= entry.maxAgeSeconds * 1000) {
      this.delete(key);
      return undefined;
    }
    return entry;
  }

  /** stores the entry; a body that is a slice of Buffer's shared pool is replaced by its own copy */
  set(key: string, entry: CachedResponse): void {
    if (this.maxEntries <= 0 || entry.body.length > this.maxBodyBytes) return;
    // a small Buffer.from() body shares an 8 KiB pool slab: keeping it would pin the whole
    // slab, so the cache would hold far more than it counts
    if (entry.body.byteLength !== entry.body.buffer.byteLength) {
      const own = Buffer.allocUnsafeSlow(entry.body.length);
      entry.body.copy(own);
      entry.body = own;
    }
    this.delete(key);
    this.entries.set(key, entry);
    this.bodyBytes += entry.body.length;
    while (this.entries.size > this.maxEntries || this.bodyBytes > this.maxBodyBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.delete(oldest);
    }
  }

  /** entries held and the bytes of their bodies */
  get size(): { entries: number; bodyBytes: number } {
    return { entries: this.entries.size, bodyBytes: this.bodyBytes };
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bodyBytes -= entry.body.length;
  }
}

/** RFC 9110 If-None-Match: a list of entity tags, or `*`; weak comparison. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
}
