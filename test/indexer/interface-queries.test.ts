// The graph-node query dialect over a subgraph schema with interfaces: an interface's query fields
// list the entities of every implementer as one collection (ordered, paged and filtered across their
// tables, at any block), `__typename` and inline fragments tell them apart, and references, derived
// lists, nested filters and child orderings reach through an interface. The store holds a small known
// history written straight through the store API; requests go through the real HTTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entity, StoreValue } from '../../indexer/store/entity.ts';
import { parseSubgraphSchema } from '../../indexer/subgraph-schema.ts';
import { idsOf, queryErrorOf, queryIndexer } from './graphql-client.ts';
import { BI, I, L, S, entity, serveHistory, type BlockWrites, type ServedHistory } from './store-fixture.ts';

const schema = parseSubgraphSchema(`
  interface Note { id: ID! text: String! stars: Int board: Board }
  type TextNote implements Note @entity { id: ID! text: String! stars: Int board: Board words: Int! }
  type VoiceNote implements Note @entity { id: ID! text: String! stars: Int board: Board seconds: BigInt! }
  type Board @entity {
    id: ID!
    name: String!
    notes: [Note!]! @derivedFrom(field: "board")
    pinned: Note
    shortlist: [Note!]
  }
  type Reaction @entity(immutable: true) { id: ID! note: Note! emoji: String! }
  interface Unused { id: Bytes! }
`);

interface NoteInput {
  text: string;
  stars: number | null;
  board: string;
}

function note(id: string, n: NoteInput, own: Record<string, StoreValue>): Entity {
  const e = entity({ id: S(id), text: S(n.text), board: S(n.board), ...own });
  if (n.stars !== null) e.set('stars', I(n.stars));
  return e;
}

/**
 * Block 1: boards b1 and b2; TextNotes t1 and t2, VoiceNotes v1 and v2.
 * Block 2: t1 edited, v2 removed, VoiceNote a0 added; b1 pins v1 and shortlists t2, v1 and a missing
 * id; reactions to v1, t1 and t2.
 */
const history: BlockWrites = {
  1: (w) => {
    w.set('Board', 'b1', entity({ id: S('b1'), name: S('first') }));
    w.set('Board', 'b2', entity({ id: S('b2'), name: S('second') }));
    w.set('TextNote', 't1', note('t1', { text: 'alpha', stars: 3, board: 'b1' }, { words: I(10) }));
    w.set('VoiceNote', 'v1', note('v1', { text: 'beta', stars: 5, board: 'b1' }, { seconds: BI(20n) }));
    w.set('TextNote', 't2', note('t2', { text: 'gamma', stars: null, board: 'b2' }, { words: I(4) }));
    w.set('VoiceNote', 'v2', note('v2', { text: 'Alpha two', stars: 3, board: 'b2' }, { seconds: BI(7n) }));
  },
  2: (w) => {
    w.set('TextNote', 't1', note('t1', { text: 'alpha edited', stars: 1, board: 'b1' }, { words: I(12) }));
    w.remove('VoiceNote', 'v2');
    w.set('VoiceNote', 'a0', note('a0', { text: 'delta', stars: 4, board: 'b1' }, { seconds: BI(1n) }));
    w.set(
      'Board',
      'b1',
      entity({ id: S('b1'), name: S('first'), pinned: S('v1'), shortlist: L([S('t2'), S('v1'), S('gone')]) }),
    );
    w.set('Reaction', 'r1', entity({ id: S('r1'), note: S('v1'), emoji: S('+1') }));
    w.set('Reaction', 'r2', entity({ id: S('r2'), note: S('t1'), emoji: S('tada') }));
    w.set('Reaction', 'r3', entity({ id: S('r3'), note: S('t2'), emoji: S('eyes') }));
  },
};

let served: ServedHistory;
let url: string;

beforeAll(async () => {
  served = await serveHistory({
    schema,
    history,
    startBlock: 1,
    headSeen: 2,
    deployment: 'QmInterfaces',
    subgraphName: 'notes',
  });
  url = served.url;
});

afterAll(async () => {
  await served?.close();
});

const data = (text: string) => queryIndexer(url, text);
const errorOf = (text: string) => queryErrorOf(url, text);
const ids = (text: string) => idsOf(url, text);

describe('an interface’s collection', () => {
  it('lists the entities of every implementer in id order, each named by its own type', async () => {
    const d = await data('{ notes { id __typename } }');
    expect(d.notes).toEqual([
      { id: 'a0', __typename: 'VoiceNote' },
      { id: 't1', __typename: 'TextNote' },
      { id: 't2', __typename: 'TextNote' },
      { id: 'v1', __typename: 'VoiceNote' },
    ]);
  });

  it('gives each implementer’s own fields through inline fragments', async () => {
    const d = await data('{ notes { id text ... on TextNote { words } ... on VoiceNote { seconds } } }');
    expect(d.notes).toEqual([
      { id: 'a0', text: 'delta', seconds: '1' },
      { id: 't1', text: 'alpha edited', words: 12 },
      { id: 't2', text: 'gamma', words: 4 },
      { id: 'v1', text: 'beta', seconds: '20' },
    ]);
  });

  it('orders across the tables by a field, nulls last ascending and first descending', async () => {
    expect(await ids('{ notes(orderBy: stars) { id } }')).toEqual(['t1', 'a0', 'v1', 't2']);
    expect(await ids('{ notes(orderBy: stars, orderDirection: desc) { id } }')).toEqual([
      't2',
      'v1',
      'a0',
      't1',
    ]);
  });

  it('pages across the tables after ordering them as one', async () => {
    expect(await ids('{ notes(orderBy: stars, first: 2, skip: 1) { id } }')).toEqual(['a0', 'v1']);
    expect(await ids('{ notes(orderBy: text, orderDirection: desc, first: 1) { id } }')).toEqual(['t2']);
  });

  it('applies a where filter, with or, to every implementer', async () => {
    expect(await ids('{ notes(where: { text_starts_with_nocase: "ALPHA" }) { id } }')).toEqual(['t1']);
    expect(await ids('{ notes(where: { or: [{ stars_gte: 5 }, { stars: null }] }) { id } }')).toEqual([
      't2',
      'v1',
    ]);
    expect(await ids('{ notes(where: { board: "b1", stars_lt: 5 }) { id } }')).toEqual(['a0', 't1']);
  });

  it('lists the entities changed since a block across the tables', async () => {
    expect(await ids('{ notes(where: { _change_block: { number_gte: 2 } }) { id } }')).toEqual(['a0', 't1']);
  });

  it('reads every implementer at a past block', async () => {
    const d = await data(
      '{ notes(block: { number: 1 }, where: { text_starts_with_nocase: "alpha" }) { id text } }',
    );
    expect(d.notes).toEqual([
      { id: 't1', text: 'alpha' },
      { id: 'v2', text: 'Alpha two' },
    ]);
  });

  it('has no entities when nothing implements the interface', async () => {
    expect(await data('{ unuseds { id } unused(id: "0x01") { id } }')).toEqual({ unuseds: [], unused: null });
  });
});

describe('an interface’s single-entity field', () => {
  it('finds the entity in whichever implementer holds its id', async () => {
    const d = await data('{ v1: note(id: "v1") { __typename text } t2: note(id: "t2") { __typename text } }');
    expect(d).toEqual({
      v1: { __typename: 'VoiceNote', text: 'beta' },
      t2: { __typename: 'TextNote', text: 'gamma' },
    });
  });

  it('answers at a past block, and null where the entity is gone', async () => {
    const d = await data(
      '{ now: note(id: "v2") { text } then: note(id: "v2", block: { number: 1 }) { __typename text } }',
    );
    expect(d).toEqual({ now: null, then: { __typename: 'VoiceNote', text: 'Alpha two' } });
  });
});

describe('fields that reach through an interface', () => {
  it('resolves a reference to the entity of whichever implementer it names', async () => {
    const d = await data('{ board(id: "b1") { pinned { __typename id ... on VoiceNote { seconds } } } }');
    expect(d.board).toEqual({ pinned: { __typename: 'VoiceNote', id: 'v1', seconds: '20' } });
  });

  it('lists a list of references across the implementers, leaving out ids nothing holds', async () => {
    const d = await data('{ board(id: "b1") { shortlist { __typename id } } }');
    expect(d.board).toEqual({
      shortlist: [
        { __typename: 'TextNote', id: 't2' },
        { __typename: 'VoiceNote', id: 'v1' },
      ],
    });
  });

  it('lists a field derived from the implementers, with collection arguments', async () => {
    const d = await data('{ board(id: "b1") { notes(orderBy: text) { id text } } }');
    expect(d.board).toEqual({
      notes: [
        { id: 't1', text: 'alpha edited' },
        { id: 'v1', text: 'beta' },
        { id: 'a0', text: 'delta' },
      ],
    });
    const then = await data(
      '{ board(id: "b2", block: { number: 1 }) { notes(first: 1, orderBy: stars) { id } } }',
    );
    expect(then.board).toEqual({ notes: [{ id: 'v2' }] });
  });

  it('filters by a nested filter on a reference to an interface and on a list derived from one', async () => {
    expect(await ids('{ boards(where: { pinned_: { stars_gte: 5 } }) { id } }')).toEqual(['b1']);
    expect(await ids('{ boards(where: { notes_: { text_contains: "gamma" } }) { id } }')).toEqual(['b2']);
    expect(await ids('{ reactions(where: { note_: { board: "b2" } }) { id } }')).toEqual(['r3']);
  });

  it('filters a reference to an interface by id', async () => {
    expect(await ids('{ reactions(where: { note: "t2" }) { id } }')).toEqual(['r3']);
    expect(await ids('{ reactions(where: { note_in: ["t1", "v1"] }) { id } }')).toEqual(['r1', 'r2']);
  });

  it('orders by a field of the referenced entity, whichever implementer holds it', async () => {
    expect(await ids('{ reactions(orderBy: note__stars) { id } }')).toEqual(['r2', 'r1', 'r3']);
    expect(await ids('{ reactions(orderBy: note__text, orderDirection: desc) { id } }')).toEqual([
      'r3',
      'r1',
      'r2',
    ]);
  });
});

describe('the interface in the schema', () => {
  it('is an interface type whose possible types are its implementers', async () => {
    const d = await data('{ __type(name: "Note") { kind possibleTypes { name } fields { name } } }');
    expect(d.__type).toEqual({
      kind: 'INTERFACE',
      possibleTypes: [{ name: 'TextNote' }, { name: 'VoiceNote' }],
      fields: [{ name: 'id' }, { name: 'text' }, { name: 'stars' }, { name: 'board' }],
    });
  });

  it('rejects a filter on a field only an implementer has, and the caps, as for any collection', async () => {
    expect(await errorOf('{ notes(where: { words: 10 }) { id } }')).toContain(
      'Field "words" is not defined by type "Note_filter"',
    );
    expect(await errorOf('{ notes(first: 1001) { id } }')).toContain(
      'The `first` argument must be between 0 and 1000, but is 1001',
    );
    expect(await errorOf('{ unuseds(skip: -1) { id } }')).toContain(
      'The `skip` argument must be between 0 and 4294967295, but is -1',
    );
  });
});
