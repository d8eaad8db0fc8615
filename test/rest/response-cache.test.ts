// The server response cache's bounds: the key space is open-ended, so both the number of
// entries and the bytes of their bodies must stay under their limits whatever is stored. And its
// freshness: a body is not served once a newer block is indexed than the one it reflects, its
// block is replaced or taken away by a reorg, another deployment of the subgraph answers, the
// subgraph's indexing-errors flag changes, or the chain head is not the block its live reads were
// made at.
import { describe, expect, it } from 'vitest';
import {
  etagOf,
  LatestBlockWatch,
  OutdatedBodies,
  ResponseCache,
  type Basis,
  type CachedResponse,
  type IndexedReading,
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
  const at = (
    number: number,
    hash = `0x${number}`,
    hasIndexingErrors = false,
    deployment: string | null = 'QmOld',
  ) => ({ number, hash, hasIndexingErrors, deployment });
  const head = (number: number, hash = `0x${number}`) => ({ number, hash });
  const built = (basis: Partial<Basis>, storedAt = 0): CachedResponse => ({
    ...entry(Buffer.from('{}')),
    storedAt,
    basis: { indexed: null, chainHead: null, ...basis },
  });
  const indexedAt = (number: number, hash?: string, hasIndexingErrors?: boolean, deployment?: string) => ({
    ...at(number, hash, hasIndexingErrors, deployment),
    timestamp: 1,
  });
  /** checks asked for at `now`, with the subgraph at `indexed` and the chain at `chainHead` */
  const outdated = (entry: CachedResponse, indexed: IndexedReading, chainHead = head(0), now = 10) =>
    new OutdatedBodies(
      async () => indexed,
      async () => chainHead,
      2000,
    ).outdate(entry, now);

  it('outdates a body built at an older indexed block than the latest, and not one built at the latest', async () => {
    expect(await outdated(built({ indexed: indexedAt(11) }), at(12))).toBe(true);
    expect(await outdated(built({ indexed: indexedAt(12) }), at(12))).toBe(false);
  });

  it('outdates a body whose block a reorg replaced at the same height', async () => {
    expect(await outdated(built({ indexed: indexedAt(12, '0xold') }), at(12, '0xnew'))).toBe(true);
  });

  it('outdates a body built at a block higher than the subgraph now reads, which a reorg took away', async () => {
    expect(await outdated(built({ indexed: indexedAt(12) }), at(10))).toBe(true);
  });

  it('outdates a body of indexed data while the subgraph reverts a block the chain no longer holds', async () => {
    expect(await outdated(built({ indexed: indexedAt(12) }), 'reverting')).toBe(true);
  });

  it('keeps a body built after the reading it is compared with, which may be older than the body', async () => {
    // the readings were asked for at 10, the bodies stored at 11
    expect(await outdated(built({ indexed: indexedAt(13) }, 11), at(12), head(0), 10)).toBe(false);
    expect(await outdated(built({ indexed: indexedAt(13) }, 11), 'reverting', head(0), 10)).toBe(false);
    expect(await outdated(built({ chainHead: head(41) }, 11), at(12), head(40), 10)).toBe(false);
  });

  it('outdates the bodies built under another indexing-errors flag than a later reading shows, and not those built under it', async () => {
    let subgraph = at(12);
    const bodies = new OutdatedBodies(async () => subgraph, undefined, 2000);
    const before = built({ indexed: indexedAt(12) }, 5);
    expect(await bodies.outdate(before, 10)).toBe(false);
    subgraph = at(12, '0x12', true);
    expect(await bodies.outdate(before, 2010)).toBe(true);
    expect(await bodies.outdate(built({ indexed: indexedAt(12, '0x12', true) }, 2020), 2030)).toBe(false);
  });

  it('outdates a body built from another deployment than the subgraph now answers from, at the same block', async () => {
    expect(await outdated(built({ indexed: indexedAt(12) }), at(12, '0x12', false, 'QmNew'))).toBe(true);
  });

  it('keeps a body built from a new deployment after a reading of the one it replaced, which may predate it', async () => {
    // the reading was asked for at 10, the body stored at 11
    const body = built({ indexed: indexedAt(12, '0x12', false, 'QmNew') }, 11);
    expect(await outdated(body, at(12, '0x12', false, 'QmOld'), head(0), 10)).toBe(false);
  });

  it('keeps a body when the subgraph names no deployment', async () => {
    expect(await outdated(built({ indexed: indexedAt(12) }), at(12, '0x12', false, null))).toBe(false);
  });

  it('outdates a body of live chain reads once the chain head is past the block they were made at', async () => {
    expect(await outdated(built({ chainHead: head(40) }), at(12), head(41))).toBe(true);
    expect(await outdated(built({ chainHead: head(41) }), at(12), head(41))).toBe(false);
  });

  it('outdates a body of live chain reads whose block a reorg replaced at the same height', async () => {
    expect(await outdated(built({ chainHead: head(41, '0xold') }), at(12), head(41, '0xnew'))).toBe(true);
  });

  it('outdates a body of live chain reads once the chain head is below the block they were made at', async () => {
    expect(await outdated(built({ chainHead: head(41) }), at(12), head(39))).toBe(true);
  });

  it('never outdates a body that reads neither indexed data nor the chain', async () => {
    expect(await outdated(built({}), at(99), head(99))).toBe(false);
  });

  it('keeps a cached body when the subgraph cannot say its block', async () => {
    const bodies = new OutdatedBodies(
      async () => {
        throw new Error('subgraph down');
      },
      undefined,
      2000,
    );
    expect(await bodies.outdate(built({ indexed: indexedAt(11) }), 0)).toBe(false);
  });

  it('outdates a body of live chain reads when the chain head cannot be read', async () => {
    const bodies = new OutdatedBodies(
      async () => at(12),
      async () => {
        throw new Error('RPC down');
      },
      2000,
    );
    expect(await bodies.outdate(built({ chainHead: head(41) }), 10)).toBe(true);
    expect(await bodies.outdate(built({ indexed: indexedAt(12) }), 10)).toBe(false);
  });

  it('tells the chain head a body just built read, for its lag, until the next reading', async () => {
    const bodies = new OutdatedBodies(
      async () => at(12),
      async () => head(40),
      2000,
    );
    bodies.built(built({ indexed: indexedAt(12) }).basis, head(45), 5);
    expect(await bodies.chainHeadNow(6, false)).toBe(45);
    expect(await bodies.chainHeadNow(2005, false)).toBe(40);
  });

  it('tells no chain head while the node is failing, without waiting for it', async () => {
    let reads = 0;
    const bodies = new OutdatedBodies(
      async () => at(12),
      () => {
        reads += 1;
        return new Promise<never>(() => {});
      },
      2000,
    );
    expect(await bodies.chainHeadNow(0, true)).toBeUndefined();
    // a read is started all the same, so that a node answering again is seen
    expect(reads).toBe(1);
  });
});
