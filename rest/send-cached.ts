// Sends a built body the way every cacheable answer of the REST app goes out: its ETag, its
// Cache-Control lifetime, its Age, the headers computed when it was built and the data's lags, then
// a 304 when If-None-Match matches, else the body. The lags are told as of this answer, not as of
// when the body was built: a client judges a stalled index by X-Indexed-Block-Lag growing from one
// answer to the next. The route handlers (rest/route-handler.ts) and the discovery documents
// (rest/documents.ts) both answer through it. Age is told by performance.now(), the clock of a
// cached body's storedAt, which a step of the wall clock does not move.
import type { Request, Response } from 'express';
import { dataLagSeconds, indexedBlockLag } from '../gateway/freshness-headers.ts';
import { matchesIfNoneMatch, type CachedResponse } from './response-cache.ts';

/** `chainHead`: the chain head's number now, for a body of indexed data; undefined when unknown. */
export function sendCached(
  req: Request,
  res: Response,
  entry: CachedResponse,
  contentType: string,
  chainHead?: number,
): void {
  res.setHeader('ETag', entry.etag);
  res.setHeader('Cache-Control', `public, max-age=${entry.maxAgeSeconds}`);
  res.setHeader('Age', String(Math.floor((performance.now() - entry.storedAt) / 1000)));
  for (const [name, value] of Object.entries(entry.headers)) res.setHeader(name, value);
  const { indexed } = entry.basis;
  if (indexed !== null && chainHead !== undefined)
    res.setHeader('X-Indexed-Block-Lag', indexedBlockLag(indexed.number, chainHead));
  if (indexed?.timestamp != null) res.setHeader('X-Data-Lag-Seconds', dataLagSeconds(indexed.timestamp));
  if (matchesIfNoneMatch(req.get('If-None-Match'), entry.etag)) {
    res.status(304).end();
    return;
  }
  res.status(200);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', String(entry.body.length));
  res.end(entry.body);
}
