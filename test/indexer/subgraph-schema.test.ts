// What the embedded indexer reads from a subgraph schema's interfaces, and what it refuses: the
// interface errors graph-node's validation gives, and the features graph-node serves that the
// embedded indexer does not, each named, rather than a subgraph that loads and then lacks them.
import { describe, expect, it } from 'vitest';
import { parseSubgraphSchema } from '../../indexer/subgraph-schema.ts';

const token = 'type Token @entity(immutable: true) { id: ID! owner: Bytes! }';

describe('subgraph schemas the embedded indexer refuses', () => {
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

describe('graph-node’s schema validations, in its words', () => {
  it.each([
    [
      'a type without @entity',
      `${token} type Extra { id: ID! }`,
      '@entity directive missing on the following types: `Extra`',
    ],
    [
      'a reserved type name',
      `${token} type Query @entity { id: ID! }`,
      'The following type names are reserved: `Query`',
    ],
    [
      'a generated type name',
      `${token} type Token_filter @entity { id: ID! }`,
      'The following type names are reserved: `Token_filter`',
    ],
    ['an entity without id', 'type Sale @entity { price: Int! }', 'Type Sale is missing an `id` field'],
    [
      'an illegal id type',
      'type Sale @entity { id: BigInt! }',
      'Entity type Sale uses illegal type BigInt for id column',
    ],
    [
      'an undefined field type',
      'type Sale @entity { id: ID! buyer: Person! }',
      'Type `Sale`, field `buyer`: type `Person` is not defined',
    ],
    [
      '_Schema_ with fields',
      `${token} type _Schema_ { id: ID! }`,
      '_Schema_ type is only for @fulltext and must not have any fields',
    ],
    [
      '_Schema_ with another directive',
      `${token} type _Schema_ @entity`,
      'The _Schema_ type only allows @fulltext directives',
    ],
    [
      '@derivedFrom without a field',
      `${token} type Holder @entity { id: ID! tokens: [Token!]! @derivedFrom }`,
      'Field `tokens` in type `Holder` has invalid @derivedFrom: the @derivedFrom directive must have a `field` argument',
    ],
    [
      '@derivedFrom naming a missing field',
      `${token} type Holder @entity { id: ID! tokens: [Token!]! @derivedFrom(field: "holder") }`,
      'Field `tokens` in type `Holder` has invalid @derivedFrom: field `holder` does not exist on type `Token`',
    ],
    [
      '@derivedFrom of a field pointing elsewhere',
      `${token} type Holder @entity { id: ID! tokens: [Token!]! @derivedFrom(field: "owner") }`,
      'Field `tokens` in type `Holder` has invalid @derivedFrom: field `owner` on type `Token` must have one of the following types: Holder, Holder!, [Holder!], [Holder!]!',
    ],
  ])('refuses %s', (_case, sdl, message) => {
    expect(() => parseSubgraphSchema(sdl)).toThrow(message);
  });

  it('accepts Int8 ids from specVersion 1.1.0 on, and refuses them before', () => {
    const sdl = 'type Tick @entity { id: Int8! }';
    expect(parseSubgraphSchema(sdl, '1.1.0').entities.get('Tick')?.idKind).toBe('Int8');
    expect(() => parseSubgraphSchema(sdl, '1.0.0')).toThrow(
      'Using Int8 as the type for the `id` field is not supported with spec version 1.0.0; please migrate the subgraph to the latest version',
    );
  });

  it('accepts @derivedFrom of a field pointing back, or of the target’s id', () => {
    const sdl = `type Token @entity { id: ID! owner: Holder! } type Holder @entity { id: ID! tokens: [Token!]! @derivedFrom(field: "owner") self: [Token!]! @derivedFrom(field: "id") }`;
    expect(
      [...parseSubgraphSchema(sdl).entities.get('Holder')!.fields.values()].map((f) => f.derivedFrom),
    ).toEqual([undefined, 'owner', 'id']);
  });
});

describe('@entity arguments', () => {
  it('reads immutable and skipDuplicates, both false unless set', () => {
    const schema = parseSubgraphSchema(
      `${token} type Sale @entity(immutable: true, skipDuplicates: true) { id: ID! } type Holder @entity { id: ID! }`,
    );
    const flags = [...schema.entities.values()].map((e) => [e.name, e.immutable, e.skipDuplicates]);
    expect(flags).toEqual([
      ['Token', true, false],
      ['Sale', true, true],
      ['Holder', false, false],
    ]);
  });

  it('refuses skipDuplicates on a mutable entity type, in graph-node’s words', () => {
    expect(() => parseSubgraphSchema('type Sale @entity(skipDuplicates: true) { id: ID! }')).toThrow(
      'Entity type `Sale` has skipDuplicates: true but is not immutable; skipDuplicates requires immutable: true',
    );
  });

  it('refuses an argument that is not a boolean, naming it', () => {
    expect(() => parseSubgraphSchema('type Sale @entity(immutable: "yes") { id: ID! }')).toThrow(
      'The `immutable` argument of the @entity directive must be a boolean',
    );
  });
});

describe('interfaces in a subgraph schema', () => {
  const notes = `
    interface Note { id: ID! text: String! }
    interface Dated { id: ID! at: BigInt! }
    type TextNote implements Note & Dated @entity { id: ID! text: String! at: BigInt! words: Int! }
    type VoiceNote implements Note @entity(immutable: true) { id: ID! text: String! seconds: Int! }
    type Memo @entity { id: ID! }
    interface Unused { id: ID! }
    type Board @entity { id: ID! pinned: Note, notes: [Note!]! @derivedFrom(field: "id") }
  `;

  it('lists each interface’s fields and implementers, and their shared id kind', () => {
    const schema = parseSubgraphSchema(notes);
    const note = schema.interfaces.get('Note')!;
    expect([...note.fields.keys()]).toEqual(['id', 'text']);
    expect(note.implementers).toEqual(['TextNote', 'VoiceNote']);
    expect(note.idKind).toBe('String');
    expect(schema.interfaces.get('Dated')!.implementers).toEqual(['TextNote']);
    expect(schema.entities.get('TextNote')!.interfaces).toEqual(['Note', 'Dated']);
  });

  it('knows which entity types may not share an id, through any common interface', () => {
    const schema = parseSubgraphSchema(notes);
    expect(schema.entities.get('TextNote')!.sharesIdsWith).toEqual(['VoiceNote']);
    expect(schema.entities.get('VoiceNote')!.sharesIdsWith).toEqual(['TextNote']);
    expect(schema.entities.get('Memo')!.sharesIdsWith).toEqual([]);
  });

  it('reads a field of an interface type as a reference, and an unimplemented interface as String ids', () => {
    const schema = parseSubgraphSchema(notes);
    const pinned = schema.entities.get('Board')!.fields.get('pinned')!;
    expect([pinned.kind, pinned.typeName]).toEqual(['Entity', 'Note']);
    expect(schema.interfaces.get('Unused')!.idKind).toBe('String');
    expect(schema.interfaces.get('Unused')!.implementers).toEqual([]);
  });

  it('refuses an entity implementing an interface the schema does not define', () => {
    expect(() => parseSubgraphSchema('type Transfer implements Event @entity { id: ID! }')).toThrow(
      'Interface `Event` not defined',
    );
  });

  it('refuses an implementer missing interface fields, or declaring them with another type, listing them', () => {
    expect(() =>
      parseSubgraphSchema(`
        interface Event { id: ID! block: BigInt! tags: [String!]! }
        type Transfer implements Event @entity { id: ID! block: Int! tags: [String!]! }
      `),
    ).toThrow(
      'Entity type `Transfer` does not satisfy interface `Event` because it is missing the following fields: block: BigInt!',
    );
    expect(() =>
      parseSubgraphSchema(`
        interface Event { id: ID! block: BigInt! tags: [String!]! }
        type Transfer implements Event @entity { id: ID! }
      `),
    ).toThrow('is missing the following fields: block: BigInt!, tags: [String!]!');
  });

  it('refuses implementers whose ids are of different types', () => {
    expect(() =>
      parseSubgraphSchema(`
        interface Event { block: BigInt! }
        type Transfer implements Event @entity { id: Bytes! block: BigInt! }
        type Mint implements Event @entity { id: ID! block: BigInt! }
      `),
    ).toThrow(
      'Implementors of interface `Event` use different id types `Bytes, String`. They must all use the same type',
    );
  });
});
