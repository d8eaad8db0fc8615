// store.get_in_block through the probe wasm, against graph-node's entity cache (entity_cache.rs
// EntityCache::get with GetScope::InBlock): it starts from nothing and applies the block's own
// writes to the entity, so it answers with the fields the block's sets gave it, never those of the
// stored entity that a partial set left alone.
import { describe, expect, it } from 'vitest';
import { useProbeHarness } from './runtime-harness.ts';

describe('store.get_in_block', () => {
  const harness = useProbeHarness();
  const script = (...commands: string[]) => harness().storeScript(...commands);

  it('answers with only the fields a partial set in the block gave, not the stored entity’s others', () => {
    script('set c1 p1 first');
    expect(script('new c1 second', 'inblock Child c1', 'get Child c1')).toEqual(['c1:second:-', 'c1']);
    // the stored entity is the merge, as store.get sees it
    expect(script('load Parent p1 children')).toEqual(['[c1:second:p1]']);
  });

  it('merges the block’s sets in order', () => {
    expect(script('new c2 first', 'set c2 p2 second', 'new c2 third', 'inblock Child c2')).toEqual([
      'c2:third:p2',
    ]);
  });

  it('starts again from nothing after a removal in the block, and is null after one', () => {
    script('set c3 p3 first');
    expect(
      script('set c3 p4 second', 'rm Child c3', 'inblock Child c3', 'new c3 third', 'inblock Child c3'),
    ).toEqual(['null', 'c3:third:-']);
  });

  it('is null for an entity the block did not write', () => {
    script('set c4 p5 first');
    expect(script('inblock Child c4')).toEqual(['null']);
  });
});
