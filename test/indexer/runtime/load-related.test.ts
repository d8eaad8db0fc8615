// store.loadRelated, graph-node's lookup of the entities behind a @derivedFrom field as the running
// block sees them: first the store side (current versions read by reference, the block's pending
// writes laid over them, graph-node's key order) on a real SQLite store, then the host function as
// the probe subgraph's wasm calls it, with in-block writes, removals and graph-node's errors.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entity, StoreValue } from '../../../indexer/store/entity.ts';
import { relatedEntities } from '../../../indexer/store/related-entities.ts';
import type { BlockWriteBuffer } from '../../../indexer/store/block-write-buffer.ts';
import { openStore, type IndexerStore } from '../../../indexer/store/sqlite-store.ts';
import { parseSubgraphSchema } from '../../../indexer/subgraph-schema.ts';
import { commitBlock, header } from '../store-fixture.ts';
import { useProbeHarness } from './runtime-harness.ts';

const schema = parseSubgraphSchema(`
  type Account @entity(immutable: false) { id: Bytes!, holdings: [Holding!]! @derivedFrom(field: "account") }
  type Holding @entity(immutable: false) { id: ID!, account: Account!, amount: BigInt!, tags: [String!] }
  type Ledger @entity(immutable: false) { id: Int8!, entries: [Entry!]! @derivedFrom(field: "ledger") }
  type Entry @entity(immutable: true) { id: Int8!, ledger: Ledger! }
`);

const Bytes = (hex: string): StoreValue => ({
  kind: 'Bytes',
  value: Uint8Array.from(Buffer.from(hex.slice(2), 'hex')),
});
const accountA = '0x' + 'aa'.repeat(20);
const accountB = '0x' + 'bb'.repeat(20);

function holding(id: string, account: string, amount: bigint): Entity {
  return new Map<string, StoreValue>([
    ['id', { kind: 'String', value: id }],
    ['account', Bytes(account)],
    ['amount', { kind: 'BigInt', value: amount }],
  ]);
}

function entry(id: bigint, ledger: bigint): Entity {
  return new Map<string, StoreValue>([
    ['id', { kind: 'Int8', value: id }],
    ['ledger', { kind: 'Int8', value: ledger }],
  ]);
}

const ids = (entities: Entity[]) =>
  entities.map((e) => {
    const id = e.get('id')!;
    return id.kind === 'String' || id.kind === 'Int8' ? String(id.value) : id.kind;
  });

describe('related entities in the SQLite store', () => {
  let dir: string;
  let store: IndexerStore;
  let blockNumber = 0;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'related-entities-'));
    store = openStore({ path: join(dir, 'store.sqlite'), schema, startBlock: 0, deployment: 'related-test' });
    blockNumber = 0;
  });

  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes one committed block through the store's block write buffer. */
  function block(write: (tx: BlockWriteBuffer) => void): void {
    blockNumber += 1;
    commitBlock(store, header(blockNumber), null, write);
  }

  const none = new Map<string, Map<string, Entity | null>>();

  it('lists the current versions that reference the id, in id order, without closed versions', () => {
    block((tx) => {
      tx.set('Holding', 'h-b', holding('h-b', accountA, 1n));
      tx.set('Holding', 'h-a', holding('h-a', accountA, 2n));
      tx.set('Holding', 'h-c', holding('h-c', accountB, 3n));
    });
    block((tx) => tx.set('Holding', 'h-b', holding('h-b', accountA, 10n)));
    const related = relatedEntities(store, none, 'Holding', 'account', accountA);
    expect(related).toEqual([holding('h-a', accountA, 2n), holding('h-b', accountA, 10n)]);
    expect(ids(relatedEntities(store, none, 'Holding', 'account', accountB))).toEqual(['h-c']);
    expect(relatedEntities(store, none, 'Holding', 'account', '0x' + '0c'.repeat(20))).toEqual([]);
  });

  it('lays the block’s pending writes over the store: added and moved-in count, removed and moved-away do not', () => {
    block((tx) => {
      tx.set('Holding', 'h-a', holding('h-a', accountA, 1n));
      tx.set('Holding', 'h-b', holding('h-b', accountA, 2n));
      tx.set('Holding', 'h-c', holding('h-c', accountB, 3n));
    });
    const pending = new Map([
      [
        'Holding',
        new Map<string, Entity | null>([
          ['h-a', null],
          ['h-b', holding('h-b', accountB, 20n)],
          ['h-c', holding('h-c', accountA, 30n)],
          ['h-d', holding('h-d', accountA, 40n)],
        ]),
      ],
    ]);
    expect(relatedEntities(store, pending, 'Holding', 'account', accountA)).toEqual([
      holding('h-c', accountA, 30n),
      holding('h-d', accountA, 40n),
    ]);
    expect(relatedEntities(store, pending, 'Holding', 'account', accountB)).toEqual([
      holding('h-b', accountB, 20n),
    ]);
  });

  it('matches a Bytes reference whatever the hex case of the id, and a hex string a handler set', () => {
    block((tx) => tx.set('Holding', 'h-a', holding('h-a', accountA, 1n)));
    const moved = new Map<string, StoreValue>([
      ['id', { kind: 'String', value: 'h-s' }],
      ['account', { kind: 'String', value: accountA.toUpperCase().replace('0X', '0x') }],
      ['amount', { kind: 'BigInt', value: 5n }],
    ]);
    const pending = new Map([['Holding', new Map<string, Entity | null>([['h-s', moved]])]]);
    expect(ids(relatedEntities(store, pending, 'Holding', 'account', '0x' + 'AA'.repeat(20)))).toEqual([
      'h-a',
      'h-s',
    ]);
  });

  it('orders String ids by their UTF-8 bytes and Int8 ids by value, as graph-node’s entity keys', () => {
    // UTF-16 order would put the emoji (a surrogate pair) before the fullwidth tilde
    const names = ['b', '\u{1F600}', 'a', '\uFF5E', 'ä'];
    block((tx) => {
      for (const name of names) tx.set('Holding', name, holding(name, accountA, 1n));
      for (const n of [10n, 9n, -1n, 100n]) tx.set('Entry', String(n), entry(n, 7n));
    });
    expect(ids(relatedEntities(store, none, 'Holding', 'account', accountA))).toEqual([
      'a',
      'b',
      'ä',
      '\uFF5E',
      '\u{1F600}',
    ]);
    const pending = new Map([['Entry', new Map<string, Entity | null>([['2', entry(2n, 7n)]])]]);
    expect(ids(relatedEntities(store, pending, 'Entry', 'ledger', '7'))).toEqual([
      '-1',
      '2',
      '9',
      '10',
      '100',
    ]);
  });

  it('refuses a field that is not a single stored value', () => {
    expect(() => relatedEntities(store, none, 'Holding', 'tags', 'x')).toThrow(
      'Holding.tags is not a single-valued stored field',
    );
    expect(() => relatedEntities(store, none, 'Account', 'holdings', accountA)).toThrow(
      'Account.holdings is not a single-valued stored field',
    );
    expect(() => relatedEntities(store, none, 'Nope', 'account', accountA)).toThrow(
      'unknown entity type Nope',
    );
  });
});

describe('store.loadRelated through the probe wasm', () => {
  const harness = useProbeHarness();

  const script = (...commands: string[]) => harness().storeScript(...commands);
  const scriptError = (...commands: string[]) => harness().storeScriptError(...commands);

  it('lists the children stored in earlier blocks with all their fields, in id order', () => {
    script('set c2 p1 two', 'set c1 p1 one', 'set c3 p2 three');
    expect(script('load Parent p1 children', 'load Parent p2 children')).toEqual([
      '[c1:one:p1,c2:two:p1]',
      '[c3:three:p2]',
    ]);
  });

  it('sees the block’s own sets, moves and removals before they are stored, and the same after', () => {
    script('set m1 q1 one', 'set m2 q1 two', 'set m3 q2 three');
    expect(
      script(
        'set m4 q1 four',
        'set m2 q2 two-moved',
        'rm Child m1',
        'load Parent q1 children',
        'load Parent q2 children',
      ),
    ).toEqual(['[m4:four:q1]', '[m2:two-moved:q2,m3:three:q2]']);
    expect(script('load Parent q1 children', 'load Parent q2 children')).toEqual([
      '[m4:four:q1]',
      '[m2:two-moved:q2,m3:three:q2]',
    ]);
  });

  it('drops a child whose reference the block cleared, and lists nothing for an id nobody references', () => {
    script('set n1 r1 one', 'set n2 r1 two');
    expect(script('set n1 - one', 'load Parent r1 children', 'load Parent nobody children')).toEqual([
      '[n2:two:r1]',
      '[]',
    ]);
  });

  it('fails the handler with graph-node’s errors for an unknown type or field and a field that is not derived', () => {
    expect(scriptError('load Nope p1 children')).toContain('Entity type `Nope` is not defined in the schema');
    expect(scriptError('load Parent p1 nope')).toContain('Entity Parent[p1]: unknown field `nope`');
    expect(scriptError('load Child c1 label')).toContain('Entity Child[c1]: field is not derived `label`');
  });

  it('fails the handler for a field derived from a list, which it cannot look up', () => {
    expect(scriptError('load Parent p1 groupMembers')).toContain(
      'Entity Parent[p1]: field `groupMembers` is derived from the list field `Child.groups`',
    );
  });
});
