// The store's rule for a Bytes id (0x and an even number of hex digits, either case), which the
// block write buffer checks by hand on its hot path instead of decoding the id: it must refuse what
// layout.ts hexToBytes refuses, at the call that passes the id rather than later at the flush.
import { afterEach, describe, expect, it } from 'vitest';
import { hexToBytes } from '../../indexer/store/layout.ts';
import { createFixture, fund, type Fixture } from './store-fixture.ts';

let fixture: Fixture | undefined;
afterEach(() => {
  fixture?.cleanup();
  fixture = undefined;
});

// U+0010 and U+0011 turn into the digits 0 and 1 when lowercased by setting bit 0x20
const controlCharacters = '0x' + '\u0010\u0011'.repeat(20);

describe('a Bytes id written through a block write buffer', () => {
  it('is refused when it holds characters that only look like digits once lowercased bitwise', () => {
    fixture = createFixture();
    fixture.store.begin();
    const w = fixture.store.blockWriter(10);
    expect(() => w.set('Fund', controlCharacters, fund(controlCharacters, 'a', false, [], 10))).toThrow(
      `invalid Bytes id: ${controlCharacters} (expected 0x and an even number of hex digits)`,
    );
    expect(() => hexToBytes(controlCharacters)).toThrow(
      `invalid hex bytes: ${controlCharacters} (expected 0x and an even number of hex digits)`,
    );
  });

  it('is taken in upper case and keyed in lower case, as the store writes it', () => {
    fixture = createFixture();
    fixture.store.begin();
    const w = fixture.store.blockWriter(10);
    const upper = '0x' + 'AB'.repeat(20);
    w.set('Fund', upper, fund('0x' + 'ab'.repeat(20), 'a', false, [], 10));
    expect(w.get('Fund', '0x' + 'ab'.repeat(20))?.get('slug')).toEqual({ kind: 'String', value: 'a' });
  });
});
