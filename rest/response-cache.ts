// The server-side response cache: a 200 body with its ETag is kept for its tier's
// lifetime, so repeated requests and If-None-Match revalidations are answered before any
// query runs. Entries are bounded in number (oldest evicted first).
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

export class ResponseCache {
  private readonly entries = new Map<string, CachedResponse>();

  constructor(private readonly maxEntries: number) {}

  /** the entry while it is still within its lifetime */
  get(key: string, now: number): CachedResponse | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.storedAt >= entry.maxAgeSeconds * 1000) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, entry: CachedResponse): void {
    if (this.maxEntries <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}

/** RFC 9110 If-None-Match: a list of entity tags, or `*`; weak comparison. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
}
