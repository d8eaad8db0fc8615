// The server response cache's bounds: the key space is open-ended, so both the number of
// entries and the bytes of their bodies must stay under their limits whatever is stored. And its
// freshness: a body is not served once a newer block is indexed than the one it reflects, its
// block is replaced, the subgraph's indexing-errors flag changes, or the chain is past the head its
// live reads reflect.
import { describe, expect, it } from 'vitest';
import type { IndexedState } from '../../gateway/sources/subgraph.ts';
import {
  etagOf,
  LatestBlockWatch,
  OutdatedBodies,
  ResponseCache,
  type Basis,
  type CachedResponse,
} from '../../rest/response-cache.ts';

function entry(body: Buffer): CachedResponse {
  return {
    body,
    etag: etagOf(body),
    headers: {},
    storedAt: 0,
    maxAgeSeconds: 300,
    basis: { indexed: null, chainHead: null },
  };
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

const laterHead = (a: number, b: number) => a > b;
const laterBlock = (a: { number: number }, b: { number: number }) => a.number > b.number;

describe('LatestBlockWatch', () => {
  it('reads at most once per interval, however many hits want the block', async () => {
    let reads = 0;
    const watch = new LatestBlockWatch(async () => ++reads, 2000, laterHead);
    await Promise.all([watch.latest(0), watch.latest(500), watch.latest(1999)]);
    expect(reads).toBe(1);
    expect(await watch.latest(2000)).toEqual({ value: 2, askedAt: 2000 });
  });

  it('takes a later block a body just built shows as the latest, without reading', async () => {
    let reads = 0;
    const watch = new LatestBlockWatch(async () => (++reads, 10), 2000, laterHead);
    expect(await watch.latest(0)).toEqual({ value: 10, askedAt: 0 });
    watch.saw(11, 5);
    expect(await watch.latest(6)).toEqual({ value: 11, askedAt: 5 });
    expect(reads).toBe(1);
  });

  it('keeps its reading when a body shows an earlier block', async () => {
    const watch = new LatestBlockWatch(async () => 10, 2000, laterHead);
    await watch.latest(0);
    watch.saw(9, 5);
    expect(await watch.latest(6)).toEqual({ value: 10, askedAt: 0 });
  });

  it('reads null when the source cannot say its block', async () => {
    const watch = new LatestBlockWatch(
      async () => {
        throw new Error('subgraph down');
      },
      2000,
      laterHead,
    );
    expect(await watch.latest(0)).toBeNull();
  });
});

describe('OutdatedBodies', () => {
  const at = (number: number, hash = `0x${number}`, hasIndexingErrors = false) => ({
    number,
    hash,
    hasIndexingErrors,
  });
  const built = (basis: Partial<Basis>, storedAt = 0): CachedResponse => ({
    ...entry(Buffer.from('{}')),
    storedAt,
    basis: { indexed: null, chainHead: null, ...basis },
  });
  const indexedAt = (number: number, hash?: string, hasIndexingErrors?: boolean) => ({
    ...at(number, hash, hasIndexingErrors),
    timestamp: 1,
  });
  /** checks asked for at `now`, with the subgraph at `indexed` and the chain at `head` */
  const outdated = (entry: CachedResponse, indexed: IndexedState, head = 0, now = 10) =>
    new OutdatedBodies(
      new LatestBlockWatch<IndexedState>(async () => indexed, 2000, laterBlock),
      new LatestBlockWatch(async () => head, 2000, laterHead),
    ).outdate(entry, now);

  it('outdates a body built at an older indexed block than the latest, and not one built at the latest', async () => {
    expect(await outdated(built({ indexed: indexedAt(11) }), at(12))).toBe(true);
    expect(await outdated(built({ indexed: indexedAt(12) }), at(12))).toBe(false);
  });

  it('outdates a body whose block a reorg replaced at the same height', async () => {
    expect(await outdated(built({ indexed: indexedAt(12, '0xold') }), at(12, '0xnew'))).toBe(true);
  });

  it('keeps a body built at a block higher than a reading, which is a query node behind, not a reorg', async () => {
    expect(await outdated(built({ indexed: indexedAt(12) }), at(10))).toBe(false);
  });

  it('keeps a body built after the reading it is compared with, which may be older than the body', async () => {
    // the reading was asked for at 10, the body stored at 11 from a newer block
    expect(await outdated(built({ indexed: indexedAt(13) }, 11), at(12), 0, 10)).toBe(false);
  });

  it('outdates the bodies built under another indexing-errors flag than a later reading shows, and not those built under it', async () => {
    let subgraph = at(12);
    const bodies = new OutdatedBodies(
      new LatestBlockWatch<IndexedState>(async () => subgraph, 2000, laterBlock),
      undefined,
    );
    const before = built({ indexed: indexedAt(12) }, 5);
    expect(await bodies.outdate(before, 10)).toBe(false);
    subgraph = at(12, '0x12', true);
    expect(await bodies.outdate(before, 2010)).toBe(true);
    expect(await bodies.outdate(built({ indexed: indexedAt(12, '0x12', true) }, 2020), 2030)).toBe(false);
  });

  it('outdates a body of live chain reads once the chain head is past the one they reflect', async () => {
    expect(await outdated(built({ chainHead: 40 }), at(12), 41)).toBe(true);
    expect(await outdated(built({ chainHead: 41 }), at(12), 41)).toBe(false);
  });

  it('never outdates a body that reads neither indexed data nor the chain', async () => {
    expect(await outdated(built({}), at(99), 99)).toBe(false);
  });

  it('keeps a cached body when the subgraph cannot say its block', async () => {
    const bodies = new OutdatedBodies(
      new LatestBlockWatch<IndexedState>(
        async () => {
          throw new Error('subgraph down');
        },
        2000,
        laterBlock,
      ),
      undefined,
    );
    expect(await bodies.outdate(built({ indexed: indexedAt(11) }), 0)).toBe(false);
  });
});
