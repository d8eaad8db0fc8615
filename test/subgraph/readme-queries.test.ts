// README's "Querying it directly" shows a direct GraphQL user what to ask the subgraph; each of its
// queries is run here against the indexed devnet scenario, so an example that stops working (a renamed
// field, an address or epoch the scenario no longer has) fails a test instead of misleading a reader.
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { queryGraphQL } from './subgraph-reader.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The text of a README section: from its heading to the next heading of the same or a higher level. */
function section(heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no section ${heading}`);
  const level = heading.indexOf(' ');
  const rest = readme.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{1,${level}} `));
  return next < 0 ? rest : rest.slice(0, next);
}

const queries = [...section('### Querying it directly').matchAll(/```graphql\n([\s\S]*?)```/g)].map(
  (m) => m[1]!,
);

/** A top-level answer a reader would take for "nothing there": null, an empty list, or a list of nulls. */
const isEmpty = (value: unknown): boolean =>
  value === null || (Array.isArray(value) && (value.length === 0 || value.every((v) => v === null)));

describe("README's direct subgraph queries", () => {
  it('are there to check', () => {
    expect(queries.length).toBeGreaterThanOrEqual(6);
  });

  it.each(queries.map((query) => [query.split('\n')[1]!.trim(), query]))(
    'answer %s without errors and with data in every field',
    async (_first, query) => {
      const data = await queryGraphQL(inject('indexer').queryUrl, query);
      const empty = Object.entries(data)
        .filter(([, value]) => isEmpty(value))
        .map(([field]) => field);
      expect(empty).toEqual([]);
    },
  );
});
