// /graphql's cache of parsed documents (PARSE_CACHE_LIMITS in gateway/server.ts) holds what a client
// chooses, so it is bounded in entries and in estimated bytes, never holds a long document, a parse
// error or a document that failed validation, and lets the least recently used go first. The
// documents are sent to Yoga in-process and answered from the registry alone; what the cache holds
// is read from Gateway.parseCache(), not from the process's memory.
import { describe, expect, it } from 'vitest';
import { PARSE_CACHE_LIMITS, ParseCache, type Gateway } from '../../gateway/server.ts';
import { registryOnlyGateway } from '../harness/stack.ts';

async function send(gateway: Gateway, query: string): Promise<number> {
  const response = await gateway.yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe("/graphql's parse cache", () => {
  it('holds none of many unique documents of 60,000 characters, valid or not', async () => {
    const gateway = registryOnlyGateway();
    for (let n = 0; n < 300; n++) {
      const slug = `${'a'.repeat(60_000)}-${n}`;
      expect(await send(gateway, `{ fund(slug: "${slug}") { name } }`)).toBe(200); // NOT_FOUND beside null
      expect(await send(gateway, `{ fund(slug: "${slug}") { name } } }`)).toBe(400); // a syntax error
    }
    expect(gateway.parseCache()).toEqual({ entries: 0, bytes: 0 });
  });

  it('holds at most its number of entries of unique short documents', async () => {
    const gateway = registryOnlyGateway();
    const sent = PARSE_CACHE_LIMITS.entries + 100;
    for (let n = 0; n < sent; n++) expect(await send(gateway, `{ c${n}: contracts { name } }`)).toBe(200);
    expect(gateway.parseCache().entries).toBe(PARSE_CACHE_LIMITS.entries);
    expect(gateway.parseCache().bytes).toBeLessThanOrEqual(PARSE_CACHE_LIMITS.bytes);
  });

  it('holds at most its bytes of unique documents just under its length limit and dense in tokens', async () => {
    const gateway = registryOnlyGateway();
    // ~780 tokens in ~3,900 characters: ~0.4 MB estimated each, so fewer fit than the entry limit
    const dense = (n: number) => `{ c${n}: contracts { ${'name '.repeat(780)}} }`;
    expect(dense(29).length).toBeLessThanOrEqual(PARSE_CACHE_LIMITS.maxDocumentChars);
    for (let n = 0; n < 30; n++) expect(await send(gateway, dense(n))).toBe(200);
    const { entries, bytes } = gateway.parseCache();
    expect(bytes).toBeLessThanOrEqual(PARSE_CACHE_LIMITS.bytes);
    expect(bytes).toBeGreaterThan(PARSE_CACHE_LIMITS.bytes / 2);
    expect(entries).toBeLessThan(30);
  });

  it('holds no document that failed validation: an unknown field, an armor limit, the list-item budget', async () => {
    const gateway = registryOnlyGateway();
    const aliases = (n: number) =>
      Array.from({ length: 16 }, (_, i) => `c${n}x${i}: contracts { name }`).join(' ');
    const histories = (n: number) =>
      `{ c${n}: funds { navHistory(limit: 500) { epoch } } x: funds { navHistory(limit: 500) { epoch } } }`;
    for (let n = 0; n < 50; n++) {
      expect(await send(gateway, `{ c${n}: contracts { name nope } }`)).toBe(400);
      expect(await send(gateway, `{ ${aliases(n)} }`)).toBe(400);
      expect(await send(gateway, histories(n))).toBe(400);
    }
    expect(gateway.parseCache()).toEqual({ entries: 0, bytes: 0 });
  });

  it('holds a document sent again once', async () => {
    const gateway = registryOnlyGateway();
    for (let n = 0; n < 3; n++) expect(await send(gateway, '{ contracts { name } }')).toBe(200);
    expect(gateway.parseCache().entries).toBe(1);
  });
});

describe('ParseCache', () => {
  const limits = { entries: 3, bytes: 1000, maxDocumentChars: 100 };

  it('evicts the least recently used document first when its entries are full', () => {
    const cache = new ParseCache<string>(limits, () => 0);
    for (const key of ['a', 'b', 'c']) cache.set(key, key);
    cache.get('a');
    cache.set('d', 'd');
    expect(['a', 'b', 'c', 'd'].map((key) => cache.get(key))).toEqual(['a', undefined, 'c', 'd']);
  });

  it('evicts the least recently used documents until their estimated bytes fit', () => {
    const cache = new ParseCache<number>(limits, (weight) => weight);
    cache.set('a', 400); // 2 + 400 bytes
    cache.set('b', 400);
    cache.set('c', 400);
    expect(cache.stats).toEqual({ entries: 2, bytes: 804 });
    expect(cache.get('a')).toBeUndefined();
  });

  it('never holds a document longer than its length limit, nor one heavier than all its bytes', () => {
    const cache = new ParseCache<number>(limits, (weight) => weight);
    cache.set('x'.repeat(101), 0);
    cache.set('y', 999);
    expect(cache.stats).toEqual({ entries: 0, bytes: 0 });
  });

  it('forgets what it held when told, and counts it no more', () => {
    const cache = new ParseCache<number>(limits, (weight) => weight);
    cache.set('a', 10);
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.stats).toEqual({ entries: 0, bytes: 0 });
  });
});
