// Store values written into a real mapping instance's memory (the probe subgraph's module, its
// `allocate` and class ids) and read back: every value kind, including the ones the project's
// schema does not use (Int8, Timestamp, BigDecimal, nested lists), must survive the round trip; and
// an object graph recorded as an image must read the same at every place it is copied to; and the
// order of field names and map keys, graph-node's (UTF-8 bytes).
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Entity, StoreValue } from '../../../indexer/store/entity.ts';
import {
  compareUtf8,
  readBigInt,
  readEntity,
  readStoreValue,
  writeEntity,
  writeStoreValue,
} from '../../../indexer/runtime/asc-values.ts';
import { writeBlock } from '../../../indexer/runtime/ethereum-event.ts';
import type { MappingInstance } from '../../../indexer/runtime/mapping-instance.ts';
import { probeMappingInstance } from './runtime-harness.ts';

let instance: MappingInstance;

beforeAll(async () => {
  instance = await probeMappingInstance();
}, 180_000);

const values: [string, StoreValue][] = [
  ['a string with non-ASCII text', { kind: 'String', value: 'déjà vu – 基金 🚀' }],
  ['an empty string', { kind: 'String', value: '' }],
  ['a negative Int', { kind: 'Int', value: -2147483648 }],
  ['an Int8 beyond 32 bits', { kind: 'Int8', value: -9007199254740993n }],
  ['a Timestamp in microseconds', { kind: 'Timestamp', value: 1_700_000_000_123_456n }],
  ['a normalized BigDecimal', { kind: 'BigDecimal', value: '-0.000123' }],
  ['a large BigDecimal', { kind: 'BigDecimal', value: '12345678901234567890000' }],
  ['true', { kind: 'Bool', value: true }],
  ['false', { kind: 'Bool', value: false }],
  ['null', { kind: 'Null' }],
  ['bytes', { kind: 'Bytes', value: Uint8Array.from([0, 1, 254, 255]) }],
  ['empty bytes', { kind: 'Bytes', value: new Uint8Array(0) }],
  ['a negative 256-bit BigInt', { kind: 'BigInt', value: -(2n ** 255n) }],
  ['2^256-1', { kind: 'BigInt', value: 2n ** 256n - 1n }],
  [
    'a nested list',
    {
      kind: 'List',
      value: [
        { kind: 'List', value: [{ kind: 'Int', value: 1 }, { kind: 'Null' }] },
        { kind: 'String', value: 'x' },
      ],
    },
  ],
];

describe('store values in mapping memory', () => {
  for (const [name, value] of values) {
    it(`round-trips ${name}`, () => {
      const ptr = writeStoreValue(instance.heap, value);
      expect(readStoreValue(instance.heap, ptr)).toEqual(value);
    });
  }

  it('round-trips an entity, its fields sorted by name as graph-node writes them', () => {
    const entity: Entity = new Map(values.map(([name, value]) => [name.replaceAll(' ', '_'), value]));
    const read = readEntity(instance.heap, writeEntity(instance.heap, entity));
    expect([...read.keys()]).toEqual([...entity.keys()].sort());
    expect(new Map([...read].sort())).toEqual(new Map([...entity].sort()));
  });
});

describe('direct writes and images in mapping memory', () => {
  const bigints = [
    0n,
    1n,
    -1n,
    127n,
    128n,
    -128n,
    -129n,
    255n,
    2n ** 47n - 1n,
    -(2n ** 47n),
    2n ** 47n,
    2n ** 256n - 1n,
  ];

  it("writes BigInts in graph-ts's minimal two's-complement bytes across the small and large paths", () => {
    for (const n of bigints) expect(readBigInt(instance.heap, instance.heap.writeBigInt(n))).toBe(n);
    const ptr = instance.heap.writeBigInt(255n);
    expect([...instance.heap.readBytes(ptr)]).toEqual([0xff, 0x00]);
  });

  it('reads strings as graph-node does: NULs dropped, surrogate pairs kept', () => {
    const heap = instance.heap;
    expect(heap.readString(heap.writeString('a\u0000b\u0000'))).toBe('ab');
    expect(heap.readString(heap.writeString('🚀 ok'))).toBe('🚀 ok');
  });

  it('refuses a string with a lone surrogate, as from_utf16 does', () => {
    const heap = instance.heap;
    expect(() => heap.readString(heap.writeString('x\ud800y'))).toThrow(
      'invalid utf-16: lone surrogate found',
    );
    expect(() => heap.readString(heap.writeString('x\udc00'))).toThrow(
      'invalid utf-16: lone surrogate found',
    );
    expect(() => heap.readString(heap.writeString('long '.repeat(40) + '\ud83d'))).toThrow(
      'invalid utf-16: lone surrogate found',
    );
  });

  it('writes hex as bytes and refuses text that is not hex', () => {
    expect([...instance.heap.readBytes(instance.heap.writeHexBytes('0x00ff10'))]).toEqual([0, 255, 16]);
    expect(() => instance.heap.writeHexBytes('0x00zz')).toThrow('invalid hex bytes: 0x00zz');
  });

  it('copies an image of a block to fresh memory whose pointers lead to the same values', () => {
    const heap = instance.heap;
    const hash = `0x${'ab'.repeat(32)}` as const;
    const block = {
      number: 77n,
      hash,
      parentHash: `0x${'cd'.repeat(32)}` as const,
      timestamp: 1_700_000_000n,
      logs: [],
    };
    const image = heap.recordImage(() => writeBlock(heap, block));
    const first = heap.copyImage(image);
    const second = heap.copyImage(image);
    expect(second).not.toBe(first);
    for (const copy of [first, second]) {
      expect(copy % 16).toBe(0);
      expect(Buffer.from(heap.readBytes(heap.u32(copy))).toString('hex')).toBe('ab'.repeat(32));
      expect(readBigInt(heap, heap.u32(copy + 7 * 4))).toBe(77n);
      expect(readBigInt(heap, heap.u32(copy + 10 * 4))).toBe(1_700_000_000n);
      expect(heap.u32(copy + 13 * 4)).toBe(0); // size: null stays null
    }
    // the copies are separate objects: changing one leaves the other as it was
    const firstHashBytes = heap.u32(heap.u32(first) + 4);
    heap.setU8(firstHashBytes, 0x11);
    expect(heap.readBytes(heap.u32(second))[0]).toBe(0xab);
  });
});

describe('the order of entity field names and map keys', () => {
  it('is the order of their UTF-8 bytes, as Rust orders Strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareUtf8(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 1000 },
    );
  });

  it('puts a character past U+FFFF after one from U+E000 to U+FFFF, unlike code unit order', () => {
    expect(['😀', '！', 'a'].sort(compareUtf8)).toEqual(['a', '！', '😀']);
  });
});
