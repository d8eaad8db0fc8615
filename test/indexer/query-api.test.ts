// The graph-node query dialect over a store holding a known history (store-fixture.ts): past-block
// reads, every generated where operator, ordering with ties and extreme numbers, nested entities,
// @derivedFrom lists, caps, _meta, and validation errors for anything unsupported. Requests go
// through the real HTTP server on an OS-assigned port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryAnswer, queryErrorOf, queryIndexer } from './graphql-client.ts';
import {
  deployment,
  extraEvents,
  header,
  navHistory,
  navId,
  vault1,
  vault2,
  vault3,
  type NavInput,
  serveFixture,
  type ServedFixture,
} from './store-fixture.ts';

let history: ServedFixture;

const query = (text: string) => queryAnswer(history.url, text);
const data = (text: string) => queryIndexer(history.url, text);
const errorOf = (text: string) => queryErrorOf(history.url, text);

beforeAll(async () => {
  history = await serveFixture();
});

afterAll(() => history?.close());

const latestNavs = (): NavInput[] => navHistory[13]!;

async function navIds(where: string): Promise<string[]> {
  const d = await data(`{ navRecords(where: ${where}) { id } }`);
  return (d.navRecords as { id: string }[]).map((r) => r.id);
}

function expectedNavIds(pred: (n: NavInput) => boolean): string[] {
  return latestNavs()
    .filter(pred)
    .map((n) => navId(n.vault, n.epoch))
    .sort();
}

describe('query API: reading at a block', () => {
  it('returns each past block its own version of an entity', async () => {
    const id = navId(vault1, 1);
    for (const [block, status] of [
      [10, 'Draft'],
      [11, 'Published'],
      [13, 'Published'],
    ] as const) {
      const d = await data(`{ navRecord(id: "${id}", block: { number: ${block} }) { status publishedAt } }`);
      expect((d.navRecord as { status: string }).status).toBe(status);
    }
    const d10 = await data(
      `{ navRecords(block: { number: 10 }) { id } funds(block: { number: 10 }) { slug } }`,
    );
    expect(d10.navRecords).toEqual([{ id: navId(vault1, 1) }]);
    expect(d10.funds).toEqual([{ slug: 'alpha-income' }]);
  });

  it('shows an entity removed at a block until the block before', async () => {
    const id = navId(vault2, 2);
    const at12 = await data(`{ navRecord(id: "${id}", block: { number: 12 }) { navPerShare } }`);
    expect(at12.navRecord).toEqual({ navPerShare: (2n ** 200n).toString() });
    const at13 = await data(`{ navRecord(id: "${id}") { navPerShare } }`);
    expect(at13.navRecord).toBeNull();
  });

  it('selects the block by hash and by number_gte', async () => {
    const byHash = await data(`{ funds(block: { hash: "${header(11).hash}" }) { slug } }`);
    expect((byHash.funds as unknown[]).length).toBe(2);
    const gte = await data(`{ funds(block: { number_gte: 13 }) { slug } }`);
    expect((gte.funds as unknown[]).length).toBe(3);
  });

  it('rejects a block past the indexed head like graph-node', async () => {
    expect(await errorOf(`{ funds(block: { number: 14 }) { id } }`)).toContain(
      'has only indexed up to block number 13 and data for block number 14 is therefore not yet available',
    );
    expect(await errorOf(`{ funds(block: { number_gte: 99 }) { id } }`)).toContain('block.number_gte');
    expect(await errorOf(`{ funds(block: { hash: "0x${'99'.repeat(32)}" }) { id } }`)).toBe(
      'Failed to decode `block.hash` value: `no block with that hash found`',
    );
  });

  it('rejects a block before the one before the start block, for entities and _meta alike', async () => {
    const before = (n: number) =>
      `Failed to decode \`block.number\` value: \`subgraph ${deployment} only has data starting at block number 9 and data for block number ${n} is therefore not available\``;
    expect(await errorOf('{ funds(block: { number: 8 }) { id } }')).toBe(before(8));
    expect(await errorOf('{ _meta(block: { number: 8 }) { deployment } }')).toBe(before(8));
    expect(await errorOf('{ fund(id: "0x01", block: { number: -1 }) { id } }')).toBe(before(-1));
    expect(await data('{ funds(block: { number: 9 }) { id } }')).toEqual({ funds: [] });
  });

  it('answers a block it cannot locate with that error alone, whatever the other fields read', async () => {
    const r = await query(
      '{ _meta { deployment } funds(block: { number: 99 }) { id } fund(id: "0x01") { id } }',
    );
    expect(r.data).toBeUndefined();
    expect(r.errors!.map((e) => e.message)).toEqual([
      `Failed to decode \`block.number\` value: \`subgraph ${deployment} has only indexed up to block number 13 and data for block number 99 is therefore not yet available\``,
    ]);
  });

  it('answers _meta with the indexed head, its hash and timestamp, and the deployment', async () => {
    const d = await data(
      `{ _meta { block { number hash timestamp parentHash } deployment hasIndexingErrors } }`,
    );
    expect(d._meta).toEqual({
      block: {
        number: 13,
        hash: header(13).hash,
        timestamp: header(13).timestamp,
        parentHash: header(12).hash,
      },
      deployment,
      hasIndexingErrors: false,
    });
    const byHash = await data(
      `{ _meta(block: { hash: "${header(11).hash}" }) { block { number hash timestamp parentHash } } }`,
    );
    expect(byHash._meta).toEqual({
      block: {
        number: 11,
        hash: header(11).hash,
        timestamp: header(11).timestamp,
        parentHash: header(10).hash,
      },
    });
  });

  it('answers _meta at a block given by number without its hash, timestamp or parent hash', async () => {
    const past = await data(
      `{ _meta(block: { number: 11 }) { block { number hash timestamp parentHash } } }`,
    );
    expect(past._meta).toEqual({ block: { number: 11, hash: null, timestamp: null, parentHash: null } });
  });
});

describe('query API: where operators', () => {
  const big = 2n ** 200n;
  const cases: [string, string, (n: NavInput) => boolean][] = [
    ['equality on Int', '{ epoch: 2 }', (n) => n.epoch === 2],
    ['_not on Int', '{ epoch_not: 2 }', (n) => n.epoch !== 2],
    ['_gt on BigInt', '{ navPerShare_gt: "1000000" }', (n) => n.navPerShare > 1_000_000n],
    ['_gte on BigInt', '{ navPerShare_gte: "1000000" }', (n) => n.navPerShare >= 1_000_000n],
    ['_lt on a negative BigInt', '{ navPerShare_lt: "0" }', (n) => n.navPerShare < 0n],
    ['_lte on BigInt', '{ navPerShare_lte: "1000000" }', (n) => n.navPerShare <= 1_000_000n],
    [
      '_in on BigInt',
      `{ navPerShare_in: ["-5", "${big}", "1020000"] }`,
      (n) => [-5n, big, 1_020_000n].includes(n.navPerShare),
    ],
    ['_not_in on Int', '{ epoch_not_in: [1] }', (n) => n.epoch !== 1],
    ['equality on an enum', '{ status: Draft }', (n) => n.status === 'Draft'],
    [
      '_in on an enum',
      '{ status_in: [Published, Verified] }',
      (n) => ['Published', 'Verified'].includes(n.status),
    ],
    ['_not_in on an enum', '{ status_not_in: [Draft] }', (n) => n.status !== 'Draft'],
    ['null equality', '{ publishedAt: null }', (n) => n.publishedAt === undefined],
    ['_not null', '{ publishedAt_not: null }', (n) => n.publishedAt !== undefined],
    ['_contains on String', '{ lastRejectionReason_contains: "_nav" }', (n) => !!n.reason?.includes('_nav')],
    // graph-node passes the value into a LIKE pattern unescaped (reason: 'bad_nav 5%')
    ['_contains with _ as a wildcard', '{ lastRejectionReason_contains: "b_d" }', (n) => !!n.reason],
    ['_contains case-sensitively', '{ lastRejectionReason_contains: "BAD" }', () => false],
    [
      '_contains with a value ending in % as the whole pattern',
      '{ lastRejectionReason_contains: "5%" }',
      () => false,
    ],
    [
      '_contains with a value starting with % as the whole pattern',
      '{ lastRejectionReason_contains: "%nav" }',
      () => false,
    ],
    ['_not_contains with wildcards', '{ lastRejectionReason_not_contains: "b_d" }', () => false],
    ['_starts_with with % as a wildcard', '{ lastRejectionReason_starts_with: "b%5" }', (n) => !!n.reason],
    [
      '_ends_with with \\ escaping a wildcard',
      String.raw`{ lastRejectionReason_ends_with: "5\\%" }`,
      (n) => !!n.reason,
    ],
    [
      '_ends_with with an escaped _ taken literally',
      String.raw`{ lastRejectionReason_ends_with: "\\_" }`,
      () => false,
    ],
    [
      '_contains with a trailing \\ escaping the closing %',
      String.raw`{ lastRejectionReason_contains: "5\\" }`,
      (n) => !!n.reason,
    ],
    [
      '_contains_nocase with wildcards',
      '{ lastRejectionReason_contains_nocase: "B_D%5" }',
      (n) => !!n.reason,
    ],
    [
      '_contains_nocase',
      '{ lastRejectionReason_contains_nocase: "BAD" }',
      (n) => !!n.reason?.toLowerCase().includes('bad'),
    ],
    ['_not_contains on String', '{ lastRejectionReason_not_contains: "zzz" }', (n) => n.reason !== undefined],
    [
      '_not_contains_nocase',
      '{ lastRejectionReason_not_contains_nocase: "BAD" }',
      (n) => n.reason !== undefined && !n.reason.toLowerCase().includes('bad'),
    ],
    ['_starts_with', '{ lastRejectionReason_starts_with: "bad_" }', (n) => !!n.reason?.startsWith('bad_')],
    [
      '_starts_with_nocase',
      '{ lastRejectionReason_starts_with_nocase: "BAD_" }',
      (n) => !!n.reason?.startsWith('bad_'),
    ],
    [
      '_not_starts_with',
      '{ lastRejectionReason_not_starts_with: "bad" }',
      (n) => n.reason !== undefined && !n.reason.startsWith('bad'),
    ],
    [
      '_not_starts_with_nocase',
      '{ lastRejectionReason_not_starts_with_nocase: "B" }',
      (n) => n.reason !== undefined && !n.reason.toLowerCase().startsWith('b'),
    ],
    ['_ends_with', '{ lastRejectionReason_ends_with: "5%" }', (n) => !!n.reason?.endsWith('5%')],
    [
      '_ends_with_nocase',
      '{ lastRejectionReason_ends_with_nocase: "NAV 5%" }',
      (n) => !!n.reason?.toLowerCase().endsWith('nav 5%'),
    ],
    [
      '_not_ends_with',
      '{ lastRejectionReason_not_ends_with: "%" }',
      (n) => n.reason !== undefined && !n.reason.endsWith('%'),
    ],
    [
      '_not_ends_with_nocase',
      '{ lastRejectionReason_not_ends_with_nocase: "X" }',
      (n) => n.reason !== undefined,
    ],
    [
      '_gt on String (byte order)',
      `{ id_gt: "${vault1}-1" }`,
      (n) => navId(n.vault, n.epoch) > `${vault1}-1`,
    ],
    ['_lt on ID', `{ id_lt: "${vault2}" }`, (n) => navId(n.vault, n.epoch) < vault2],
    ['a reference by id', `{ fund: "${vault2}" }`, (n) => n.vault === vault2],
    [
      'a reference by id in mixed case',
      `{ fund: "${vault2.toUpperCase().replace('0X', '0x')}" }`,
      (n) => n.vault === vault2,
    ],
    [
      '_in on a reference',
      `{ fund_in: ["${vault2}", "${vault3}"] }`,
      (n) => n.vault === vault2 || n.vault === vault3,
    ],
    ['a nested filter on a reference', '{ fund_: { slug_starts_with: "Beta" } }', (n) => n.vault === vault2],
    [
      'a nested filter on a reference with a list operator',
      '{ fund_: { pausedModules_contains: ["claims"] } }',
      (n) => n.vault === vault2,
    ],
    ['and', '{ and: [{ epoch: 1 }, { status: Draft }] }', (n) => n.epoch === 1 && n.status === 'Draft'],
    [
      'or',
      '{ or: [{ navPerShare_lt: "0" }, { status: Published }] }',
      (n) => n.navPerShare < 0n || n.status === 'Published',
    ],
    ['_change_block', '{ _change_block: { number_gte: 12 } }', (n) => n.block >= 12],
  ];
  for (const [name, where, pred] of cases) {
    it(`filters with ${name}`, async () => {
      const expected = expectedNavIds(pred);
      expect((await navIds(where)).sort()).toEqual(expected);
    });
  }

  it('filters enum lists with equality, _not, _contains (has all) and _not_contains (has none)', async () => {
    const slugs = async (where: string) =>
      ((await data(`{ funds(where: ${where}, orderBy: slug) { slug } }`)).funds as { slug: string }[]).map(
        (f) => f.slug,
      );
    expect(await slugs('{ pausedModules: ["claims", "redemptions"] }')).toEqual(['Beta-Growth']);
    expect(await slugs('{ pausedModules_not: [] }')).toEqual(['Beta-Growth', 'gamma_reserve']);
    expect(await slugs('{ pausedModules_contains: ["redemptions", "claims"] }')).toEqual(['Beta-Growth']);
    expect(await slugs('{ pausedModules_contains: ["claims", "subscriptions"] }')).toEqual([]);
    expect(await slugs('{ pausedModules_not_contains: ["claims", "subscriptions"] }')).toEqual([
      'alpha-income',
    ]);
    expect(await slugs('{ pausedModules_contains: [claims] }')).toEqual(['Beta-Growth']);
  });

  it('has no _nocase operators on an enum list, as graph-node generates none', async () => {
    expect(await errorOf('{ funds(where: { pausedModules_contains_nocase: [claims] }) { id } }')).toMatch(
      /pausedModules_contains_nocase/,
    );
  });

  it('filters Bytes with _contains, _not_contains and comparisons', async () => {
    const ids = async (where: string) =>
      ((await data(`{ funds(where: ${where}) { id } }`)).funds as { id: string }[]).map((f) => f.id);
    expect(await ids('{ vault_contains: "0xaaaa" }')).toEqual([vault2]);
    expect(await ids('{ vault_not_contains: "0xaaaa" }')).toEqual([vault1, vault3]);
    expect(await ids(`{ id_gte: "${vault3}" }`)).toEqual([vault3, vault2]);
    expect(await ids('{ closed: true }')).toEqual([vault2]);
    expect(await ids('{ closed_not: true }')).toEqual([vault1, vault3]);
    expect(await ids('{ closed_in: [true, false] }')).toEqual([vault1, vault3, vault2]);
  });

  it('refuses a pattern ending in the escape character, as Postgres does', async () => {
    expect(
      await errorOf(String.raw`{ navRecords(where: { lastRejectionReason_ends_with: "5\\" }) { id } }`),
    ).toBe('LIKE pattern must not end with escape character');
  });

  it('filters by a nested filter on a @derivedFrom list', async () => {
    const d = await data(`{ funds(where: { navRecords_: { status: Published } }) { id } }`);
    expect(d.funds).toEqual([{ id: vault1 }]);
  });

  it("rejects or mixed with column filters at the same level, in graph-node's words", async () => {
    expect(
      await errorOf('{ navRecords(where: { status: Draft, epoch: 1, or: [{ status: Draft }] }) { id } }'),
    ).toBe(
      "Cannot mix column filters with 'or' operator at the same level. Found column filter(s) 'epoch', 'status' alongside 'or' operator.\n\n" +
        "Instead of:\nwhere: { 'epoch', 'status', or: [...] }\n\n" +
        "Use:\nwhere: { or: [{ 'epoch', 'status', ... }, { 'epoch', 'status', ... }] }",
    );
  });

  it('matches nothing with an empty _in, _not_in or or, and everything with an empty and', async () => {
    expect(await navIds('{ epoch_in: [] }')).toEqual([]);
    expect(await navIds('{ epoch_not_in: [] }')).toEqual([]);
    expect(await navIds('{ or: [] }')).toEqual([]);
    expect((await navIds('{ and: [] }')).sort()).toEqual(expectedNavIds(() => true));
  });

  it('takes the operands of and and or from every list beside them, as graph-node does', async () => {
    const both = await navIds('{ and: [{ epoch: 1 }], or: [{ status: Draft }] }');
    expect(both.sort()).toEqual(expectedNavIds((n) => n.epoch === 1 && n.status === 'Draft'));
  });

  it("refuses anything but lists of filters beside and and or, and null filters, with graph-node's error", async () => {
    for (const where of [
      '{ and: [{ status: Draft }], epoch: 1 }',
      '{ or: [{ status: Draft }], _change_block: { number_gte: 1 } }',
      '{ and: null }',
      '{ or: null }',
      '{ or: [null] }',
      '{ _change_block: null }',
    ]) {
      expect(await errorOf(`{ navRecords(where: ${where}) { id } }`)).toBe('Filter must by an object');
    }
    expect(await errorOf('{ navRecords(where: { fund_: null }) { id } }')).toBe(
      'Query contains value with invalid type `Fund!`: `null`',
    );
  });

  it("refuses null for an ordering or list operator with graph-node's errors", async () => {
    expect(await errorOf('{ navRecords(where: { epoch_gt: null }) { id } }')).toBe(
      'Store error: unsupported filter `>` for value `null`',
    );
    expect(await errorOf('{ navRecords(where: { epoch_not_in: null }) { id } }')).toBe(
      'Non-list value passed to `_not_in` filter',
    );
  });
});

describe('query API: ordering and paging', () => {
  it('orders BigInt exactly across negatives and huge values, both directions', async () => {
    const sorted = [...latestNavs()].sort((a, b) =>
      a.navPerShare < b.navPerShare ? -1 : a.navPerShare > b.navPerShare ? 1 : 0,
    );
    const asc = await data('{ navRecords(orderBy: navPerShare) { navPerShare } }');
    expect((asc.navRecords as { navPerShare: string }[]).map((r) => r.navPerShare)).toEqual(
      sorted.map((n) => n.navPerShare.toString()),
    );
    const desc = await data(
      '{ protocolEvents(orderBy: sortKey, orderDirection: desc, first: 4) { sortKey } }',
    );
    const keys = [...Array(extraEvents).keys()].map((i) => 13n << (32n + BigInt(i)));
    expect((desc.protocolEvents as { sortKey: string }[]).map((r) => r.sortKey)).toEqual(
      keys.reverse().slice(0, 4).map(String),
    );
    const ascEvents = await data('{ protocolEvents(orderBy: sortKey, first: 3) { id sortKey } }');
    expect((ascEvents.protocolEvents as { sortKey: string }[]).map((r) => r.sortKey)).toEqual([
      (-(2n ** 70n)).toString(),
      '0',
      (10n << 32n).toString(),
    ]);
  });

  it('breaks ties by id in the same direction', async () => {
    const asc = await data('{ navRecords(orderBy: epoch) { id epoch } }');
    const desc = await data('{ navRecords(orderBy: epoch, orderDirection: desc) { id epoch } }');
    const rows = latestNavs().map((n) => ({ id: navId(n.vault, n.epoch), epoch: n.epoch }));
    const cmp = (a: { id: string; epoch: number }, b: { id: string; epoch: number }) =>
      a.epoch - b.epoch || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    expect(asc.navRecords).toEqual([...rows].sort(cmp));
    expect(desc.navRecords).toEqual([...rows].sort((a, b) => cmp(b, a)));
  });

  it('puts nulls last ascending and first descending, as Postgres does', async () => {
    const asc = await data('{ navRecords(orderBy: publishedAt) { publishedAt } }');
    const values = (asc.navRecords as { publishedAt: string | null }[]).map((r) => r.publishedAt);
    expect(values[0]).toBe('1111');
    expect(values.slice(1).every((v) => v === null)).toBe(true);
    const desc = await data('{ navRecords(orderBy: publishedAt, orderDirection: desc) { publishedAt } }');
    expect((desc.navRecords as { publishedAt: string | null }[]).at(-1)!.publishedAt).toBe('1111');
  });

  it('orders by a field of a referenced entity', async () => {
    const d = await data('{ navRecords(orderBy: fund__slug, orderDirection: desc) { fund { slug } } }');
    expect((d.navRecords as { fund: { slug: string } }[]).map((r) => r.fund.slug)).toEqual([
      'alpha-income',
      'alpha-income',
      'Beta-Growth',
    ]);
  });

  it('refuses to order by an enum, a reference, a derived field or a list, as graph-node does', async () => {
    const refused = (field: string, type: string) =>
      `Ordering by \`${field}\` is not supported for type \`${type}\``;
    expect(await errorOf('{ navRecords(orderBy: status) { id } }')).toBe(refused('status', 'NavRecord'));
    expect(await errorOf('{ navRecords(orderBy: fund) { id } }')).toBe(refused('fund', 'NavRecord'));
    expect(await errorOf('{ funds(orderBy: navRecords) { id } }')).toBe(refused('navRecords', 'Fund'));
    expect(await errorOf('{ funds(orderBy: pausedModules) { id } }')).toBe(refused('pausedModules', 'Fund'));
    expect(await errorOf('{ funds(orderBy: latestNav__status) { id } }')).toBe(
      refused('status', 'NavRecord'),
    );
    expect(await errorOf(`{ fund(id: "${vault1}") { navRecords(orderBy: status) { id } } }`)).toBe(
      refused('status', 'NavRecord'),
    );
  });

  it('defaults to the first 100 by id and honours first and skip', async () => {
    const d = await data('{ protocolEvents { id } }');
    const all = (d.protocolEvents as { id: string }[]).map((r) => r.id);
    expect(all.length).toBe(100);
    expect(all).toEqual([...all].sort());
    const page = await data('{ protocolEvents(first: 3, skip: 2) { id } }');
    expect(page.protocolEvents).toEqual(all.slice(2, 5).map((id) => ({ id })));
  });

  it('takes first from 1 to 1000 and any skip that is not negative, with graph-node messages', async () => {
    expect(await errorOf('{ funds(first: 1001) { id } }')).toBe(
      'The `first` argument must be between 0 and 1000, but is 1001',
    );
    expect(await errorOf('{ funds(first: 0) { id } }')).toBe(
      'The `first` argument must be between 0 and 1000, but is 0',
    );
    expect(await errorOf('{ funds(skip: -1) { id } }')).toBe(
      'The `skip` argument must be between 0 and 4294967295, but is -1',
    );
    expect(await data('{ funds(skip: 5001) { id } }')).toEqual({ funds: [] });
    const last = await data(`{ protocolEvents(skip: ${extraEvents + 4}) { id } }`);
    expect(last.protocolEvents).toEqual([
      { id: '0x' + (1000 + extraEvents - 1).toString(16).padStart(8, '0') },
    ]);
  });
});

describe('query API: nested entities', () => {
  it('resolves references and @derivedFrom lists with their own arguments at the same block', async () => {
    const d = await data(`{
      fund(id: "${vault1}") {
        slug
        latestNav { epoch status }
        navRecords(orderBy: epoch, orderDirection: desc, where: { status_not: Verified }) { id epoch fund { slug } }
      }
    }`);
    expect(d.fund).toEqual({
      slug: 'alpha-income',
      latestNav: { epoch: 2, status: 'Draft' },
      navRecords: [
        { id: navId(vault1, 2), epoch: 2, fund: { slug: 'alpha-income' } },
        { id: navId(vault1, 1), epoch: 1, fund: { slug: 'alpha-income' } },
      ],
    });
    const past = await data(
      `{ fund(id: "${vault1}", block: { number: 10 }) { latestNav { id } navRecords { status } } }`,
    );
    expect(past.fund).toEqual({ latestNav: null, navRecords: [{ status: 'Draft' }] });
  });

  it('serialises BigInt and Bytes as strings and Int as numbers', async () => {
    const d = await data(`{ protocolEvent(id: "0x00000003") { contract blockNumber logIndex sortKey } }`);
    expect(d.protocolEvent).toEqual({
      contract: vault2,
      blockNumber: '12',
      logIndex: '3',
      sortKey: (-(2n ** 70n)).toString(),
    });
  });
});

describe('query API: values coerced as leniently as graph-node coerces them', () => {
  it('takes a string naming an enum value as that value, in filters and orderings', async () => {
    expect((await navIds('{ status: "Draft" }')).sort()).toEqual(expectedNavIds((n) => n.status === 'Draft'));
    expect((await navIds('{ status_in: ["Published", "Verified"] }')).sort()).toEqual(
      expectedNavIds((n) => ['Published', 'Verified'].includes(n.status)),
    );
    const ordered = await data(
      '{ navRecords(orderBy: "epoch", orderDirection: "desc", first: 1) { epoch } }',
    );
    expect(ordered.navRecords).toEqual([{ epoch: 2 }]);
    expect(await errorOf('{ navRecords(where: { status: "Nope" }) { id } }')).toContain('NavStatus');
  });

  it('takes bytes without 0x, for Bytes fields, references and ids', async () => {
    const bare = vault2.slice(2);
    const vaults = await data(`{ funds(where: { vault: "${bare}" }) { id } fund(id: "${bare}") { slug } }`);
    expect(vaults).toEqual({ funds: [{ id: vault2 }], fund: { slug: 'Beta-Growth' } });
    expect((await navIds(`{ fund: "${bare}" }`)).sort()).toEqual(expectedNavIds((n) => n.vault === vault2));
  });
});

describe('query API: what it does not support is a validation error', () => {
  it('rejects an unknown argument', async () => {
    expect(await errorOf('{ funds(limit: 5) { id } }')).toContain('Unknown argument "limit"');
  });
  it('rejects an unknown where operator', async () => {
    expect(await errorOf('{ funds(where: { slug_like: "a" }) { id } }')).toContain('slug_like');
  });
  it('rejects an operator the field type does not have', async () => {
    expect(await errorOf('{ funds(where: { closed_gt: true }) { id } }')).toContain('closed_gt');
    expect(await errorOf('{ navRecords(where: { epoch_contains: 1 }) { id } }')).toContain('epoch_contains');
  });
  it('rejects an unknown orderBy value and an unknown field', async () => {
    expect(await errorOf('{ funds(orderBy: nope) { id } }')).toContain('nope');
    expect(await errorOf('{ funds { id nope } }')).toContain('Cannot query field "nope"');
  });
  it('rejects malformed scalar values', async () => {
    expect(await errorOf('{ navRecords(where: { navPerShare_gt: "1.5" }) { id } }')).toContain('BigInt');
    expect(await errorOf('{ funds(where: { vault: "0xabc" }) { id } }')).toContain('Bytes');
  });
  it('rejects nesting a child filter inside a child filter', async () => {
    expect(await errorOf('{ navRecords(where: { fund_: { navRecords_: { epoch: 1 } } }) { id } }')).toContain(
      'Child filter nesting not supported',
    );
  });
});

describe('query API: endpoints', () => {
  it('answers GET with the query in the query string, and the deployment path', async () => {
    const base = history.url.replace(/\/subgraphs\/name\/.*$/, '');
    const get = await fetch(`${history.url}?query=${encodeURIComponent('{ _meta { block { number } } }')}`);
    expect(await get.json()).toEqual({ data: { _meta: { block: { number: 13 } } } });
    const byId = await fetch(`${base}/subgraphs/id/${deployment}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ funds(first: 1) { slug } }' }),
    });
    expect(await byId.json()).toEqual({ data: { funds: [{ slug: 'alpha-income' }] } });
  });

  it('lets browsers on any origin query it, answering the preflight as graph-node does', async () => {
    const preflight = await fetch(history.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('Content-Type, User-Agent');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS, POST');
    const answer = await fetch(history.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://example.org' },
      body: JSON.stringify({ query: '{ _meta { deployment } }' }),
    });
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers 404 for another subgraph name and 400 for a body that is not JSON', async () => {
    const base = history.url.replace(/\/subgraphs\/name\/.*$/, '');
    expect((await fetch(`${base}/subgraphs/name/other`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(history.url, { method: 'POST', body: '{nope' })).status).toBe(400);
  });
});
