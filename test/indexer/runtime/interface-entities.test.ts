// Entities of types that implement an interface, as the probe subgraph's wasm writes them (its
// TextNote and VoiceNote implement Note): each stays in its own type, no two implementers may hold
// the same id (graph-node's ConflictingId), and an interface is not a type store calls accept.
import { describe, expect, it } from 'vitest';
import { validateEntity } from '../../../indexer/runtime/entity-validation.ts';
import type { StoreValue } from '../../../indexer/store/entity.ts';
import { parseSubgraphSchema } from '../../../indexer/subgraph-schema.ts';
import { useProbeHarness } from './runtime-harness.ts';

describe('entities implementing an interface, written by the probe mapping', () => {
  const harness = useProbeHarness();

  const script = (...commands: string[]) => harness().storeScript(...commands);
  const scriptError = (...commands: string[]) => harness().storeScriptError(...commands);

  const textOf = (type: string, id: string) => {
    const text = harness().store.getCurrent(type, id)?.get('text');
    return text?.kind === 'String' ? text.value : null;
  };

  it('stores each implementer in its own type, with a reference to the board', () => {
    script('board b1 n2', 'text n1 b1 hello', 'voice n2 b1 hi');
    expect([textOf('TextNote', 'n1'), textOf('VoiceNote', 'n2')]).toEqual(['hello', 'hi']);
    expect([textOf('VoiceNote', 'n1'), textOf('TextNote', 'n2')]).toEqual([null, null]);
    expect(harness().store.getCurrent('Board', 'b1')?.get('pinned')).toEqual({ kind: 'String', value: 'n2' });
  });

  it('refuses an id that another implementer holds, in graph-node’s words', () => {
    script('text held-1 - first');
    expect(scriptError('voice held-1 - second')).toContain(
      'tried to set entity of type `VoiceNote` with ID "held-1" but an entity of type `TextNote`, which has an interface in common with `VoiceNote`, exists with the same ID',
    );
    expect(textOf('VoiceNote', 'held-1')).toBeNull();
  });

  it('refuses it when the other implementer wrote the id earlier in the same block', () => {
    expect(scriptError('voice same-1 - first', 'text same-1 - second')).toContain(
      'tried to set entity of type `TextNote` with ID "same-1" but an entity of type `VoiceNote`',
    );
  });

  it('lets an implementer update its own entity', () => {
    script('text own-1 - first');
    script('text own-1 - second');
    expect(textOf('TextNote', 'own-1')).toBe('second');
  });

  it('lets another implementer take an id once its holder is removed', () => {
    script('text moved-1 - first');
    script('rm TextNote moved-1', 'voice moved-1 - second');
    expect([textOf('TextNote', 'moved-1'), textOf('VoiceNote', 'moved-1')]).toEqual([null, 'second']);
  });

  it('refuses store.get of an interface, which names no table', () => {
    script('text get-1 - first');
    expect(script('get TextNote get-1', 'get VoiceNote get-1')).toEqual(['get-1', 'null']);
    expect(scriptError('get Note get-1')).toContain(
      "expected `Note` to refer to an object type but it's an interface",
    );
  });

  it('refuses store.loadRelated of a field derived from an interface, as graph-node does', () => {
    script('board b2 -', 'text on-b2 b2 first');
    expect(scriptError('load Board b2 notes')).toContain(
      "expected `Note` to refer to an object type but it's an interface",
    );
  });
});

describe('references to an interface', () => {
  const schema = parseSubgraphSchema(`
    interface Owner { id: Bytes! }
    type Person implements Owner @entity { id: Bytes! }
    type Company implements Owner @entity { id: Bytes! }
    type Asset @entity { id: ID! owner: Owner! }
  `);
  const asset = schema.entities.get('Asset')!;
  const entity = (owner: StoreValue) =>
    new Map<string, StoreValue>([
      ['id', { kind: 'String', value: 'a1' }],
      ['owner', owner],
    ]);

  it('hold the id kind of the interface’s implementers', () => {
    expect(() =>
      validateEntity(schema, asset, 'a1', entity({ kind: 'Bytes', value: Uint8Array.of(0xab) })),
    ).not.toThrow();
    expect(() => validateEntity(schema, asset, 'a1', entity({ kind: 'String', value: '0xab' }))).toThrow(
      'Entity Asset[a1]: the value `0xab` for field `owner` must have type Owner! but has type String',
    );
  });
});
