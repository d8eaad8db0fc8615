// The query field names graph-node derives from entity type names with the Rust crate Inflector
// 0.11.4: its own test cases (src/cases/camelcase, src/string/pluralize, tests/lib.rs), graph-node's
// (graph/src/schema/api.rs pluralize_plural_name), and names real subgraphs use.
import { describe, expect, it } from 'vitest';
import { queryFieldNames, toCamelCase, toPlural } from '../../indexer/query/inflector.ts';

describe('Inflector to_camel_case', () => {
  const cases: [string, string][] = [
    ['fooBar', 'fooBar'],
    ['FooBar', 'fooBar'],
    ['foo-bar', 'fooBar'],
    ['Foo bar', 'fooBar'],
    ['Foo Bar', 'fooBar'],
    ['Foo-Bar', 'fooBar'],
    ['FOO_BAR', 'fooBar'],
    ['foo_bar', 'fooBar'],
    ['foo           bar', 'fooBar'],
    ['Robert C. Martin', 'robertCMartin'],
    ['Random text with *(bad) chars', 'randomTextWithBadChars'],
    ['trailing bad_chars*(()())', 'trailingBadChars'],
    ['-!#$%leading bad chars', 'leadingBadChars'],
    ['-!#$%wrapped in bad chars&*^*&(&*^&(<><?>><?><>))', 'wrappedInBadChars'],
    ['has a + sign', 'hasASign'],
  ];
  for (const [input, expected] of cases) {
    it(`turns ${JSON.stringify(input)} into ${expected}`, () => {
      expect(toCamelCase(input)).toBe(expected);
    });
  }

  it('lowers a run of capitals and starts a word after digits', () => {
    expect(toCamelCase('ERC20Token')).toBe('erc20Token');
    expect(toCamelCase('NFTSale')).toBe('nftsale');
  });

  it('keeps capitals after a word-starting capital, since that letter is not remembered', () => {
    expect(toCamelCase('aBC')).toBe('aBC');
  });
});

describe('Inflector to_plural', () => {
  const cases: [string, string][] = [
    ['geometry', 'geometries'],
    ['ox', 'oxen'],
    ['woman', 'women'],
    ['test', 'tests'],
    ['axis', 'axes'],
    ['knife', 'knives'],
    ['agendum', 'agenda'],
    ['elf', 'elves'],
    ['zoology', 'zoology'],
    ['box', 'boxes'],
    ['boxes', 'boxes'],
    ['crate', 'crates'],
    ['vengeance', 'vengeance'],
    ['yoga', 'yoga'],
    ['foo_bar', 'foo_bars'],
  ];
  for (const [input, expected] of cases) {
    it(`pluralises ${input} as ${expected}`, () => {
      expect(toPlural(input)).toBe(expected);
    });
  }

  it('matches uncountable words and special cases only as written, so capitalised ones take rules', () => {
    expect(toPlural('Sheep')).toBe('Sheeps');
    expect(toPlural('Ox')).toBe('Oxes');
  });

  it("keeps the crate's rules whose capture spans the whole word", () => {
    expect(toPlural('person')).toBe('personople');
    expect(toPlural('mouse')).toBe('mouseice');
    expect(toPlural('child')).toBe('children');
  });
});

describe('graph-node query field names', () => {
  const cases: [string, string, string][] = [
    ['Fund', 'fund', 'funds'],
    ['NavRecord', 'navRecord', 'navRecords'],
    ['ERC20Token', 'erc20Token', 'erc20Tokens'],
    ['NFTSale', 'nftsale', 'nftsales'],
    ['DAO', 'dao', 'daos'],
    ['Token_Balance', 'tokenBalance', 'tokenBalances'],
    ['Analysis', 'analysis', 'analyses'],
    ['Leaf', 'leaf', 'leaves'],
    ['Person', 'person', 'persons'],
    ['Stats', 'stats', 'stats_collection'],
    ['ProtocolStats', 'protocolStats', 'protocolStats_collection'],
  ];
  for (const [typeName, singular, plural] of cases) {
    it(`names ${typeName}'s fields ${singular} and ${plural}`, () => {
      expect(queryFieldNames(typeName)).toEqual({ singular, plural });
    });
  }
});
