// What the embedded indexer refuses in a subgraph schema: the features graph-node serves that it
// does not, each named, rather than a subgraph that loads and then lacks them.
import { describe, expect, it } from 'vitest';
import { parseSubgraphSchema } from '../../indexer/subgraph-schema.ts';

const token = 'type Token @entity(immutable: true) { id: ID! owner: Bytes! }';

describe('subgraph schemas the embedded indexer refuses', () => {
  it('refuses an interface, naming it', () => {
    expect(() =>
      parseSubgraphSchema(`interface Event { id: ID! } type Transfer implements Event @entity { id: ID! }`),
    ).toThrow(
      'interface Event: an interface in a subgraph schema is not supported by the embedded indexer (graph-node supports it)',
    );
  });

  it('refuses timeseries entities and aggregations', () => {
    expect(() =>
      parseSubgraphSchema(
        'type Data @entity(timeseries: true) { id: Int8! timestamp: Timestamp! price: BigDecimal! }',
      ),
    ).toThrow(
      'type Data: a timeseries entity (@entity(timeseries: true)) is not supported by the embedded indexer',
    );
    expect(() =>
      parseSubgraphSchema(
        'type Stats @aggregation(intervals: ["hour"], source: "Data") { id: Int8! timestamp: Timestamp! }',
      ),
    ).toThrow('type Stats: an aggregation (@aggregation) is not supported by the embedded indexer');
  });

  it('refuses fulltext search', () => {
    expect(() =>
      parseSubgraphSchema(
        `${token} type _Schema_ @fulltext(name: "tokenSearch", language: en, algorithm: rank, include: [{ entity: "Token", fields: [{ name: "owner" }] }])`,
      ),
    ).toThrow('type _Schema_: fulltext search (@fulltext) is not supported by the embedded indexer');
  });

  it('accepts entities that are not timeseries, saying so or not', () => {
    const schema = parseSubgraphSchema(`${token} type Holder @entity(timeseries: false) { id: ID! }`);
    expect([...schema.entities.keys()]).toEqual(['Token', 'Holder']);
  });
});
