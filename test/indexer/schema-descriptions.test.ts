// The query API carries schema.graphql's descriptions of entity types and fields, as graph-node's
// API schema does (it clones the subgraph's type definitions): a user or agent introspecting the
// subgraph reads what each entity and documented field means. Asked of the harness's indexer, which
// serves the project's subgraph.
import { describe, expect, inject, it } from 'vitest';
import { queryIndexer } from './graphql-client.ts';

interface TypeAnswer {
  __type: { description: string | null; fields: { name: string; description: string | null }[] };
}

const fund = () =>
  queryIndexer<TypeAnswer>(
    inject('indexer').queryUrl,
    '{ __type(name: "Fund") { description fields { name description } } }',
  );

describe("the query API's descriptions", () => {
  it('give an entity type the description schema.graphql gives it', async () => {
    const { __type } = await fund();
    expect(__type.description).toBe('A fund: one vault and its share token, registered in the FundRegistry.');
  });

  it('give a field its description, and none to a field schema.graphql leaves undescribed', async () => {
    const described = new Map((await fund()).__type.fields.map((f) => [f.name, f.description]));
    expect(described.get('latestNav')).toBe('the highest epoch drafted, whatever its status');
    expect(described.get('id')).toBe('vault address');
    expect(described.get('slug')).toBeNull();
  });
});
