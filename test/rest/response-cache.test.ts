// The server response cache's bounds: the key space is open-ended, so both the number of
// entries and the bytes of their bodies must stay under their limits whatever is stored.
import { describe, expect, it } from 'vitest';
import { etagOf, ResponseCache, type CachedResponse } from '../../rest/response-cache.ts';

function entry(body: Buffer): CachedResponse {
  return { body, etag: etagOf(body), headers: {}, storedAt: 0, maxAgeSeconds: 300 };
}

describe('ResponseCache', () => {
  it('evicts the oldest bodies once their bytes pass the budget', () => {
    const cache = new ResponseCache(1000, 10_000);
    for (let i = 0; i < 25; i++) cache.set(`k${i}`, entry(Buffer.alloc(1000, i)));
    expect(cache.size).toEqual({ entries: 10, bodyBytes: 10_000 });
    expect(cache.get('k14', 1)).toBeUndefined();
    expect(cache.get('k15', 1)?.body[0]).toBe(15);
    expect(cache.get('k24', 1)?.body[0]).toBe(24);
  });

  it('evicts the oldest entries once their number passes the limit', () => {
    const cache = new ResponseCache(3, 1_000_000);
    for (let i = 0; i < 5; i++) cache.set(`k${i}`, entry(Buffer.from(`body ${i}`)));
    expect(cache.size).toEqual({ entries: 3, bodyBytes: 18 });
    expect(cache.get('k1', 1)).toBeUndefined();
    expect(cache.get('k2', 1)?.body.toString()).toBe('body 2');
  });

  it('counts a replaced or expired entry only once', () => {
    const cache = new ResponseCache(10, 1_000_000);
    cache.set('k', entry(Buffer.alloc(100)));
    cache.set('k', entry(Buffer.alloc(40)));
    expect(cache.size).toEqual({ entries: 1, bodyBytes: 40 });
    expect(cache.get('k', 300_000)).toBeUndefined();
    expect(cache.size).toEqual({ entries: 0, bodyBytes: 0 });
  });

  it('keeps a body larger than the whole budget out', () => {
    const cache = new ResponseCache(10, 1000);
    cache.set('small', entry(Buffer.alloc(600)));
    cache.set('huge', entry(Buffer.alloc(1001)));
    expect(cache.get('huge', 1)).toBeUndefined();
    expect(cache.size).toEqual({ entries: 1, bodyBytes: 600 });
  });

  it('holds a small body in its own memory, not in a slab of the shared Buffer pool', () => {
    const cache = new ResponseCache(10, 1_000_000);
    const pooled = Buffer.from('{"status":"ok"}');
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
    cache.set('health', entry(pooled));
    const held = cache.get('health', 1)!.body;
    expect(held.toString()).toBe('{"status":"ok"}');
    expect(held.buffer.byteLength).toBe(held.length);
  });

  it('stores nothing when disabled', () => {
    const cache = new ResponseCache(0, 1_000_000);
    cache.set('k', entry(Buffer.alloc(10)));
    expect(cache.size).toEqual({ entries: 0, bodyBytes: 0 });
  });
});
