// The REST NAV record's settledAt: the date of the epoch a NAV values, the block time of the
// vault's settlement of that epoch, beside publishedAt (days later, null before publication).
// Over the indexed devnet, against the scenario's ledger.
import { describe, expect, it } from 'vitest';
import { restServiceForSuite } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const service = restServiceForSuite();

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
/** the ledger's settlement time of `slug`'s epoch, ISO */
const settledAt = (slug: string, epoch: number) => {
  const settlement = service.stack.devnet.ledger.settlements.find(
    (s) => s.fund === slug && s.epoch === epoch,
  );
  if (!settlement) throw new Error(`the ledger has no settlement of ${slug} epoch ${epoch}`);
  return iso(settlement.timestamp);
};

describe('settledAt in REST NAV records', () => {
  it("dates harbor-stable-yield's epoch 180 June 30, when it was settled, not July 3, when it was published", async () => {
    const { status, body } = await call(
      service.base,
      '/v1/funds/harbor-stable-yield/nav/history?from=180&to=180',
    );
    expect(status).toBe(200);
    expect(body.points).toMatchObject([
      { epoch: 180, settledAt: '2025-06-30T00:00:00.000Z', publishedAt: '2025-07-03T01:00:00.000Z' },
    ]);
  });

  it('dates every record of a history by its settlement, those not yet published included', async () => {
    const statuses = new Set<string>();
    for (const fund of service.stack.devnet.ledger.funds) {
      const { body } = await call(service.base, `/v1/funds/${fund.slug}/nav/history?from=0&limit=500`);
      const points = body.points as { epoch: number; status: string; settledAt: string }[];
      for (const point of points) statuses.add(point.status);
      expect(points.map((p) => [p.epoch, p.settledAt])).toEqual(
        points.map((p) => [p.epoch, settledAt(fund.slug, p.epoch)]),
      );
    }
    expect([...statuses].sort()).toEqual(['Draft', 'PendingVerification', 'Published', 'Verified']);
  });

  it('dates the latest published NAV by its settlement', async () => {
    const { body } = await call(service.base, '/v1/funds/summit-kelly-growth/nav');
    expect(body.nav.settledAt).toBe(settledAt('summit-kelly-growth', body.nav.epoch));
  });

  it('dates the latest published NAV of every fund in the funds list by its settlement', async () => {
    const { body } = await call(service.base, '/v1/funds');
    const items = body.items as { slug: string; nav: { epoch: number; settledAt: string } }[];
    expect(items.length).toBeGreaterThan(1);
    for (const { slug, nav } of items) expect(nav.settledAt).toBe(settledAt(slug, nav.epoch));
  });
});
