// How a static data source's manifest `context` is read: each graph-node value type to its store
// value, and every value graph-node would refuse refused, naming the entry to fix; and the order
// in which dataSource.context() hands its entries to the mapping.
import { describe, expect, it } from 'vitest';
import { contextFromManifest } from '../../../indexer/runtime/manifest-context.ts';
import { loadEditedProbe, probeAddress, RuntimeHarness } from './runtime-harness.ts';

describe('a manifest context', () => {
  it('reads each value type to its store value', () => {
    const context = contextFromManifest(
      {
        s: { type: 'String', data: 'x' },
        i: { type: 'Int', data: -(2 ** 31) },
        i8: { type: 'Int8', data: -(2n ** 63n) },
        bi: { type: 'BigInt', data: '+42' },
        bd: { type: 'BigDecimal', data: '0.0100' },
        b: { type: 'Bool', data: false },
        by: { type: 'Bytes', data: 'ff00' },
        t: { type: 'Timestamp', data: '1969-12-31T23:59:59.5+00:00' },
        n: { type: 'Null' },
        l: { type: 'List', data: [{ type: 'Int', data: 1 }] },
      },
      'Source',
    );
    expect(Object.fromEntries(context!)).toEqual({
      s: { kind: 'String', value: 'x' },
      i: { kind: 'Int', value: -(2 ** 31) },
      i8: { kind: 'Int8', value: -(2n ** 63n) },
      bi: { kind: 'BigInt', value: 42n },
      bd: { kind: 'BigDecimal', value: '0.01' },
      b: { kind: 'Bool', value: false },
      by: { kind: 'Bytes', value: Uint8Array.of(0xff, 0) },
      t: { kind: 'Timestamp', value: -500_000n },
      n: { kind: 'Null' },
      l: { kind: 'List', value: [{ kind: 'Int', value: 1 }] },
    });
  });

  it('is null when the data source has none', () => {
    expect(contextFromManifest(undefined, 'Source')).toBeNull();
  });

  it.each([
    [[1], 'data source Source: context must be a map from names to { type, data } values'],
    [{ k: 'plain' }, 'data source Source: context.k: must be a value written as { type, data }'],
    [{ k: { type: 'Float', data: 1 } }, 'data source Source: context.k: unknown type "Float"'],
    [
      { k: { type: 'Int', data: 2 ** 31 } },
      'context.k: data of an Int must be an integer from -2^31 to 2^31-1',
    ],
    [
      { k: { type: 'Int8', data: 2 ** 63 } },
      'context.k: data of an Int8 must be an integer from -2^63 to 2^63-1',
    ],
    [{ k: { type: 'BigInt', data: 12 } }, 'context.k: data of a BigInt must be a string of decimal digits'],
    [
      { k: { type: 'BigDecimal', data: '1.2.3' } },
      'context.k: data of a BigDecimal must be a decimal string',
    ],
    [{ k: { type: 'Bytes', data: '0xabc' } }, 'context.k: data of Bytes must be a string of hex digit pairs'],
    [
      { k: { type: 'Timestamp', data: 1704164645 } },
      'context.k: data of a Timestamp must be an RFC 3339 date-time',
    ],
    [
      { k: { type: 'List', data: [{ type: 'Bool', data: 1 }] } },
      'context.k[0]: data of a Bool must be true or false',
    ],
  ])('refuses %j, naming the entry', (raw, message) => {
    expect(() => contextFromManifest(raw, 'Source')).toThrow(message);
  });
});

describe('dataSource.context() in the mapping', () => {
  it("hands the entries over sorted by the keys' UTF-8 bytes, as graph-node's Entity::sorted: a, ！, 😀", async () => {
    // '😀' (U+1F600) sorts before '！' (U+FF01) by UTF-16 code units, after it by UTF-8 bytes
    const subgraph = await loadEditedProbe((text) =>
      text.replace(
        '    name: ProbeEmitter\n    network: devnet\n',
        '    name: ProbeEmitter\n    network: devnet\n    context:\n' +
          "      '😀': { type: String, data: smile }\n" +
          "      '！': { type: String, data: bang }\n" +
          '      a: { type: String, data: plain }\n',
      ),
    );
    const harness = RuntimeHarness.forSubgraph(subgraph);
    try {
      expect(harness.probe(21, '')).toBe(
        `devnet,${probeAddress},3,a=String:plain,！=String:bang,😀=String:smile`,
      );
    } finally {
      harness.close();
    }
  }, 180_000);
});
