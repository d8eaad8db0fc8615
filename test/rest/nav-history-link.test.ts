// GET /v1/funds/{slug}/nav/history answers at most `limit` records, and a range holding more is
// answered in parts. The body keeps SPEC's shape ({fund, points}), so the Link header tells a
// part from the whole: rel="next" names the request for the rest of the range, until nothing is
// left. Over the indexed devnet, where harbor-stable-yield has NAV records for epochs 1 to 190.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { restServiceForSuite } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const FUND = 'harbor-stable-yield';
const HISTORY = `/v1/funds/${FUND}/nav/history`;

const service = restServiceForSuite();

/** the Link header every answer carries, naming openapi.json, and the request for the rest if given */
const links = (next?: string) =>
  [
    `<${service.base}/openapi.json>; rel="service-desc"`,
    ...(next ? [`<${service.base}${next}>; rel="next"`] : []),
  ].join(', ');

/** the epochs of an answer: its first, its last and how many */
const span = (points: { epoch: number }[]) => [points[0]?.epoch, points.at(-1)?.epoch, points.length];

describe('a NAV history range longer than limit', () => {
  it('links each part to the rest of the range, and the last part to nothing', async () => {
    const first = await call(service.base, `${HISTORY}?from=1&to=190`);
    expect(span(first.body.points)).toEqual([1, 90, 90]);
    expect(first.headers.get('link')).toBe(links(`${HISTORY}?from=91&to=190&limit=90`));

    const second = await call(service.base, `${HISTORY}?from=91&to=190&limit=90`);
    expect(span(second.body.points)).toEqual([91, 180, 90]);
    expect(second.headers.get('link')).toBe(links(`${HISTORY}?from=181&to=190&limit=90`));

    const last = await call(service.base, `${HISTORY}?from=181&to=190&limit=90`);
    expect(span(last.body.points)).toEqual([181, 190, 10]);
    expect(last.headers.get('link')).toBe(links());
  });

  it('links the latest epochs, asked for without parameters, to the ones before them', async () => {
    const latest = await call(service.base, HISTORY);
    expect(span(latest.body.points)).toEqual([101, 190, 90]);
    expect(latest.headers.get('link')).toBe(links(`${HISTORY}?to=100&limit=90`));

    const before = await call(service.base, `${HISTORY}?to=100&limit=90`);
    expect(span(before.body.points)).toEqual([11, 100, 90]);
    expect(before.headers.get('link')).toBe(links(`${HISTORY}?to=10&limit=90`));

    const first = await call(service.base, `${HISTORY}?to=10&limit=90`);
    expect(span(first.body.points)).toEqual([1, 10, 10]);
    expect(first.headers.get('link')).toBe(links());
  });

  it('links nothing after a full answer that ends at the range asked', async () => {
    const upToTo = await call(service.base, `${HISTORY}?from=11&to=20&limit=10`);
    expect(span(upToTo.body.points)).toEqual([11, 20, 10]);
    expect(upToTo.headers.get('link')).toBe(links());
  });

  it("links nothing after a full answer that ends at the fund's latest epoch, when no `to` was given", async () => {
    const toLatest = await call(service.base, `${HISTORY}?from=101`);
    expect(span(toLatest.body.points)).toEqual([101, 190, 90]);
    expect(toLatest.headers.get('link')).toBe(links());
  });

  it('links nothing before a full answer that starts at epoch 1', async () => {
    const fromOne = await call(service.base, `${HISTORY}?to=10&limit=10`);
    expect(span(fromOne.body.points)).toEqual([1, 10, 10]);
    expect(fromOne.headers.get('link')).toBe(links());
  });

  it('keeps the link on an answer served again from the cache, and on its 304', async () => {
    const path = `${HISTORY}?from=5&to=30&limit=7`;
    const next = links(`${HISTORY}?from=12&to=30&limit=7`);
    const built = await call(service.base, path);
    expect(built.headers.get('link')).toBe(next);
    const again = await call(service.base, path);
    expect(again.headers.get('etag')).toBe(built.headers.get('etag'));
    expect(again.headers.get('link')).toBe(next);
    const revalidated = await call(service.base, path, {
      headers: { 'If-None-Match': built.headers.get('etag')! },
    });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('link')).toBe(next);
  });

  it('names the rest under the base URL of each request, a cached answer included', async () => {
    /** the Link header of GET `path` sent with the given Host header, which fetch() cannot set */
    const linkWithHost = (path: string, host: string) =>
      new Promise<string | string[] | undefined>((resolve, reject) => {
        const req = request(`${service.base}${path}`, { headers: { host } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers.link));
        });
        req.on('error', reject);
        req.end();
      });
    const path = `${HISTORY}?from=40&to=60&limit=3`;
    const rest = `${HISTORY}?from=43&to=60&limit=3`;
    expect(await linkWithHost(path, 'first.example')).toBe(
      `<http://first.example/openapi.json>; rel="service-desc", <http://first.example${rest}>; rel="next"`,
    );
    expect(await linkWithHost(path, 'second.example')).toBe(
      `<http://second.example/openapi.json>; rel="service-desc", <http://second.example${rest}>; rel="next"`,
    );
  });
});
