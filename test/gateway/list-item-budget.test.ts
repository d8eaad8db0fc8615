// The budget of list items a /graphql document may ask for (gateway/list-item-budget.ts): how the
// estimate counts limits, defaults, variables, registry lists, pages, aliases and fragments; that
// every document of the REST route table and of the documents passes with room (their estimates are
// printed); and that a document over it is refused before anything runs. The rule reads the schema
// and the registry only, so no upstream takes part.
import { getIntrospectionQuery, isObjectType, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  estimateListItems,
  LIMIT_MAXIMA,
  listItemBudget,
  MAX_LIST_ITEMS,
  UNPAGED_LIST_ITEMS,
} from '../../gateway/list-item-budget.ts';
import { noDividendRoundMessage, unknownSlugMessage, type SlugResource } from '../../gateway/inputs.ts';
import { schema } from '../../gateway/schema.ts';
import { loadRegistry } from '../../gateway/sources/registry.ts';
import { DEVNET_EXAMPLES } from '../../rest/examples.ts';
import { graphqlExampleQuery } from '../../rest/openapi.ts';
import { ROUTES } from '../../rest/routes.ts';
import { REGISTRY_FILE, registryOnlyGateway } from '../harness/stack.ts';

const registry = loadRegistry(REGISTRY_FILE);
const FUNDS = registry.funds.length;

/** the items the document's only operation asks for, and by which list */
function estimate(document: string) {
  const [operation] = estimateListItems(schema, parse(document), registry);
  if (!operation) throw new Error('the document has no operation');
  return { total: operation.total, byField: Object.fromEntries(operation.byField) };
}

/** the errors of the budget rule alone */
const refusals = (document: string, budget = MAX_LIST_ITEMS) =>
  validate(schema, parse(document), [listItemBudget(registry, budget)]).map((e) => e.message);

const NAV = 'epoch navPerShare totalAssets totalSupply publishedAt status onchainTxHash';
const ROUND =
  'fund epoch merkleRoot total leafCount uri claimedCount claimedAmount postedAt postedBlock postedTxHash';
/** the audit's document: 15 aliases of every fund's longest NAV history and largest dividend page */
const AUDITED = `{ ${Array.from(
  { length: 15 },
  (_, i) =>
    `a${i}: funds { navHistory(limit: 500) { ${NAV} } dividends(limit: 100) { items { ${ROUND} } nextCursor } }`,
).join(' ')} }`;

/** the GraphQL query a not-found message tells the client to list the valid values with */
const listingQuery = (message: string) => {
  const query = message.split('the GraphQL query ')[1]?.split(/\.( |$)/)[0];
  if (!query) throw new Error(`no GraphQL query in: ${message}`);
  return query;
};

describe('the estimate', () => {
  it("counts a limit argument's literal value, and its schema default when it is absent", () => {
    expect(estimate('{ fund(slug: "f") { navHistory(limit: 30) { epoch } } }').total).toBe(30);
    expect(estimate('{ fund(slug: "f") { navHistory { epoch } } }').total).toBe(90);
    expect(estimate('{ events { items { id } } }').total).toBe(20);
  });

  it('counts a limit given as a variable, or over the maximum, as the largest the field accepts', () => {
    expect(estimate('query($l: Int) { fund(slug: "f") { navHistory(limit: $l) { epoch } } }').total).toBe(
      500,
    );
    expect(estimate('query($l: Int = 5) { events(limit: $l) { items { id } } }').total).toBe(100);
    expect(estimate('{ fund(slug: "f") { dividends(limit: 100000) { items { epoch } } } }').total).toBe(100);
  });

  it('counts a list without a limit as the number of its items the registry lists', () => {
    expect(estimate('{ funds { slug } strategies { slug } contracts { name } policies { slug } }')).toEqual({
      total:
        registry.funds.length +
        registry.strategies.length +
        registry.contracts.length +
        registry.policies.length,
      byField: {
        'Query.funds': registry.funds.length,
        'Query.strategies': registry.strategies.length,
        'Query.contracts': registry.contracts.length,
        'Query.policies': registry.policies.length,
      },
    });
  });

  it('counts any other list without a limit as UNPAGED_LIST_ITEMS', () => {
    expect(estimate('{ health { pausedModules } }').total).toBe(UNPAGED_LIST_ITEMS);
  });

  it('multiplies a list by the sizes of the lists it is nested in', () => {
    expect(
      estimate('{ funds { navHistory(limit: 10) { epoch } allocations { strategies { strategy } } } }'),
    ).toEqual({
      total: FUNDS + FUNDS * 10 + FUNDS * UNPAGED_LIST_ITEMS,
      byField: {
        'Query.funds': FUNDS,
        'Fund.navHistory': FUNDS * 10,
        'Allocations.strategies': FUNDS * UNPAGED_LIST_ITEMS,
      },
    });
  });

  it("counts a page's items as its page size, under the paged field", () => {
    expect(estimate('{ fund(slug: "f") { dividends(limit: 7) { items { epoch } nextCursor } } }')).toEqual({
      total: 7,
      byField: { 'Fund.dividends': 7 },
    });
  });

  it('counts every alias apart', () => {
    expect(
      estimate('{ fund(slug: "f") { a: navHistory(limit: 5) { epoch } b: navHistory { epoch } } }').total,
    ).toBe(95);
  });

  it('counts a fragment once for each spread, with the page it sits in', () => {
    const document = `{ fund(slug: "f") { a: dividends(limit: 5) { ...Rounds } b: dividends { ...Rounds } } }
      fragment Rounds on DividendRoundPage { items { epoch } }`;
    expect(estimate(document).total).toBe(5 + 20);
  });

  it('walks a fragment once however many times it is spread, so nesting spreads costs no more than the text', () => {
    // each fragment spreads the one below it twice: 2^40 NAV histories of one item under each fund
    const fragments = Array.from(
      { length: 40 },
      (_, i) => `fragment F${i + 1} on Fund { ...F${i} ...F${i} }`,
    ).join(' ');
    const document = `{ funds { ...F40 } } fragment F0 on Fund { navHistory(limit: 1) { epoch } } ${fragments}`;
    expect(estimate(document).total).toBe(FUNDS + FUNDS * 2 ** 40);
  });

  it('leaves introspection out: it answers from the fixed schema, under the armor limits', () => {
    expect(estimate(getIntrospectionQuery()).total).toBe(0);
  });

  it('knows the largest value of every limit argument in the schema, and each default is within it', () => {
    const limits = Object.values(schema.getTypeMap())
      .filter(isObjectType)
      .flatMap((type) =>
        Object.values(type.getFields()).flatMap((field) =>
          field.args
            .filter((arg) => arg.name === 'limit')
            .map((arg) => ({ coordinate: `${type.name}.${field.name}`, default: arg.defaultValue })),
        ),
      );
    expect(limits.map((l) => l.coordinate).sort()).toEqual(Object.keys(LIMIT_MAXIMA).sort());
    for (const limit of limits) {
      expect(limit.default, limit.coordinate).toBeLessThanOrEqual(LIMIT_MAXIMA[limit.coordinate] ?? 0);
    }
  });
});

describe('the budget', () => {
  it('admits every document of the REST route table with room: each asks for at most a quarter of it', () => {
    const estimates = ROUTES.map((route) => ({
      route: route.operationId,
      items: estimate(route.document).total,
    }));
    console.log(`list items per route document (budget ${MAX_LIST_ITEMS}):`);
    console.table(estimates);
    for (const { route, items } of estimates) {
      expect(items, route).toBeLessThanOrEqual(MAX_LIST_ITEMS / 4);
    }
  });

  it('admits the queries the documents and error messages show, and the introspection query, with room', () => {
    const documented = [
      graphqlExampleQuery(DEVNET_EXAMPLES),
      ...(['fund', 'strategy', 'policy'] as SlugResource[]).map((resource) =>
        listingQuery(unknownSlugMessage(resource, 'nope')),
      ),
      listingQuery(noDividendRoundMessage(DEVNET_EXAMPLES.fund.slug, 3)),
      getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true }),
    ];
    const estimates = documented.map((document) => ({ document, items: estimate(document).total }));
    console.log(`list items per documented query (budget ${MAX_LIST_ITEMS}):`);
    console.table(estimates.map(({ document, items }) => ({ document: document.slice(0, 70), items })));
    for (const { document, items } of estimates) {
      expect(items, document).toBeLessThanOrEqual(MAX_LIST_ITEMS / 4);
    }
  });

  it('admits a document asking for exactly the budget and refuses one item more', () => {
    const navs = (n: number) =>
      Array.from({ length: n }, (_, i) => `h${i}: navHistory(limit: 500) { epoch }`).join(' ');
    expect(estimate(`{ fund(slug: "f") { ${navs(4)} } }`).total).toBe(MAX_LIST_ITEMS);
    expect(refusals(`{ fund(slug: "f") { ${navs(4)} } }`)).toEqual([]);
    expect(refusals(`{ fund(slug: "f") { ${navs(4)} } policies { slug } }`)).toHaveLength(1);
  });

  it("refuses the audit's 15-alias document, which passed every armor limit", () => {
    const { total, byField } = estimate(AUDITED);
    console.log(`the audited document asks for ${total} list items (budget ${MAX_LIST_ITEMS})`);
    expect(total).toBe(15 * (FUNDS + FUNDS * 500 + FUNDS * 100));
    expect(byField).toEqual({
      'Query.funds': 15 * FUNDS,
      'Fund.navHistory': 15 * FUNDS * 500,
      'Fund.dividends': 15 * FUNDS * 100,
    });
    expect(refusals(AUDITED)).toHaveLength(1);
  });

  it('answers a document over it on /graphql with BAD_INPUT and 400, naming the estimate, the budget and how to ask for less', async () => {
    const gateway = registryOnlyGateway();
    const response = await gateway.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: AUDITED }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [
        {
          message:
            'This query asks for up to 27,045 list items (Fund.navHistory 22,500, Fund.dividends 4,500, Query.funds 45), over the limit of 2,000 per query. Each list counts its limit argument (or its default; a variable counts as the largest limit allowed) times the lists it is nested in, and every alias counts apart. Ask for less: lower the limits, select fewer aliases or lists, or split the query into several smaller ones.',
          locations: [{ line: 1, column: 1 }],
          extensions: { code: 'BAD_INPUT' },
        },
      ],
    });
  });

  it('names the operation over the budget when it has a name', () => {
    expect(refusals('query Histories { funds { navHistory(limit: 500) { epoch } } }', 1000)[0]).toMatch(
      /^The query Histories asks for up to 1,503 list items \(Fund\.navHistory 1,500, Query\.funds 3\), over the limit of 1,000 per query\./,
    );
  });
});
