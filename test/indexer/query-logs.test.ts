// The `_logs` query field graph-node 0.44 adds to every subgraph's schema: present here with its
// arguments and types, and answered as graph-node answers it without a log store. Over the store
// fixture, through the real HTTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryAnswer, queryIndexer } from './graphql-client.ts';
import { serveFixture, vault1, type ServedFixture } from './store-fixture.ts';

let history: ServedFixture;

beforeAll(async () => {
  history = await serveFixture();
});

afterAll(() => history?.close());

const NOT_ENABLED =
  'Not supported: the `_logs` query is not enabled on this indexer; ' +
  "the mapping's warning, error and critical log lines are in the indexer's own log, as `mapping <level>: <message>`";
const COMBINED = 'The _logs query cannot be combined with other entity queries in the same request';

interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}

/** A type reference as SDL spells it: `[_Log_!]!`. */
function sdl(type: TypeRef): string {
  if (type.kind === 'NON_NULL') return `${sdl(type.ofType!)}!`;
  if (type.kind === 'LIST') return `[${sdl(type.ofType!)}]`;
  return type.name!;
}

const TYPE_REF = 'type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }';

describe('the _logs field', () => {
  it("is in the schema with graph-node's arguments and defaults", async () => {
    const d = await queryIndexer<{
      __type: {
        fields: {
          name: string;
          type: TypeRef;
          args: { name: string; type: TypeRef; defaultValue: string | null }[];
        }[];
      };
    }>(
      history.url,
      `{ __type(name: "Query") { fields { name ${TYPE_REF} args { name defaultValue ${TYPE_REF} } } } }`,
    );
    const logs = d.__type.fields.find((f) => f.name === '_logs')!;
    expect(sdl(logs.type)).toBe('[_Log_!]!');
    expect(logs.args.map((a) => [a.name, sdl(a.type), a.defaultValue])).toEqual([
      ['level', 'LogLevel', null],
      ['from', 'String', null],
      ['to', 'String', null],
      ['search', 'String', null],
      ['first', 'Int', '100'],
      ['skip', 'Int', '0'],
      ['orderDirection', 'OrderDirection', 'desc'],
    ]);
  });

  it("has graph-node's _Log_ and LogLevel types", async () => {
    const d = await queryIndexer<{
      log: { fields: { name: string; type: TypeRef }[] };
      level: { enumValues: { name: string }[] };
    }>(
      history.url,
      `{ log: __type(name: "_Log_") { fields { name ${TYPE_REF} } } level: __type(name: "LogLevel") { enumValues { name } } }`,
    );
    expect(d.log.fields.map((f) => [f.name, sdl(f.type)])).toEqual([
      ['id', 'String!'],
      ['subgraphId', 'String!'],
      ['timestamp', 'String!'],
      ['level', 'LogLevel!'],
      ['text', 'String!'],
      ['arguments', '[_LogArgument_!]!'],
      ['meta', '_LogMeta_!'],
    ]);
    expect(d.level.enumValues.map((v) => v.name)).toEqual(['CRITICAL', 'ERROR', 'WARNING', 'INFO', 'DEBUG']);
  });

  it('is answered that it is not enabled, alone or beside _meta and introspection, with no data', async () => {
    for (const query of [
      '{ _logs { id text } }',
      '{ __typename _meta { deployment } _logs(level: ERROR, first: 5) { id } }',
      '{ ...logs } fragment logs on Query { _logs { id } }',
    ]) {
      expect(await queryAnswer(history.url, query)).toEqual({ errors: [{ message: NOT_ENABLED }] });
    }
  });

  it('is refused beside an entity query, as graph-node refuses it, with no data', async () => {
    expect(await queryAnswer(history.url, `{ fund(id: "${vault1}") { slug } _logs { id } }`)).toEqual({
      errors: [{ message: COMBINED }],
    });
  });

  it('skipped by @skip or @include, leaves the rest of the query answered', async () => {
    const answer = await queryAnswer(
      history.url,
      `query($withLogs: Boolean!) { fund(id: "${vault1}") { slug } _logs @include(if: $withLogs) { id } }`,
      { withLogs: false },
    );
    expect(answer).toEqual({ data: { fund: { slug: 'alpha-income' } } });
  });
});
