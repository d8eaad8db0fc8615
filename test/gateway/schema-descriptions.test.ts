// Agents read the schema's descriptions (introspection, schema.graphql) to learn units, formats,
// what null means and where valid values come from: every type, field, argument and enum value of
// the gateway must carry one, and the few facts an agent cannot guess must be stated.
import {
  isEnumType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  type GraphQLNamedType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../../gateway/event-names.ts';
import { schema } from '../../gateway/schema.ts';
import { CLAIM_SENDER } from '../../gateway/claim-function.ts';

/** every schema element as "Type", "Type.field", "Type.field(argument)" or "Enum.VALUE", with its description */
function elements(type: GraphQLNamedType): [string, string | null | undefined][] {
  const own: [string, string | null | undefined] = [type.name, type.description];
  if (isObjectType(type)) {
    return [
      own,
      ...Object.values(type.getFields()).flatMap((field): [string, string | null | undefined][] => [
        [`${type.name}.${field.name}`, field.description],
        ...field.args.map((arg): [string, string | null | undefined] => [
          `${type.name}.${field.name}(${arg.name})`,
          arg.description,
        ]),
      ]),
    ];
  }
  if (isEnumType(type)) {
    return [
      own,
      ...type
        .getValues()
        .map((v): [string, string | null | undefined] => [`${type.name}.${v.name}`, v.description]),
    ];
  }
  return [own];
}

const described = new Map(
  Object.values(schema.getTypeMap())
    .filter((type) => !type.name.startsWith('__') && !(isScalarType(type) && isSpecifiedScalarType(type)))
    .flatMap(elements),
);

describe('schema descriptions', () => {
  it('describe every type, field, argument and enum value', () => {
    expect([...described].filter(([, description]) => !description?.trim()).map(([name]) => name)).toEqual(
      [],
    );
  });

  it('list the closed event names where events(eventName) is described', () => {
    for (const name of EVENT_NAMES) expect(described.get('Query.events(eventName)')).toContain(name);
  });

  it('say that event args are raw base units and the event id ends in a 4-byte little-endian log index', () => {
    expect(described.get('JSON')).toMatch(/raw on-chain value, not decimal-scaled/);
    expect(described.get('ProtocolEvent.args')).toMatch(/base units/);
    expect(described.get('ProtocolEvent.id')).toMatch(/4 bytes little-endian/);
  });

  it('say who may send a claim, why it reverts and the exact function it calls', () => {
    const proof = described.get('MerkleProof');
    expect(proof).toContain(CLAIM_SENDER);
    expect(proof).toMatch(/ClaimsPaused\(fund\).*pausedModules.*UnknownRound.*AlreadyClaimed.*InvalidProof/);
    expect(described.get('ClaimCall.signature')).toContain('claim(address,uint64,address,uint256,bytes32[])');
  });

  it('say what the reserve percent is of and that the inactive targets of allocations do not count', () => {
    expect(described.get('Reserve.percentOfAum')).toMatch(/^balance \/ totalAssets x 100/);
    expect(described.get('Reserve')).toMatch(/far above 100/);
    expect(described.get('Allocations')).toMatch(/Only active strategies' targets count/);
  });
});
