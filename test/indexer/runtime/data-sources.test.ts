// The data source set as the block processor and the follower use it, over the fund subgraph's
// build: which data sources a log's address reaches and in what order, which instances count as
// the same, what a rollback to an earlier size leaves, and which data sources its filters leave out
// once they have ended.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { DataSourceSet, type DynamicDataSource } from '../../../indexer/runtime/data-sources.ts';
import { loadSubgraph, type Subgraph } from '../../../indexer/runtime/manifest.ts';

const buildDir = new URL('../../../subgraph/build', import.meta.url).pathname;
const vault = (n: number): Hex => `0x${n.toString(16).padStart(40, '0')}`;

let subgraph: Subgraph;

beforeAll(async () => {
  subgraph = await loadSubgraph({ buildDir });
});

function fundVault(n: number, context: DynamicDataSource['context'] = null): DynamicDataSource {
  return { template: 'FundVault', address: vault(n), context, createdAtBlock: 10n };
}

const names = (set: DataSourceSet, address: Hex) =>
  set.forAddress(address).map((ds) => `${ds.name}@${ds.address ?? '*'}#${ds.seq}`);

describe('DataSourceSet', () => {
  it('reaches the data sources of a log’s address, and those without an address, in processing order', () => {
    const registry = subgraph.dataSources[0]!;
    // the oracle matches every contract's logs, as a data source without an address does
    const anyAddress = {
      ...subgraph,
      dataSources: subgraph.dataSources.map((ds, i) => (i === 1 ? { ...ds, address: null } : ds)),
    };
    const set = new DataSourceSet(anyAddress, [fundVault(1)]);
    set.add(fundVault(2));
    set.add(fundVault(1, new Map([['slug', { kind: 'String', value: 'second' }]])));
    expect(names(set, vault(1))).toEqual([
      'NavOracle@*#1',
      'FundVault@' + vault(1) + '#3',
      'FundVault@' + vault(1) + '#5',
    ]);
    expect(names(set, vault(3))).toEqual(['NavOracle@*#1']);
    expect(names(set, registry.address!)).toEqual([`FundRegistry@${registry.address}#0`, 'NavOracle@*#1']);
  });

  it('refuses an instance of the same template, address and context as one it holds', () => {
    const set = new DataSourceSet(subgraph, [fundVault(1)]);
    const size = set.size;
    expect(set.add({ ...fundVault(1), address: vault(1).toUpperCase().replace('0X', '0x') as Hex })).toBe(
      false,
    );
    expect(set.size).toBe(size);
    expect(set.add(fundVault(1, new Map([['slug', { kind: 'String', value: 'other' }]])))).toBe(true);
  });

  it('asks for the logs of a data source without an address from any address by its handlers’ topics, apart from the addressed ones', () => {
    const recipient = `0x${'00'.repeat(31)}07` as Hex;
    const oracle = subgraph.dataSources[1]!;
    /** the subgraph with the oracle matching any address, its handlers filtered by topic1 (or some not) */
    const withOracle = (filtered: (index: number) => boolean): Subgraph => {
      const handlers = new Map(
        [...oracle.mapping.handlers].map(([topic0, specs], index) => [
          topic0,
          specs.map((spec) => ({
            ...spec,
            topicFilters: filtered(index) ? [new Set([recipient]), null, null] : [],
          })),
        ]),
      );
      const mapping = { ...oracle.mapping, handlers };
      return {
        ...subgraph,
        dataSources: subgraph.dataSources.map((ds) =>
          ds === oracle ? { ...ds, address: null, mapping } : ds,
        ),
      };
    };
    const topic0s = [...oracle.mapping.handlers.keys()];
    const narrowed = new DataSourceSet(withOracle(() => true)).logFilter();
    expect(narrowed.addresses).toEqual(
      subgraph.dataSources.filter((ds) => ds !== oracle).map((ds) => ds.address),
    );
    expect(narrowed.anyAddressTopics).toEqual(topic0s.map((t0) => [[t0], [recipient]]));
    expect(narrowed.topics.filter((t) => oracle.mapping.handlers.has(t))).toEqual([]);
    // the handlers without a filter ask for their topic0s together, from any address, and leave the
    // other data sources' topics to their addresses
    const mixed = new DataSourceSet(withOracle((index) => index > 0)).logFilter();
    expect(mixed.addresses).toEqual(narrowed.addresses);
    expect(mixed.anyAddressTopics).toEqual([
      [[topic0s[0]]],
      ...topic0s.slice(1).map((t0) => [[t0], [recipient]]),
    ]);
    const unfiltered = new DataSourceSet(withOracle(() => false)).logFilter();
    expect(unfiltered.anyAddressTopics).toEqual([[topic0s]]);
  });

  it('names each address once in its log filter and keeps the filter object until it changes', () => {
    const set = new DataSourceSet(subgraph, [fundVault(1)]);
    set.add(fundVault(1, new Map([['slug', { kind: 'String', value: 'other' }]])));
    const filter = set.logFilter();
    expect(filter.addresses!.filter((a) => a === vault(1))).toHaveLength(1);
    expect(set.logFilter()).toBe(filter);
    set.add(fundVault(2));
    expect(set.logFilter()).not.toBe(filter);
    expect(set.logFilter().addresses).toEqual([...filter.addresses, vault(2)]);
  });

  it('drops the instances added after a size on truncate, as if they had never been added', () => {
    const set = new DataSourceSet(subgraph, [fundVault(1)]);
    const size = set.size;
    const before = set.logFilter();
    set.add(fundVault(2));
    set.add(fundVault(1, new Map([['slug', { kind: 'String', value: 'other' }]])));
    set.truncate(size);
    expect(set.size).toBe(size);
    expect(set.dynamic.map((d) => d.address)).toEqual([vault(1)]);
    expect(set.forAddress(vault(2))).toEqual([]);
    expect(names(set, vault(1))).toEqual([`FundVault@${vault(1)}#3`]);
    expect(set.logFilter()).toEqual(before);
    // the dropped instances are not remembered as held
    expect(set.add(fundVault(2))).toBe(true);
  });

  it('past the static filters threshold, names only the static addresses and asks for the templates’ events from any address', () => {
    const statics = subgraph.dataSources.map((ds) => ds.address!);
    const set = new DataSourceSet(subgraph, [fundVault(1)], { staticFiltersAbove: 4 });
    expect(set.logFilter().addresses).toEqual([...statics, vault(1)]);
    set.add(fundVault(2));
    const beyond = set.logFilter();
    const templateTopics = [...subgraph.templates.get('FundVault')!.mapping.handlers.keys()];
    expect(beyond.addresses).toEqual(statics);
    expect(beyond.topics).toEqual([
      ...new Set(subgraph.dataSources.flatMap((ds) => [...ds.mapping.handlers.keys()])),
    ]);
    expect(beyond.anyAddressTopics).toEqual([[templateTopics]]);
    // the same filter however many instances come, so ranges fetched ahead stay valid
    set.add(fundVault(3));
    expect(set.logFilter()).toBe(beyond);
    set.truncate(4);
    expect(set.logFilter().addresses).toEqual([...statics, vault(1)]);
  });

  it('leaves the static data sources that end before a block out of its filters, and only those', () => {
    const oracle = subgraph.dataSources[1]!;
    const ending = {
      ...subgraph,
      dataSources: subgraph.dataSources.map((ds, i) => (i === 1 ? { ...ds, endBlock: 100n } : ds)),
    };
    const set = new DataSourceSet(ending, [fundVault(1)]);
    const all = set.logFilter();
    set.filterFrom(100n);
    expect(set.logFilter()).toBe(all);
    set.filterFrom(101n);
    const after = set.logFilter();
    expect(new Set(after.addresses)).toEqual(new Set(all.addresses.filter((a) => a !== oracle.address)));
    const othersTopics = [...ending.dataSources, subgraph.templates.get('FundVault')!].flatMap((ds) =>
      ds === ending.dataSources[1] ? [] : [...ds.mapping.handlers.keys()],
    );
    expect(new Set(after.topics)).toEqual(new Set(othersTopics));
    // still in the set, for the blocks up to its end
    expect(names(set, oracle.address!)).toEqual([`NavOracle@${oracle.address}#1`]);
  });

  it('puts an ended data source back in its filters when the block it is asked from moves back (a rollback, a reorg)', () => {
    const oracle = subgraph.dataSources[1]!;
    const ending = {
      ...subgraph,
      dataSources: subgraph.dataSources.map((ds, i) => (i === 1 ? { ...ds, endBlock: 100n } : ds)),
    };
    const set = new DataSourceSet(ending, [fundVault(1)], { staticFiltersAbove: 3 });
    const all = set.logFilter();
    expect(all.addresses).toContain(oracle.address);
    set.filterFrom(200n);
    expect(set.logFilter().addresses).not.toContain(oracle.address);
    set.filterFrom(90n);
    expect(new Set(set.logFilter().addresses)).toEqual(new Set(all.addresses));
    expect(new Set(set.logFilter().topics)).toEqual(new Set(all.topics));
  });

  it('refuses to truncate below its static data sources', () => {
    const set = new DataSourceSet(subgraph);
    expect(() => set.truncate(1)).toThrow('truncate() below the static data sources');
  });
});
