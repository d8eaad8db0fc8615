// Declared eth calls as the manifest loader reads them and as the block processor turns them into
// eth_calls for a log: graph-node's expression grammar and messages, the checks it makes only when a
// trigger comes (made at load here), struct fields from specVersion 1.4.0, and the data of each call.
// Making the calls on a real chain is tested end to end in test/indexer/declared-calls.test.ts.
import { encodeFunctionData, parseAbi, type AbiEvent, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  callRequests,
  parseDeclaredCalls,
  type DeclaredCallContext,
} from '../../../indexer/runtime/declared-calls.ts';
import { createEventDecoder, handlerParameters } from '../../../indexer/runtime/event-decoder.ts';
import { loadSubgraph } from '../../../indexer/runtime/manifest.ts';
import { buildProbeSubgraph } from '../probe-build.ts';
import { loadEditedProbe, makeLog } from './runtime-harness.ts';

const abi = parseAbi([
  'event Filled(address indexed taker, uint8 small, bytes4 tag, (address maker, (uint256 amount, address to) leg) order, string indexed note, uint256 amount)',
  'function balanceOf(address owner) view returns (uint256)',
  'function quote(uint256 amount, bytes32 tag) view returns (uint256)',
  'function narrow(uint8 x) view returns (uint256)',
  'function signed(int256 x) view returns (uint256)',
  'function noteOf(bytes32 hash) view returns (string)',
  'function legOf(address maker, (uint256 amount, address to) leg) view returns (uint256)',
]);
const filled = abi.find((item) => item.type === 'event') as AbiEvent;

function context(specVersion = '1.4.0'): DeclaredCallContext {
  return {
    where: 'data source Exchange: handler handleFilled',
    specVersion,
    structFields: specVersion === '1.4.0',
    event: filled,
    params: handlerParameters(filled),
    abis: new Map([['Token', abi]]),
  };
}

/** The message parseDeclaredCalls throws for `expression` under the label `c`. */
function refusal(expression: unknown, specVersion?: string): string {
  try {
    parseDeclaredCalls(context(specVersion), { c: expression });
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
}

const prefix = "data source Exchange: handler handleFilled: declared call 'c': ";

describe('declared call expressions', () => {
  it('refuses what graph-node’s CallExpr::parse refuses, with its messages', () => {
    const cases: [expression: string, why: string][] = [
      ['Token.balanceOf(event.address)', "missing '[' after contract name"],
      ['[event.address].balanceOf()', "missing contract name before '['"],
      ['Token[event.address.balanceOf(x)', "missing ']' to close address"],
      ['Token[].balanceOf()', "empty address in 'Token[]'"],
      ['Token[event.address]balanceOf()', "missing '.' after address 'Token[event.address]'"],
      ['Token[event.address].balanceOf', "missing '(' to start function arguments"],
      ['Token[event.address].(x)', "missing function name after 'Token[event.address].'"],
      ['Token[event.address].balanceOf(event.address', "missing ')' to close function arguments"],
    ];
    for (const [expression, why] of cases)
      expect(refusal(expression)).toBe(`${prefix}Invalid call expression '${expression}': ${why}`);
  });

  it('allows event.address, event.params and hex addresses as the address and arguments, nothing else', () => {
    const failed = (s: string, what: string, why: string) =>
      `${prefix}Failed to parse ${what} in call expression '${s}': ${why}`;
    const s1 = 'Token[entity.owner].balanceOf(event.address)';
    expect(refusal(s1)).toBe(
      failed(s1, "address 'entity.owner'", "'entity.*' expressions not allowed in event handler context"),
    );
    const s2 = 'Token[event.address].balanceOf(block.author)';
    expect(refusal(s2)).toBe(
      failed(
        s2,
        "argument 1 'block.author'",
        "In event handler context, only 'event.*' expressions and hex addresses are allowed",
      ),
    );
    const s3 = 'Token[event.transaction.from].balanceOf(event.address)';
    expect(refusal(s3)).toBe(
      failed(s3, "address 'event.transaction.from'", 'invalid call argument `event.transaction.from`'),
    );
    expect(refusal('Token[0x00000000000000000000000000000000000000Ab].balanceOf(event.params.taker)')).toBe(
      'accepted',
    );
  });

  it('refuses an ABI or a function the mapping does not have, as graph-node’s manifest validation does', () => {
    expect(refusal('Vault[event.address].balanceOf(event.address)')).toBe(
      `${prefix}No ABI entry with name \`Vault\` found`,
    );
    expect(refusal('Token[event.address].totalSupply()')).toBe(
      `${prefix}Unknown function "Token::totalSupply" called from WASM runtime`,
    );
  });

  it('refuses at load what graph-node finds wrong only when an event comes: unknown params, wrong types, argument counts', () => {
    const s1 = 'Token[event.params.maker].balanceOf(event.address)';
    expect(refusal(s1)).toBe(
      `${prefix}Failed to parse address 'event.params.maker' in call expression '${s1}': unknown param maker`,
    );
    const s2 = 'Token[event.params.amount].balanceOf(event.address)';
    expect(refusal(s2)).toBe(
      `${prefix}Failed to parse address 'event.params.amount' in call expression '${s2}': \`event.params.amount\` is of type uint256, where address is needed`,
    );
    expect(refusal('Token[event.address].balanceOf()')).toBe(
      `${prefix}Token.balanceOf takes 1 arguments, the expression gives 0`,
    );
    const s4 = 'Token[event.address].quote(event.params.amount, event.params.taker)';
    expect(refusal(s4)).toMatch(
      /argument 2 'event.params.taker'.*is of type address, where bytes32 is needed$/,
    );
  });

  it('accepts integers and fixed bytes narrower than the parameter, as graph-node’s type_check, and nothing wider', () => {
    expect(refusal('Token[event.address].quote(event.params.small, event.params.tag)')).toBe('accepted');
    expect(refusal('Token[event.address].narrow(event.params.amount)')).toMatch(
      /is of type uint256, where uint8 is needed$/,
    );
    expect(refusal('Token[event.address].signed(event.params.amount)')).toMatch(
      /is of type uint256, where int256 is needed$/,
    );
  });

  it('takes an indexed string parameter as its 32-byte topic, as the handler gets it', () => {
    expect(refusal('Token[event.address].noteOf(event.params.note)')).toBe('accepted');
  });

  it('reads struct fields by name or index from specVersion 1.4.0 only', () => {
    const s = 'Token[event.params.order.maker].legOf(event.params.order.0, event.params.order.leg)';
    expect(refusal(s)).toBe('accepted');
    expect(refusal(s, '1.3.0')).toBe(
      `${prefix}Failed to parse address 'event.params.order.maker' in call expression '${s}': Struct field access 'event.params.order.*' in declarative calls is only supported for specVersion >= 1.4.0, current version is 1.3.0. Event: 'Filled'`,
    );
    expect(refusal('Token[event.params.order.taker].balanceOf(event.address)')).toMatch(
      /Field 'taker' not found. Available fields: \["maker", "leg"\]$/,
    );
    expect(refusal('Token[event.params.order.2].balanceOf(event.address)')).toMatch(
      /Index 2 out of bounds for struct with 2 fields$/,
    );
    expect(refusal('Token[event.params.order.maker.x].balanceOf(event.address)')).toMatch(
      /Field 'maker' is not a struct \(type: address\), cannot access nested field 'x'$/,
    );
  });

  it('needs calls to map labels to expression strings', () => {
    expect(() => parseDeclaredCalls(context(), ['Token[event.address].balanceOf(event.address)'])).toThrow(
      'data source Exchange: handler handleFilled: calls must map labels to call expressions',
    );
    expect(refusal(42)).toBe(`${prefix}the call expression must be a string`);
  });
});

describe('the eth_calls declared calls make for a log', () => {
  const maker: Hex = '0x00000000000000000000000000000000000000a1';
  const to: Hex = '0x00000000000000000000000000000000000000b2';
  const taker: Hex = '0x00000000000000000000000000000000000000c3';
  const exchange: Hex = '0x00000000000000000000000000000000000000e4';
  const log = makeLog(
    abi,
    'Filled',
    { taker, small: 7, tag: '0xdeadbeef', order: { maker, leg: { amount: 5n, to } }, note: 'n', amount: 9n },
    { address: exchange, block: 3, logIndex: 0 },
  );
  const params = createEventDecoder(filled)(log)!;
  const requests = (calls: Record<string, string>) =>
    callRequests(parseDeclaredCalls(context(), calls), log, params);

  it('calls the address the declaration names, with the function’s selector and arguments', () => {
    expect(
      requests({
        own: 'Token[event.address].balanceOf(event.params.taker)',
        fixed: 'Token[0x00000000000000000000000000000000000000Ab].balanceOf(event.address)',
      }),
    ).toEqual([
      {
        label: 'own',
        to: exchange,
        data: encodeFunctionData({ abi, functionName: 'balanceOf', args: [taker] }),
      },
      {
        label: 'fixed',
        to: '0x00000000000000000000000000000000000000ab',
        data: encodeFunctionData({ abi, functionName: 'balanceOf', args: [exchange] }),
      },
    ]);
  });

  it('widens narrower integers and pads narrower fixed bytes on the right', () => {
    const [quote] = requests({ q: 'Token[event.address].quote(event.params.small, event.params.tag)' });
    expect(quote!.data).toBe(
      encodeFunctionData({ abi, functionName: 'quote', args: [7n, `0xdeadbeef${'00'.repeat(28)}`] }),
    );
  });

  it('passes an argument read from a word wider than its type as its whole word, as graph-node (alloy) encodes it', () => {
    // the uint8 `small` sent as the word 0x…01ff, which alloy reads as 511 and encodes back as it was
    const wide = { ...log, data: `0x${0x1ffn.toString(16).padStart(64, '0')}${log.data.slice(66)}` as Hex };
    const [call] = callRequests(
      parseDeclaredCalls(context(), { n: 'Token[event.address].narrow(event.params.small)' }),
      wide,
      createEventDecoder(filled)(wide)!,
    );
    const word511 = 0x1ffn.toString(16).padStart(64, '0');
    expect(call!.data).toBe(
      `${encodeFunctionData({ abi, functionName: 'narrow', args: [0] }).slice(0, 10)}${word511}`,
    );
  });

  it('reads nested struct fields, and passes a struct whole', () => {
    const [leg] = requests({
      leg: 'Token[event.params.order.maker].legOf(event.params.order.0, event.params.order.leg)',
    });
    expect(leg).toEqual({
      label: 'leg',
      to: maker,
      data: encodeFunctionData({ abi, functionName: 'legOf', args: [maker, { amount: 5n, to }] }),
    });
    const [deep] = requests({ deep: 'Token[event.params.order.leg.to].balanceOf(event.params.order.1.to)' });
    expect(deep!.to).toBe(to);
  });
});

describe('declared calls in a manifest', () => {
  it('are loaded for the handler that declares them, and mark the subgraph as declaring calls', async () => {
    const subgraph = await loadSubgraph({ buildDir: buildProbeSubgraph() });
    const declared = subgraph.dataSources.find((ds) => ds.name === 'DeclaredCalls')!;
    const [handler] = [...declared.mapping.handlers.values()].flat();
    expect(handler!.calls.map((c) => [c.label, c.fn.name, c.address.kind, c.args.length])).toEqual([
      ['probes', 'probes', 'eventAddress', 0],
      ['pair', 'pair', 'eventAddress', 0],
      ['fail', 'fail', 'eventAddress', 1],
      ['length', 'lengthOf', 'eventAddress', 1],
    ]);
    expect(subgraph.declaresCalls).toBe(true);
  });

  it('are refused before specVersion 1.2.0, as graph-node refuses them', async () => {
    // without the topic filter, which needs 1.2.0 too and would be named first
    const edit = (text: string) =>
      text.replace('specVersion: 1.3.0', 'specVersion: 1.1.0').replace(/^ +topic1:\n( +- .*\n)+/m, '');
    await expect(loadEditedProbe(edit)).rejects.toThrow(
      'data source DeclaredCalls: handler handleProbe: declaring eth calls on handlers is only supported for specVersion >= 1.2.0 (this manifest has 1.1.0)',
    );
  });
});
