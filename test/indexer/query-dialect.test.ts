// The corners of graph-node's query dialect that the fund-protocol schema does not reach: query field
// names from type names graph-node inflects unexpectedly, lists of BigDecimals and of references to
// Bytes-id entities, nullable lists, and a one-to-one @derivedFrom field that two entities claim.
// The store holds a small known history written straight through the store API; requests go
// through the real HTTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreValue } from '../../indexer/store/entity.ts';
import { parseSubgraphSchema } from '../../indexer/subgraph-schema.ts';
import { idsOf, queryAnswer, queryErrorOf, queryIndexer } from './graphql-client.ts';
import { B, L, S, entity, serveHistory, type BlockWrites, type ServedHistory } from './store-fixture.ts';

const schema = parseSubgraphSchema(`
  type ERC20Token @entity { id: Bytes! symbol: String! owner: Owner }
  type ProtocolStats @entity {
    id: ID!
    prices: [BigDecimal!]!
    tags: [String!]
    tokens: [ERC20Token!]!
    owners: [Owner!]
    mainToken: ERC20Token
  }
  type Owner @entity { id: ID! token: ERC20Token @derivedFrom(field: "owner") }
`);

const BD = (value: string): StoreValue => ({ kind: 'BigDecimal', value });
const token1 = '0x' + '11'.repeat(19) + '22';
const token2 = '0x' + '22'.repeat(20);

/**
 * Block 5: two tokens, both owned by o1; o2 owns none; stats s1 (tagged, with a main token) and s2
 * (untagged, without).
 */
const history: BlockWrites = {
  5: (w) => {
    w.set('Owner', 'o1', entity({ id: S('o1') }));
    w.set('Owner', 'o2', entity({ id: S('o2') }));
    w.set('ERC20Token', token1, entity({ id: B(token1), symbol: S('ONE'), owner: S('o1') }));
    w.set('ERC20Token', token2, entity({ id: B(token2), symbol: S('TWO'), owner: S('o1') }));
    w.set(
      'ProtocolStats',
      's1',
      entity({
        id: S('s1'),
        prices: L([BD('2'), BD('0.5')]),
        tags: L([S('Alpha'), S('beta')]),
        tokens: L([B(token1)]),
        owners: L([S('o1')]),
        mainToken: B(token1),
      }),
    );
    w.set('ProtocolStats', 's2', entity({ id: S('s2'), prices: L([BD('10')]), tokens: L([]) }));
  },
};

let served: ServedHistory;
let url: string;

beforeAll(async () => {
  served = await serveHistory({
    schema,
    history,
    startBlock: 5,
    headSeen: 5,
    deployment: 'QmDialect',
    subgraphName: 'dialect',
  });
  url = served.url;
});

afterAll(async () => {
  await served?.close();
});

const data = (text: string) => queryIndexer(url, text);
const errorOf = (text: string) => queryErrorOf(url, text);
const ids = (text: string) => idsOf(url, text);

describe('query field names', () => {
  it('are the ones graph-node inflects from the type names', async () => {
    const d = await data(
      `{ erc20Token(id: "${token1}") { symbol } erc20Tokens { id } protocolStats(id: "s1") { id } protocolStats_collection { id } }`,
    );
    expect(d).toEqual({
      erc20Token: { symbol: 'ONE' },
      erc20Tokens: [{ id: token1 }, { id: token2 }],
      protocolStats: { id: 's1' },
      protocolStats_collection: [{ id: 's1' }, { id: 's2' }],
    });
  });
});

describe('a reference to a Bytes-id entity', () => {
  it("is searched for bytes anywhere in the id with _contains, as graph-node's position() does", async () => {
    const where = (filter: string) => `{ protocolStats_collection(where: { ${filter} }) { id } }`;
    expect(await ids(where('mainToken_contains: "0x1122"'))).toEqual(['s1']);
    // a null reference is neither
    expect(await ids(where('mainToken_not_contains: "0x1122"'))).toEqual([]);
    expect(await ids(where('mainToken_not_contains: "0x3333"'))).toEqual(['s1']);
  });

  it('refuses the _starts_with and _ends_with operators its filter has, as graph-node fails them, naming what to use', async () => {
    // graph-node's store compares the bytea column with a text pattern (`bytea ~~ text`), which
    // Postgres has no operator for
    const operators = ['starts_with', 'ends_with'].flatMap((kind) =>
      [kind, `${kind}_nocase`].flatMap((op) => [op, `not_${op}`]),
    );
    expect(operators).toHaveLength(8);
    for (const op of operators) {
      expect(await errorOf(`{ protocolStats_collection(where: { mainToken_${op}: "0x1111" }) { id } }`)).toBe(
        `\`mainToken_${op}\` cannot filter \`mainToken\`: it refers to \`ERC20Token\` by a Bytes id, which cannot be matched as text. ` +
          'Use `mainToken_contains` or `mainToken_not_contains` for bytes anywhere in the id, ' +
          'or `mainToken_gte` with `mainToken_lt` for a prefix (the ids from 0x12 up to 0x13 are those starting with 0x12)',
      );
    }
  });

  it('is matched by a prefix with the range the refusal of _starts_with names', async () => {
    const where = (filter: string) => `{ protocolStats_collection(where: { ${filter} }) { id } }`;
    expect(await ids(where('mainToken_gte: "0x1111", mainToken_lt: "0x1112"'))).toEqual(['s1']);
    expect(await ids(where('mainToken_gte: "0x1122", mainToken_lt: "0x1123"'))).toEqual([]);
  });

  it('has no case-insensitive _contains: graph-node refuses it for bytes', async () => {
    expect(
      await errorOf('{ protocolStats_collection(where: { mainToken_contains_nocase: "0x1122" }) { id } }'),
    ).toBe('Store error: unsupported filter `contains_nocase` for value `0x1122`');
  });
});

describe('lists', () => {
  const stats = (filter: string) => ids(`{ protocolStats_collection(where: { ${filter} }) { id } }`);

  it('compare BigDecimals as numbers, as graph-node compares numeric arrays', async () => {
    expect(await stats('prices: ["2.0", "0.50"]')).toEqual(['s1']);
    expect(await stats('prices_contains: ["2.00"]')).toEqual(['s1']);
    expect(await stats('prices_not_contains: ["1E1"]')).toEqual(['s1']);
    // graph-node takes number literals for BigDecimals too
    expect(await stats('prices: [2, 0.5]')).toEqual(['s1']);
    expect(await stats('prices_contains: [1.0e1]')).toEqual(['s2']);
  });

  it('match _contains_nocase items as patterns, and count a null list as not containing them', async () => {
    expect(await stats('tags_contains_nocase: ["a%"]')).toEqual(['s1']);
    expect(await stats('tags_not_contains_nocase: ["ALPHA"]')).toEqual(['s2']);
    // graph-node's `not (tags && ...)` is null, so false, on a null list
    expect(await stats('tags_not_contains: ["Alpha"]')).toEqual([]);
  });

  it('of references have _nocase forms only for String ids, as graph-node generates them', async () => {
    expect(await stats('owners_contains_nocase: ["O1"]')).toEqual(['s1']);
    expect(
      await errorOf('{ protocolStats_collection(where: { tokens_contains_nocase: ["0x11"] }) { id } }'),
    ).toContain('Field "tokens_contains_nocase" is not defined by type "ProtocolStats_filter"');
  });
});

describe('a one-to-one @derivedFrom field', () => {
  const ambiguous =
    'Ambiguous result for derived field `token`: Multiple `ERC20Token` entities refer back via `owner`';

  it('is the one entity referring back, or null when none does', async () => {
    expect(await data('{ owner(id: "o2") { token { id } } }')).toEqual({ owner: { token: null } });
  });

  it("is graph-node's error when two entities refer back, and its group answers no data", async () => {
    expect(await queryAnswer(url, '{ owner(id: "o1") { token { id } } }')).toEqual({
      errors: [expect.objectContaining({ message: ambiguous })],
    });
    // a field with another block argument is another group, whose data graph-node keeps
    const answer = await queryAnswer(
      url,
      '{ a: owner(id: "o1") { token { id } } b: owner(id: "o2", block: { number: 5 }) { id } }',
    );
    expect(answer).toEqual({
      data: { b: { id: 'o2' } },
      errors: [expect.objectContaining({ message: ambiguous })],
    });
  });
});
