// The query API carries schema.graphql's descriptions of entity types, fields and enums, as graph-node's
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

  it('give each field the description schema.graphql gives it', async () => {
    const described = new Map((await fund()).__type.fields.map((f) => [f.name, f.description]));
    expect(described.get('latestNav')).toBe('the highest epoch drafted, whatever its status');
    expect(described.get('id')).toBe('vault address');
    expect(described.get('closed')).toBe(
      'true once the vault closed to new subscriptions, for good; redemptions and settlement go on',
    );
  });

  it('give an enum type the description schema.graphql gives it', async () => {
    const { __type } = await queryIndexer<{ __type: { description: string | null } }>(
      inject('indexer').queryUrl,
      '{ __type(name: "NavStatus") { description } }',
    );
    expect(__type.description).toBe(
      "Where a NAV record is: Draft (drafted, or sent back), PendingVerification (submitted), Verified (by the verifier), Published (final, the fund's NAV).",
    );
  });

  it('leave no entity type or field of the subgraph undescribed', async () => {
    const { __schema } = await queryIndexer<{
      __schema: {
        types: {
          name: string;
          kind: string;
          description: string | null;
          fields: { name: string; description: string | null }[] | null;
        }[];
      };
    }>(
      inject('indexer').queryUrl,
      '{ __schema { types { name kind description fields { name description } } } }',
    );
    const entityNames = [
      'Fund',
      'NavRecord',
      'DividendRound',
      'DividendClaim',
      'StrategyAllocation',
      'AllocationChange',
      'Settlement',
      'ProtocolEvent',
    ];
    const undescribed = __schema.types
      .filter((t) => entityNames.includes(t.name))
      .flatMap((t) => [
        ...(t.description ? [] : [t.name]),
        ...(t.fields ?? []).filter((f) => !f.description).map((f) => `${t.name}.${f.name}`),
      ]);
    expect(undescribed).toEqual([]);
  });
});
