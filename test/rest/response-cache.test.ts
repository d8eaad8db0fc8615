// The server response cache's bounds: the key space is open-ended, so both the number of
// entries and the bytes of their bodies must stay under their limits whatever is stored. And its
// freshness: a body built at an older indexed block than the latest is not served.
import { describe, expect, it } from 'vitest';
import { etagOf, IndexedBlockWatch, ResponseCache, type CachedResponse } from '../../rest/response-cache.ts';

function entry(body: Buffer): CachedResponse {
  return { body, etag: etagOf(body), headers: {}, storedAt: 0, maxAgeSeconds: 300, indexedBlock: null };
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

describe('IndexedBlockWatch', () => {
  const built = (indexedBlock: number | null): CachedResponse => ({
    ...entry(Buffer.from('{}')),
    indexedBlock,
  });

  it('outdates a body built at an older block than the latest indexed one, and no other', async () => {
    const watch = new IndexedBlockWatch(async () => 12, 2000);
    expect(await watch.outdates(built(11), 0)).toBe(true);
    expect(await watch.outdates(built(12), 0)).toBe(false);
    expect(await watch.outdates(built(null), 0)).toBe(false);
  });

  it('asks the subgraph at most once per interval, however many hits want the block', async () => {
    let reads = 0;
    const watch = new IndexedBlockWatch(async () => ++reads, 2000);
    await Promise.all([watch.latest(0), watch.latest(500), watch.latest(1999)]);
    expect(reads).toBe(1);
    expect(await watch.latest(2000)).toBe(2);
  });

  it('keeps a cached body when the subgraph cannot say its block', async () => {
    const watch = new IndexedBlockWatch(async () => {
      throw new Error('subgraph down');
    }, 2000);
    expect(await watch.latest(0)).toBeNull();
    expect(await watch.outdates(built(11), 0)).toBe(false);
  });
});
