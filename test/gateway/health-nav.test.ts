// Health's nav is the latest NAV publication of the funds the registry lists: a vault the index holds
// that the registry does not list (a fund registered on-chain that this deployment does not serve) is
// no fund of the service's, so its epoch is never reported, as its paused modules are not.
import { beforeAll, describe, expect, it } from 'vitest';
import { graphql, indexedStack, testGateway, type IndexedStack } from '../harness/stack.ts';

let stack: IndexedStack;
beforeAll(async () => {
  stack = await indexedStack();
});

/** each fund's latest publication in the scenario, latest first */
function publicationsByFund(): { fund: string; epoch: number; publishedAt: number }[] {
  const latest = new Map<string, { fund: string; epoch: number; publishedAt: number }>();
  for (const r of stack.devnet.ledger.navRecords) {
    if (r.publishedAt === null) continue;
    const known = latest.get(r.fund);
    if (!known || r.publishedAt > known.publishedAt) {
      latest.set(r.fund, { fund: r.fund, epoch: r.epoch, publishedAt: r.publishedAt });
    }
  }
  return [...latest.values()].sort((a, b) => b.publishedAt - a.publishedAt);
}

describe('health nav', () => {
  it('is the latest publication of the registry funds, not of indexed funds the registry leaves out', async () => {
    const publications = publicationsByFund();
    // the registry keeps only the fund that published last the earliest: the others published later
    const kept = publications[publications.length - 1];
    const unlisted = publications.slice(0, -1);
    if (!kept || unlisted.length === 0)
      throw new Error('the scenario published NAVs of fewer than two funds');
    expect(unlisted[0]!.publishedAt).toBeGreaterThan(kept.publishedAt);
    const registry = { ...stack.registry, funds: stack.registry.funds.filter((f) => f.slug === kept.fund) };
    const { data, errors } = await graphql(
      testGateway(stack, { registry }),
      '{ health { nav { latestEpoch publishedAt } pausedModules } }',
    );
    expect(errors).toBeUndefined();
    expect(data?.health.nav).toEqual({
      latestEpoch: kept.epoch,
      publishedAt: new Date(kept.publishedAt * 1000).toISOString(),
    });
    expect(data?.health.pausedModules.every((m: string) => m.startsWith(`${kept.fund}:`))).toBe(true);
  });
});
