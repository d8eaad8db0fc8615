// The runtime's event decoder against viem's decodeEventLog as the reference, over random values:
// single-word static events (decoded from the hex text) and events with dynamic types (decoded by
// viem's decodeAbiParameters), indexed and not; and logs that must be skipped. Strings and words
// that are not canonical follow graph-node (alloy) rather than viem where the two differ (a
// byte-order mark, leading NULs; an int8 word 0x…80, a bool word 2), on both paths alike.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeEventLog,
  encodeAbiParameters,
  encodeEventTopics,
  parseAbiItem,
  type AbiEvent,
  type Hex,
} from 'viem';
import { createEventDecoder } from '../../../indexer/runtime/event-decoder.ts';

const staticEvent = parseAbiItem(
  'event Mixed(address indexed who, int64 indexed delta, uint256 amount, bool flag, bytes8 tag, int256 signed, address other)',
) as AbiEvent;
const dynamicEvent = parseAbiItem(
  'event Posted(address indexed fund, string indexed key, bytes32 root, string uri, uint32[] counts, (address a, uint16 b) pair)',
) as AbiEvent;

function encode(event: AbiEvent, args: Record<string, unknown>): { topics: [Hex, ...Hex[]]; data: Hex } {
  const topics = encodeEventTopics({ abi: [event], eventName: event.name, args } as never) as [Hex, ...Hex[]];
  const dataInputs = event.inputs.filter((i) => !i.indexed);
  const data = encodeAbiParameters(
    dataInputs,
    dataInputs.map((i) => args[i.name as string]),
  );
  return { topics, data };
}

/** A value as the runtime's ethereum.Value builder sees it: addresses as lowercase hex, tuples as arrays. */
function normalize(value: unknown): unknown {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  if (typeof value === 'string') return value.toLowerCase();
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object') return Object.values(value).map(normalize);
  return value;
}

function asAddress(value: unknown): unknown {
  return typeof value === 'bigint' ? `0x${value.toString(16).padStart(40, '0')}` : value;
}

function decodedByRuntime(event: AbiEvent, topics: [Hex, ...Hex[]], data: Hex): unknown[] | null {
  const log = { topics, data } as Parameters<ReturnType<typeof createEventDecoder>>[0];
  const params = createEventDecoder(event)(log);
  if (!params) return null;
  return params.map((p) => {
    if (p.param.type === 'address') return normalize(asAddress(p.value));
    if (p.param.type === 'tuple') {
      // components (a: address, b: uint16), decoded by viem into an object keyed by name
      const [a, b] = Object.values(p.value as Record<string, unknown>);
      return [normalize(asAddress(a)), normalize(b)];
    }
    return normalize(p.value);
  });
}

function decodedByViem(event: AbiEvent, topics: [Hex, ...Hex[]], data: Hex): unknown[] {
  const { args } = decodeEventLog({ abi: [event], topics, data });
  return event.inputs.map((i) => normalize((args as Record<string, unknown>)[i.name as string]));
}

const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);
const bytesN = (n: number) =>
  fc.uint8Array({ minLength: n, maxLength: n }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);

describe('event decoder', () => {
  it('decodes single-word static parameters exactly as viem does', () => {
    fc.assert(
      fc.property(
        address,
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }),
        fc.boolean(),
        bytesN(8),
        fc.bigInt({ min: -(2n ** 255n), max: 2n ** 255n - 1n }),
        address,
        (who, delta, amount, flag, tag, signed, other) => {
          const { topics, data } = encode(staticEvent, { who, delta, amount, flag, tag, signed, other });
          expect(decodedByRuntime(staticEvent, topics, data)).toEqual(
            decodedByViem(staticEvent, topics, data),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('decodes dynamic parameters as viem does, an indexed string as its topic hash', () => {
    fc.assert(
      fc.property(
        address,
        fc.string(),
        bytesN(32),
        fc.string(),
        fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 5 }),
        address,
        fc.integer({ min: 0, max: 65535 }),
        (fund, key, root, uri, counts, a, b) => {
          const { topics, data } = encode(dynamicEvent, { fund, key, root, uri, counts, pair: { a, b } });
          const runtime = decodedByRuntime(dynamicEvent, topics, data);
          expect(runtime).toEqual(decodedByViem(dynamicEvent, topics, data));
          expect(runtime?.[1]).toBe(topics[2]);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("keeps a string parameter's leading byte-order mark, as graph-node's alloy decoding does", () => {
    const event = parseAbiItem('event Posted(address indexed fund, string uri)') as AbiEvent;
    const { topics, data } = encode(event, { fund: `0x${'11'.repeat(20)}`, uri: '\uFEFFipfs://x' });
    expect(createEventDecoder(event)({ topics, data } as never)?.[1]?.value).toBe('\uFEFFipfs://x');
  });

  it("keeps a string parameter's NUL bytes, leading ones included, as graph-node's alloy decoding does", () => {
    const event = parseAbiItem('event NavRejected(uint64 indexed epoch, string reason)') as AbiEvent;
    const { topics, data } = encode(event, { epoch: 3n, reason: '\0\0late\0' });
    expect(createEventDecoder(event)({ topics, data } as never)?.[1]?.value).toBe('\0\0late\0');
  });

  it('skips logs with the wrong number of topics or too little data', () => {
    const { topics, data } = encode(staticEvent, {
      who: `0x${'11'.repeat(20)}`,
      delta: -1n,
      amount: 5n,
      flag: true,
      tag: '0x0102030405060708',
      signed: -7n,
      other: `0x${'22'.repeat(20)}`,
    });
    expect(decodedByRuntime(staticEvent, [topics[0], topics[1] as Hex], data)).toBeNull();
    expect(decodedByRuntime(staticEvent, topics, data.slice(0, 66) as Hex)).toBeNull();
    expect(decodedByRuntime(dynamicEvent, [topics[0]], '0x')).toBeNull();
  });

  describe('reads words that are not canonical as graph-node (alloy) does, on both paths', () => {
    const word = (value: bigint) => value.toString(16).padStart(64, '0');
    const topic0 = `0x${'ab'.repeat(32)}` as Hex;
    /** a string argument's encoding after `heads` words of the head: its offset, length 1, 'x' */
    const stringAfter = (heads: number) =>
      `${word(BigInt(32 * (heads + 1)))}${word(1n)}${'78'.padEnd(64, '0')}`;
    const decode = (signature: string, topics: Hex[], data: string) =>
      createEventDecoder(parseAbiItem(signature) as AbiEvent)({
        topics: [topic0, ...topics],
        data: `0x${data}`,
      } as never)?.map((p) => p.value);

    it('reads an int8 word 0x…80 as 128, the whole word as an int256, in the data', () => {
      expect(decode('event A(int8 x)', [], word(0x80n))).toEqual([128n]);
      expect(decode('event B(int8 x, string s)', [], word(0x80n) + stringAfter(1))).toEqual([128n, 'x']);
    });

    it('reads an int8 topic 0x…80 as 128, and an all-ones word as -1', () => {
      const topic = `0x${word(0x80n)}` as Hex;
      const minusOne = `0x${'ff'.repeat(32)}` as Hex;
      expect(decode('event A(int8 indexed x, int8 indexed y)', [topic, minusOne], '')).toEqual([128n, -1n]);
      expect(
        decode('event B(int8 indexed x, int8 indexed y, string s)', [topic, minusOne], stringAfter(0)),
      ).toEqual([128n, -1n, 'x']);
    });

    it('reads a bool word 2 as true, in the data and in a topic', () => {
      expect(decode('event A(bool b)', [], word(2n))).toEqual([true]);
      expect(decode('event B(bool b, string s)', [], word(2n) + stringAfter(1))).toEqual([true, 'x']);
      expect(decode('event C(bool indexed b, string s)', [`0x${word(2n)}`], stringAfter(0))).toEqual([
        true,
        'x',
      ]);
    });

    it('reads a uint8 word past 2^53 exactly, as a uint256', () => {
      const big = 2n ** 60n + 1n;
      expect(decode('event A(uint8 x)', [], word(big))).toEqual([big]);
      expect(decode('event B(uint8 x, string s)', [], word(big) + stringAfter(1))).toEqual([big, 'x']);
    });
  });
});
