// Filter values of any number and size, as graph-node (Postgres) takes them: `_in` and `_not_in`
// lists longer than the 32,766 parameters a SQLite statement takes, for every scalar kind; numbers
// beyond what the store can hold compared as numerics compare (greater or less than every stored
// value), with graph-node's own bounds refused in its words; `and`/`or` lists longer than SQLite's
// expression depth. The store holds twelve readings written straight through the store API;
// requests go through the real HTTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreValue } from '../../indexer/store/entity.ts';
import { parseSubgraphSchema } from '../../indexer/subgraph-schema.ts';
import { idsOf, queryErrorOf, type Variables } from './graphql-client.ts';
import { B, Bool, I, BI, S, entity, serveHistory, type ServedHistory } from './store-fixture.ts';

const schema = parseSubgraphSchema(`
  type Reading @entity(immutable: true) {
    id: ID!
    tag: String!
    raw: Bytes!
    flag: Boolean!
    small: Int!
    count: Int8!
    at: Timestamp!
    amount: BigDecimal!
    big: BigInt!
  }
`);

const READINGS = 12;
const id = (i: number) => `r${String(i).padStart(2, '0')}`;

/** Reading i's values, as filters give them; `big` is (i - 6) * 2^1000, near the largest the store holds. */
function values(i: number) {
  return {
    tag: `t${i}`,
    raw: `0x${i.toString(16).padStart(2, '0')}`,
    flag: i % 2 === 0,
    small: i * 10 - 50,
    count: String((BigInt(i) - 6n) * 10n ** 18n),
    at: String(1_700_000_000_000_000n + BigInt(i)),
    amount: `${i - 6}.5`,
    big: String((BigInt(i) - 6n) * 2n ** 1000n),
  };
}

let served: ServedHistory;

beforeAll(async () => {
  served = await serveHistory({
    schema,
    history: {
      1: (w) => {
        for (let i = 0; i < READINGS; i++) {
          const v = values(i);
          const fields: Record<string, StoreValue> = {
            id: S(id(i)),
            tag: S(v.tag),
            raw: B(v.raw),
            flag: Bool(v.flag),
            small: I(v.small),
            count: { kind: 'Int8', value: BigInt(v.count) },
            at: { kind: 'Timestamp', value: BigInt(v.at) },
            amount: { kind: 'BigDecimal', value: v.amount },
            big: BI(BigInt(v.big)),
          };
          w.set('Reading', id(i), entity(fields));
        }
      },
    },
    startBlock: 1,
    headSeen: 1,
    deployment: 'QmReadings',
    subgraphName: 'readings',
  });
});

afterAll(async () => {
  await served?.close();
});

/** The query for the readings matching `where`, declaring the variables `types`. */
const readingsQuery = (where: string, types = '') =>
  `query${types ? `(${types})` : ''} { readings(first: 1000, where: ${where}) { id } }`;

const ids = (where: string, variables?: Variables, types = '') =>
  idsOf(served.url, readingsQuery(where, types), variables);
const errorOf = (where: string) => queryErrorOf(served.url, readingsQuery(where));

const all = Array.from({ length: READINGS }, (_, i) => id(i));
const allBut = (...except: number[]) => all.filter((_, i) => !except.includes(i));

describe('query values: lists longer than a SQLite statement takes', () => {
  const LONG = 40_000;
  // per field: its GraphQL type, and the n-th value of a list that matches no reading
  const kinds: [keyof ReturnType<typeof values>, string, (n: number) => unknown][] = [
    ['tag', 'String', (n) => `none${n}`],
    ['raw', 'Bytes', (n) => `0xff${n.toString(16).padStart(6, '0')}`],
    ['small', 'Int', (n) => 1_000 + n],
    ['count', 'Int8', (n) => String(7n * 10n ** 18n + BigInt(n))],
    ['at', 'Timestamp', (n) => String(1_800_000_000_000_000n + BigInt(n))],
    ['amount', 'BigDecimal', (n) => `${n}.25`],
    ['big', 'BigInt', (n) => String(n + 1)],
  ];

  it.each(kinds)(
    'matches an _in of 40,000 values on %s, and its _not_in the rest',
    async (field, type, other) => {
      const list: unknown[] = [values(3)[field], values(7)[field]];
      for (let n = 0; list.length < LONG; n++) list.push(other(n));
      const types = `$list: [${type}!]`;
      expect(await ids(`{ ${field}_in: $list }`, { list }, types)).toEqual([id(3), id(7)]);
      expect(await ids(`{ ${field}_not_in: $list }`, { list }, types)).toEqual(allBut(3, 7));
    },
  );

  it('matches a Boolean _in of 40,000 values', async () => {
    const list = Array.from({ length: LONG }, () => false);
    expect(await ids('{ flag_in: $list }', { list }, '$list: [Boolean!]')).toEqual(
      all.filter((_, i) => i % 2 === 1),
    );
  });
});

describe('query values: numbers beyond what the store holds', () => {
  const huge = '9'.repeat(100_000);

  it('finds no stored BigInt greater than, or equal to, a number of 100,000 digits', async () => {
    expect(await ids(`{ big_gt: "${huge}" }`)).toEqual([]);
    expect(await ids(`{ big_gte: "${huge}" }`)).toEqual([]);
    expect(await ids(`{ big: "${huge}" }`)).toEqual([]);
    expect(await ids(`{ big_in: ["${huge}", "-${huge}"] }`)).toEqual([]);
  });

  it('finds every stored BigInt less than, and different from, a number of 100,000 digits', async () => {
    expect(await ids(`{ big_lt: "${huge}" }`)).toEqual(all);
    expect(await ids(`{ big_lte: "${huge}" }`)).toEqual(all);
    expect(await ids(`{ big_not: "${huge}" }`)).toEqual(all);
    expect(await ids(`{ big_not_in: ["${huge}"] }`)).toEqual(all);
  });

  it('finds every stored BigInt greater than a negative number of 100,000 digits, and none less', async () => {
    expect(await ids(`{ big_gt: "-${huge}" }`)).toEqual(all);
    expect(await ids(`{ big_lt: "-${huge}" }`)).toEqual([]);
  });

  it('compares at the edge of what the store holds, 127 bytes of magnitude', async () => {
    const first = 2n ** 1016n; // the first number of 128 bytes
    expect(await ids(`{ big_lt: "${first}" }`)).toEqual(all);
    expect(await ids(`{ big_gte: "${first - 1n}" }`)).toEqual([]);
    expect(await ids(`{ big_gt: "${-first}" }`)).toEqual(all);
    expect(await ids(`{ big_lte: "${-(first - 1n)}" }`)).toEqual([]);
  });

  it('still matches the stored values beside a number too large to store in one list', async () => {
    expect(await ids(`{ big_in: ["${huge}", "${values(6).big}"] }`)).toEqual([id(6)]);
  });

  it("refuses a BigInt of more than graph-node's 435,412 bits, in its words", async () => {
    const tooBig = 10n ** 131_100n;
    const bits = tooBig.toString(2).length + 1;
    expect(bits).toBeGreaterThan(435_412);
    expect(await errorOf(`{ big_gt: "${tooBig}" }`)).toBe(
      `Failed to decode \`BigInt\` value: \`BigInt is too big, total bits ${bits} (max 435412)\``,
    );
  });

  it("refuses an Int8 or a Timestamp beyond 64 bits, in graph-node's words", async () => {
    expect(await errorOf('{ count_gt: "9223372036854775808" }')).toBe(
      'Failed to decode `Int8` value: `9223372036854775808`',
    );
    expect(await errorOf('{ at_lt: "-9223372036854775809" }')).toBe(
      'Failed to decode `Timestamp` value: `-9223372036854775809`',
    );
    expect(await ids('{ count_lte: "9223372036854775807" }')).toEqual(all);
  });
});

describe('query values: wide and and or', () => {
  it('matches an or of 5,000 filters, longer than SQLite nests an expression', async () => {
    const operands = Array.from({ length: 5_000 }, (_, n) => `{ small: ${n === 0 ? -40 : 10_000 + n} }`);
    expect(await ids(`{ or: [${operands.join(', ')}] }`)).toEqual([id(1)]);
  });

  it('matches an and of 5,000 filters', async () => {
    const operands = Array.from({ length: 5_000 }, (_, n) => `{ small_not: ${10_000 + n} }`);
    expect(await ids(`{ and: [${operands.join(', ')}] }`)).toEqual(all);
  });

  it('refuses a filter of more values than a SQLite statement takes, saying to give lists to _in', async () => {
    const operands = Array.from({ length: 33_000 }, (_, n) => `{ small: ${n} }`);
    expect(await errorOf(`{ or: [${operands.join(',')}] }`)).toBe(
      'The filter holds 33000 values, more than the 32766 one query can take: give long lists of values to `_in` or `_not_in` (a list counts as one), or split the query',
    );
  });
});
