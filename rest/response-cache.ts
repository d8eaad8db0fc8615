// The server-side response cache: a 200 body with its ETag is kept for its tier's
// lifetime, or until the subgraph indexes a newer block than the body reflects, so repeated
// requests and If-None-Match revalidations are answered before any query runs. Entries are bounded in number and their bodies in total bytes (oldest evicted
// first): the key space is open-ended (NAV history `from` x `limit` alone has billions of keys,
// bodies up to hundreds of KiB), so a count alone would let traffic pin gigabytes.
import { createHash } from 'node:crypto';

export interface CachedResponse {
  body: Buffer;
  etag: string;
  /** freshness and other headers computed when the body was built */
  headers: Record<string, string>;
  storedAt: number;
  maxAgeSeconds: number;
  /** the indexed block the body reflects; null when it reads no indexed data */
  indexedBlock: number | null;
}

/** How often, at most, a cache hit asks the subgraph whether it has indexed a newer block. */
export const DEFAULT_INDEXED_BLOCK_CHECK_MS = 2000;

/**
 * The subgraph's latest indexed block, read at most once per `intervalMs` however many requests
 * ask (they share the read in flight). A cached body built at an older block is stale: the chain
 * has moved on (a claim, a new NAV), and serving it for the rest of its tier's lifetime would hide
 * that from a client that does not cache, as most agents do not. A failed read is null: the
 * cached body then stands, within its lifetime.
 */
export class IndexedBlockWatch {
  private latestRead: Promise<number | null> | null = null;
  private readAt = 0;

  constructor(
    private readonly read: () => Promise<number>,
    private readonly intervalMs: number,
  ) {}

  latest(now: number): Promise<number | null> {
    if (this.latestRead === null || now - this.readAt >= this.intervalMs) {
      this.readAt = now;
      this.latestRead = this.read().catch(() => null);
    }
    return this.latestRead;
  }

  /** whether `entry` reflects an older block than the latest indexed one */
  async outdates(entry: CachedResponse, now: number): Promise<boolean> {
    if (entry.indexedBlock === null) return false;
    const latest = await this.latest(now);
    return latest !== null && latest > entry.indexedBlock;
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
