// The server-side response cache: a 200 body with its ETag is kept for its tier's lifetime, or
// until it is outdated (OutdatedBodies: another indexed block than it reflects, newer, at its height,
// or lower because a reorg took its block away; another deployment of the subgraph answering, after
// a redeploy under the same name; the subgraph's indexing errors come or gone; or, for live reads, a
// chain head other than the block they were made at), so repeated requests and If-None-Match
// revalidations are answered before any query runs. Entries are bounded in number and their bodies
// in total bytes (oldest evicted first): the key space is open-ended (NAV history `from` x `limit`
// alone has billions of keys, bodies up to hundreds of KiB), so a count alone would let traffic pin
// gigabytes.
// Every time here (a body's storedAt, a watch's askedAt, the `now` callers pass) is performance.now(),
// the monotonic clock: the wall clock can step back (NTP, an operator, a VM resumed), and an age
// measured on it would freeze every cached body and watch reading for the length of the step.
import { createHash } from 'node:crypto';
import type { IndexedState } from '../gateway/sources/subgraph.ts';

/** A chain block a body's live reads were made at, or a reading of the chain head. */
export interface ChainHead {
  number: number;
  hash: string;
}

/**
 * The indexed block a body reflects (its timestamp gives the data's lag), the deployment that
 * answered (null: the subgraph named none) and whether the subgraph had indexing errors then.
 */
export type IndexedBasis = IndexedState & { timestamp: number | null };

/** What a body's data reflects, to know when it is outdated. */
export interface Basis {
  /** null when the body reads no indexed data */
  indexed: IndexedBasis | null;
  /** the block its live chain reads were made at; null when it reads nothing live */
  chainHead: ChainHead | null;
}

export interface CachedResponse {
  body: Buffer;
  etag: string;
  /** headers computed when the body was built */
  headers: Record<string, string>;
  /**
   * the path and query of the request for what the answer left out (RouteSpec.nextPage), linked
   * under each request's base URL; absent when nothing is left
   */
  nextPage?: string;
  /** performance.now() when the body was built */
  storedAt: number;
  maxAgeSeconds: number;
  basis: Basis;
}

/**
 * The subgraph as the watch reads it: its latest block, or 'reverting' while its nodes are below the
 * newest block this process served and the chain RPC no longer holds that block (a reorg's revert
 * being re-indexed; see the subgraph source's settleFloor).
 */
export type IndexedReading = IndexedState | 'reverting';

/** How often, at most, a cache hit asks whether a newer block is indexed or on chain. */
export const DEFAULT_BLOCK_CHECK_MS = 2000;

/** A watch's reading and when it was asked for (performance.now()). */
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
 * Whether a reading of the latest block shows that a body built at `storedAt` from `block` no longer
 * reflects it: a later block; or, read after the body was built (a reading asked for before may
 * predate it), another block at its height (a reorg replaced it) or a lower one. The subgraph source
 * never reads below the newest block it has served unless the chain RPC no longer holds that block,
 * and a chain head below a body's block is a chain that lost it: either way the body's block was
 * taken away by a reorg. (A load-balanced RPC's node behind the others also reads a lower head: the
 * body is rebuilt at that head, which costs a rebuild and shows nothing untrue.)
 */
function moved(
  reading: BlockReading<{ number: number; hash: string | null }>,
  block: { number: number; hash: string | null },
  storedAt: number,
): boolean {
  if (reading.value.number > block.number) return true;
  return (
    reading.askedAt >= storedAt && (reading.value.number < block.number || reading.value.hash !== block.hash)
  );
}

/**
 * moved() for an indexed block, which also moves with the errors flag and with the deployment that
 * answers (a redeploy under the same name that has re-indexed up to the same block, as on a quiet
 * chain: its data may differ, by as much as the mapping changed), or while the subgraph is
 * reverting. A reading that names no deployment says nothing of it.
 */
function indexedMoved(
  reading: BlockReading<IndexedReading>,
  indexed: IndexedBasis,
  storedAt: number,
): boolean {
  const { value, askedAt } = reading;
  const later = askedAt >= storedAt;
  if (value === 'reverting') return later;
  const redeployed = value.deployment != null && value.deployment !== indexed.deployment;
  return (
    moved({ value, askedAt }, indexed, storedAt) ||
    (later && (value.hasIndexingErrors !== indexed.hasIndexingErrors || redeployed))
  );
}

/**
 * Whether a cached body is outdated: its indexed block moved (see moved()), another deployment
 * answers for the subgraph than the one that built it, its indexing-errors flag changed since the
 * body was built (health would say ok beside a degraded subgraph), or the subgraph is reverting a
 * block the chain no longer holds; or the chain head is not the block its live reads were made at.
 * Serving it for the rest of its tier's lifetime would hide a claim, a new NAV, a new deployment's
 * data or a reverted block from a client that does not cache, as most agents do not. When the
 * subgraph's watch cannot read (the subgraph failing, query nodes behind a block the chain still
 * holds, or a new deployment still re-indexing), a body of indexed data stands, within its
 * lifetime: its headers say the block it reflects. When the chain head cannot be read, a body of
 * live reads is outdated: rebuilt, it answers that the chain fails (503; health degraded) rather
 * than values no longer read live. The chain head is read once per interval however many hits
 * ask, and also tells a cached body's X-Indexed-Block-Lag (chainHeadNow). Every `now` is
 * performance.now().
 */
export class OutdatedBodies {
  private readonly indexed: LatestBlockWatch<IndexedReading>;
  private readonly chainHead: LatestBlockWatch<ChainHead> | undefined;

  constructor(
    readIndexed: () => Promise<IndexedReading>,
    /** undefined when no chain RPC is configured */
    readChainHead: (() => Promise<ChainHead>) | undefined,
    intervalMs: number,
  ) {
    this.indexed = new LatestBlockWatch(readIndexed, intervalMs, (a, b) =>
      a === 'reverting' ? false : b === 'reverting' || a.number > b.number,
    );
    this.chainHead =
      readChainHead && new LatestBlockWatch(readChainHead, intervalMs, (a, b) => a.number > b.number);
  }

  /**
   * Lets the watches learn of a newer block from a body just built (see LatestBlockWatch.saw): its
   * indexed block, and `head`, the chain head its request read.
   */
  built(basis: Basis, head: ChainHead | null, now: number): void {
    if (basis.indexed !== null) {
      const { number, hash, hasIndexingErrors, deployment } = basis.indexed;
      this.indexed.saw({ number, hash, hasIndexingErrors, deployment }, now);
    }
    if (head !== null) this.chainHead?.saw(head, now);
  }

  /**
   * The chain head's number now, to tell a cached body's X-Indexed-Block-Lag by: the watch's reading
   * (read at most once per interval). Undefined without an RPC, when the head cannot be read, and at
   * once while the node is `failing`: an answer of indexed data does not wait on it (a read is
   * started all the same, so that a node answering again is seen).
   */
  async chainHeadNow(now: number, failing: boolean): Promise<number | undefined> {
    const reading = this.chainHead?.latest(now);
    if (failing) return undefined;
    return (await reading)?.value.number;
  }

  async outdate(entry: CachedResponse, now: number): Promise<boolean> {
    const { indexed, chainHead } = entry.basis;
    if (indexed !== null) {
      const seen = await this.indexed.latest(now);
      if (seen !== null && indexedMoved(seen, indexed, entry.storedAt)) return true;
    }
    if (chainHead !== null && this.chainHead) {
      const seen = await this.chainHead.latest(now);
      // live reads that cannot be confirmed are not passed off as live: rebuilt, they say the chain fails
      if (seen === null || moved(seen, chainHead, entry.storedAt)) return true;
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

  /** the entry while it is still within its lifetime at `now` (performance.now()) */
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
