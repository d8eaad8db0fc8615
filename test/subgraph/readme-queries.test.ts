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

/**
 * Where an answer holds nothing a reader would take for an answer: a null or an empty list at any
 * depth (a reference that resolves to nothing, a derived list that lists nothing), by its path.
 */
function emptyPaths(value: unknown, path: string): string[] {
  if (value === null || (Array.isArray(value) && value.length === 0)) return [path];
  if (Array.isArray(value)) return value.flatMap((item, index) => emptyPaths(item, `${path}[${index}]`));
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([key, item]) =>
      emptyPaths(item, path ? `${path}.${key}` : key),
    );
  }
  return [];
}

describe("README's direct subgraph queries", () => {
  it('are there to check', () => {
    expect(queries.length).toBeGreaterThanOrEqual(6);
  });

  it.each(queries.map((query) => [query.split('\n')[1]!.trim(), query]))(
    'answer %s without errors, every field and nested field holding data',
    async (_first, query) => {
      const data = await queryGraphQL(inject('indexer').queryUrl, query);
      expect(emptyPaths(data, '')).toEqual([]);
    },
  );
});
