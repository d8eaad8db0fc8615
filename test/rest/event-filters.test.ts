// GET /v1/events filtered by fund, and the filters that cannot match: one fund's events come from
// its vault and from the NavOracle, DividendDistributor and FundRegistry, and a contract asked for
// an event it never emits, another fund's vault asked with a fund, or a fund asked with an event that
// never names one is refused rather than answered with an empty page an agent would read as "none".
// Expectations come from the scenario's ledger and the devnet registry.
import { describe, expect, it } from 'vitest';
import { restServiceForSuite } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const service = restServiceForSuite();

const get = (path: string) => call(service.base, path);
const registry = () => service.stack.registry;

interface EventItem {
  fund: string | null;
  eventName: string;
  contract: string;
  args: Record<string, unknown>;
}

/** Every event of the query `filters`, following the cursors. */
async function allEvents(filters: string): Promise<EventItem[]> {
  const items: EventItem[] = [];
  let cursor: string | null = null;
  do {
    const page = await get(`/v1/events?${filters}&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status).toBe(200);
    items.push(...(page.body.items as EventItem[]));
    cursor = page.body.nextCursor;
  } while (cursor);
  return items;
}

describe('GET /v1/events by fund', () => {
  it("lists one fund's NAV publications, which the NAV oracle emits", async () => {
    const fund = registry().funds[0]!;
    const items = await allEvents(`fund=${fund.slug}&eventName=NavPublished`);
    const published = service.stack.devnet.ledger.navRecords.filter(
      (r) => r.fund === fund.slug && r.publishTxHash !== null,
    );
    expect(items).toHaveLength(published.length);
    expect(published.length).toBeGreaterThan(0);
    const oracle = registry().contracts.find((c) => c.kind === 'NavOracle')!.address;
    for (const item of items) {
      expect(item).toMatchObject({
        fund: fund.slug,
        contract: oracle,
        args: { fund: fund.vault },
      });
    }
  });

  it("holds the fund's vault events and the oracle's, distributor's and registry's events naming it", async () => {
    const fund = registry().funds[1]!;
    const items = await allEvents(`fund=${fund.slug}`);
    expect(new Set(items.map((i) => i.fund))).toEqual(new Set([fund.slug]));
    const names = new Set(items.map((i) => i.eventName));
    for (const name of ['FundRegistered', 'NavPublished', 'EpochSettled', 'DividendRoundPosted'])
      expect(names).toContain(name);
    expect(names).not.toContain('RoleGranted');
  });

  it('refuses an unknown fund slug naming where slugs are listed', async () => {
    const { status, body } = await get('/v1/events?fund=no-such-fund');
    expect(status).toBe(400);
    expect(body.parameter).toBe('fund');
    expect(body.detail).toContain('No fund has slug "no-such-fund". List fund slugs with GET /v1/funds');
  });
});

describe('GET /v1/events filters that cannot match', () => {
  it("refuses a fund vault asked for the NAV oracle's event, naming its emitter and the fund filter", async () => {
    const fund = registry().funds[0]!;
    const { status, body } = await get(`/v1/events?contract=${fund.vault}&eventName=NavPublished`);
    expect(status).toBe(400);
    expect(body.parameter).toBe('eventName');
    expect(body.detail).toMatch(
      new RegExp(
        `\\(${fund.vault.toLowerCase()}\\) never emits NavPublished: its events are SubscriptionRequested, .*\\. NavPublished is emitted by NavOracle; to get one fund's, filter by fund \\(its slug\\) instead of contract\\.$`,
      ),
    );
  });

  it('refuses a registered contract no event is indexed for', async () => {
    const policy = registry().contracts.find((c) => c.kind === 'ThreePoolPolicy')!;
    const { status, body } = await get(`/v1/events?contract=${policy.address}`);
    expect(status).toBe(400);
    expect(body.parameter).toBe('contract');
    expect(body.detail).toBe(
      `${policy.name} (${policy.address.toLowerCase()}) emits no indexed events: events are indexed for FundRegistry, NavOracle, DividendDistributor, each fund vault (FundVault). To follow one fund, filter by fund (its slug) instead.`,
    );
  });

  it("refuses another fund's vault asked with a fund, naming both and what to ask instead", async () => {
    const [fund, other] = registry().funds;
    const vault = registry().contracts.find((c) => c.address === other!.vault)!;
    const { status, body } = await get(`/v1/events?fund=${fund!.slug}&contract=${other!.vault}`);
    expect(status).toBe(400);
    expect(body.parameter).toBe('contract');
    expect(body.detail).toBe(
      `${vault.name} (${other!.vault.toLowerCase()}) is the vault of fund ${other!.slug}, so none of its events concerns fund ${fund!.slug}: leave contract out to get every event of ${fund!.slug}, or ask for fund "${other!.slug}".`,
    );
  });

  it("answers a fund's own vault asked with the fund", async () => {
    const fund = registry().funds[0]!;
    const { status, body } = await get(`/v1/events?fund=${fund.slug}&contract=${fund.vault}&limit=1`);
    expect(status).toBe(200);
    expect(body.items).toEqual([expect.objectContaining({ fund: fund.slug, contract: fund.vault })]);
  });

  it('refuses a fund asked with an event no record of which names a fund', async () => {
    const fund = registry().funds[0]!;
    const { status, body } = await get(`/v1/events?fund=${fund.slug}&eventName=RoleGranted`);
    expect(status).toBe(400);
    expect(body.parameter).toBe('fund');
    expect(body.detail).toBe(
      `No RoleGranted event concerns a fund (it is about the contract that emits it), so fund "${fund.slug}" would match none: leave fund out to list RoleGranted events, or leave eventName out to list every event of ${fund.slug}.`,
    );
  });

  it("refuses a fund asked with the FundRegistry's OwnershipTransferred, which names no fund as a vault's does", async () => {
    const fund = registry().funds[0]!;
    const fundRegistry = registry().contracts.find((c) => c.kind === 'FundRegistry')!;
    const refused = await get(
      `/v1/events?fund=${fund.slug}&contract=${fundRegistry.address}&eventName=OwnershipTransferred`,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/^No OwnershipTransferred event of FundRegistry concerns a fund /);
    // a vault's OwnershipTransferred names its fund, so the pair alone may match
    expect((await get(`/v1/events?fund=${fund.slug}&eventName=OwnershipTransferred`)).status).toBe(200);
  });

  it('names a fund in no record of the events it refuses a fund for, as the scenario indexed them', async () => {
    const roleEvents = await allEvents('eventName=RoleGranted');
    expect(roleEvents.length).toBeGreaterThan(0);
    expect(new Set(roleEvents.map((e) => e.fund))).toEqual(new Set([null]));
    const fundRegistry = registry().contracts.find((c) => c.kind === 'FundRegistry')!;
    const transfers = await allEvents(`contract=${fundRegistry.address}&eventName=OwnershipTransferred`);
    expect(transfers.length).toBeGreaterThan(0);
    expect(new Set(transfers.map((e) => e.fund))).toEqual(new Set([null]));
  });

  it("answers a contract's own event as before", async () => {
    const oracle = registry().contracts.find((c) => c.kind === 'NavOracle')!;
    const { status, body } = await get(
      `/v1/events?contract=${oracle.address}&eventName=NavPublished&limit=1`,
    );
    expect(status).toBe(200);
    expect(body.items).toHaveLength(1);
  });
});
