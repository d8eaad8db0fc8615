// The server-side response cache: a 200 body with its ETag is kept for its tier's
// lifetime, so repeated requests and If-None-Match revalidations are answered before any
// query runs. Entries are bounded in number and their bodies in total bytes (oldest evicted
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
