// store.set / store.remove / store.get semantics as graph-node applies them, on the project's
// schema and the real SQLite store: merging into the existing entity, every validation error (each
// naming the entity type, id and field), id rules, and immutable entities.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Entity, EntityStoreTx, StoreValue } from '../../../indexer/store/entity.ts';
import { openStore, type IndexerStore } from '../../../indexer/store/sqlite-store.ts';
import { parseSubgraphSchema, type SubgraphSchema } from '../../../indexer/subgraph-schema.ts';
import { B, BI, Bool, I, L, S, schema } from '../store-fixture.ts';
import type { ActiveDataSource } from '../../../indexer/runtime/data-sources.ts';
import { BlockState, HostEnv } from '../../../indexer/runtime/host-context.ts';
import { UNPRUNED_HISTORY_BLOCKS } from '../../../indexer/runtime/manifest.ts';
import { parseEntityId, storeGet, storeRemove, storeSet } from '../../../indexer/runtime/host-store.ts';

const Null: StoreValue = { kind: 'Null' };

const vault = '0x' + '0a'.repeat(20);
const tx = '0x' + '77'.repeat(32);

function fundData(overrides: Record<string, StoreValue> = {}): Entity {
  return new Map(
    Object.entries({
      slug: S('alpha'),
      vault: B(vault),
      shareToken: B('0x' + '0b'.repeat(20)),
      policy: B('0x' + '0c'.repeat(20)),
      closed: Bool(false),
      pausedModules: L([]),
      registeredAtBlock: BI(1n),
      registeredAt: BI(1_700_000_000n),
      registeredTxHash: B(tx),
      ...overrides,
    }),
  );
}

function settlementData(navPerShare: bigint): Entity {
  const fields: Record<string, StoreValue> = { fund: B(vault), epoch: I(3), navPerShare: BI(navPerShare) };
  for (const f of [
    'assetsIn',
    'sharesMinted',
    'sharesBurned',
    'assetsOut',
    'totalAssets',
    'totalSupply',
    'reserveBalance',
  ]) {
    fields[f] = BI(0n);
  }
  return new Map(Object.entries({ ...fields, blockNumber: BI(5n), timestamp: BI(6n), txHash: B(tx) }));
}

function navData(overrides: Record<string, StoreValue> = {}): Entity {
  return new Map(
    Object.entries({
      fund: B(vault),
      epoch: I(1),
      status: S('Draft'),
      navPerShare: BI(1_000_000n),
      totalAssets: BI(5n),
      totalSupply: BI(5n),
      draftedAt: BI(10n),
      draftedTxHash: B(tx),
      rejectionCount: I(0),
      updatedAtBlock: BI(1n),
      ...overrides,
    }),
  );
}

let dir: string;
let store: IndexerStore;
/** the schema the store and the host functions use: the project's, unless a test opens another */
let activeSchema: SubgraphSchema;
let blockNumber = 0;

/** Opens a fresh store, in the test's directory, for `subgraphSchema`. */
function openStoreFor(subgraphSchema: SubgraphSchema, file: string): void {
  activeSchema = subgraphSchema;
  store = openStore({
    path: join(dir, file),
    schema: subgraphSchema,
    startBlock: 0,
    deployment: 'entity-store-test',
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'entity-store-'));
  openStoreFor(schema, 'store.sqlite');
  blockNumber = 0;
  apiVersion = '0.0.9';
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** How a test block runs: with the follower's deferred immutable checks, recording the sets written. */
interface BlockOptions {
  deferImmutableChecks?: boolean;
  /** receives `Type[id]` of every entity written to the block's store transaction */
  written?: string[];
}

/** The writer with every set it is given recorded in `written`. */
function recordingSets(writer: EntityStoreTx, written: string[]): EntityStoreTx {
  return new Proxy(writer, {
    get(target, name) {
      if (name === 'set') {
        return (type: string, id: string, entity: Entity) => {
          written.push(`${type}[${id}]`);
          target.set(type, id, entity);
        };
      }
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Runs `body` as the host functions of one block and commits it (rolls back if it throws). */
function inBlock(body: (env: HostEnv) => void, options: BlockOptions = {}): void {
  blockNumber += 1;
  store.begin();
  try {
    const writer = store.blockWriter(blockNumber);
    const env = hostEnv(
      options.written ? recordingSets(writer, options.written) : writer,
      options.deferImmutableChecks,
    );
    body(env);
    writer.flush();
    const hash = '0x' + blockNumber.toString(16).padStart(64, '0');
    store.commit({ number: blockNumber, hash, parentHash: hash, timestamp: blockNumber }, null);
  } catch (error) {
    store.rollback();
    throw error;
  }
}

/** The data source whose handler is running, as far as store.set looks at it: its apiVersion. */
function dataSource(apiVersion: string): ActiveDataSource {
  return {
    name: 'Test',
    address: null,
    startBlock: 0n,
    endBlock: null,
    context: null,
    seq: 0,
    mapping: {
      apiVersion,
      wasmFile: '',
      module: new WebAssembly.Module(Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0)),
      memoryLimits: { initial: 1, maximum: undefined },
      handlers: new Map(),
      declaresReceipts: false,
      blockHandlers: [],
      callHandlers: new Map(),
      tracesCalls: false,
      abis: new Map(),
      fileHandler: null,
      entities: [],
    },
  };
}

let apiVersion = '0.0.9';

function hostEnv(writer: EntityStoreTx, deferImmutableChecks = false): HostEnv {
  return new HostEnv({
    subgraph: {
      buildDir: '',
      network: 'devnet',
      schemaFile: '',
      dataSources: [],
      templates: new Map(),
      declaresCalls: false,
      fileEntityTypes: new Set(),
      declaredKinds: new Set(['ethereum']),
      specVersion: '1.3.0',
      features: new Set(),
      endBlock: null,
      historyBlocks: UNPRUNED_HISTORY_BLOCKS,
    },
    schema: activeSchema,
    logger: () => undefined,
    chain: null,
    block: new BlockState(BigInt(blockNumber), `0x${'00'.repeat(32)}`, writer, deferImmutableChecks),
    dataSource: dataSource(apiVersion),
  });
}

function current(type: string, id: string): Entity | null {
  return store.getCurrent(type, id);
}

describe('store.set merge', () => {
  it('merges a partial update into the entity stored at an earlier block', () => {
    inBlock((env) => storeSet(env, 'Fund', vault, fundData()));
    inBlock((env) => storeSet(env, 'Fund', vault, new Map([['closed', Bool(true)]])));
    const fund = current('Fund', vault);
    expect(fund?.get('closed')).toEqual(Bool(true));
    expect(fund?.get('slug')).toEqual(S('alpha'));
    expect(fund?.get('id')).toEqual(B(vault));
  });

  it('merges two sets of the same entity within one block', () => {
    inBlock((env) => {
      storeSet(env, 'Fund', vault, fundData());
      storeSet(env, 'Fund', vault, new Map([['slug', S('beta')]]));
    });
    expect(current('Fund', vault)?.get('slug')).toEqual(S('beta'));
    expect(current('Fund', vault)?.get('registeredAt')).toEqual(BI(1_700_000_000n));
  });

  it('removes an optional field set to null', () => {
    const id = `${vault}-1`;
    inBlock((env) => storeSet(env, 'NavRecord', id, navData({ submittedAt: BI(11n) })));
    inBlock((env) => storeSet(env, 'NavRecord', id, new Map([['submittedAt', Null]])));
    expect(current('NavRecord', id)?.has('submittedAt')).toBe(false);
    expect(current('NavRecord', id)?.get('status')).toEqual(S('Draft'));
  });

  it('spells Bytes ids in lowercase hex whatever the mapping passed', () => {
    inBlock((env) => storeSet(env, 'Fund', vault.toUpperCase().replace('0X', '0x'), fundData()));
    expect(current('Fund', vault)).not.toBeNull();
  });
});

describe('store.set validation', () => {
  const where = `Entity Fund[${vault}]`;

  function setFund(data: Entity): () => void {
    return () => inBlock((env) => storeSet(env, 'Fund', vault, data));
  }

  it('rejects a missing non-null field on a new entity', () => {
    const data = fundData();
    data.delete('slug');
    expect(setFund(data)).toThrow(`${where}: missing value for non-nullable field \`slug\``);
  });

  it('rejects null for a non-null field of an existing entity', () => {
    inBlock((env) => storeSet(env, 'Fund', vault, fundData()));
    expect(setFund(new Map([['closed', Null]]))).toThrow(
      `${where}: missing value for non-nullable field \`closed\``,
    );
  });

  it('rejects fields the schema does not define, listing them sorted', () => {
    expect(setFund(fundData({ zeta: S('x'), bogus: I(1) }))).toThrow(
      'Attempted to set undefined fields [bogus, zeta] for the entity type `Fund`. Make sure those fields are defined in the schema.',
    );
  });

  it('drops undefined fields for mappings older than apiVersion 0.0.8', () => {
    apiVersion = '0.0.7';
    inBlock((env) => storeSet(env, 'Fund', vault, fundData({ bogus: I(1) })));
    expect(current('Fund', vault)?.has('bogus')).toBe(false);
    expect(current('Fund', vault)?.get('slug')).toEqual(S('alpha'));
  });

  it('rejects a value of the wrong type', () => {
    expect(setFund(fundData({ slug: I(5) }))).toThrow(
      `${where}: the value \`5\` for field \`slug\` must have type String! but has type Int`,
    );
  });

  it('rejects a scalar where the schema has a list', () => {
    expect(setFund(fundData({ pausedModules: S('claims') }))).toThrow(
      `${where}: the value \`claims\` for field \`pausedModules\` must have type [FundModule!]! but has type String`,
    );
  });

  it('rejects a list element of the wrong type, naming its index', () => {
    expect(setFund(fundData({ pausedModules: L([S('claims'), I(5)]) }))).toThrow(
      `${where}: field \`pausedModules\` is of type [FundModule!]!, but the value \`[claims, 5]\` contains a Int at index 1`,
    );
  });

  it('rejects a reference holding the wrong id type', () => {
    const id = `${vault}-1`;
    expect(() => inBlock((env) => storeSet(env, 'NavRecord', id, navData({ fund: S(vault) })))).toThrow(
      `Entity NavRecord[${id}]: the value \`${vault}\` for field \`fund\` must have type Fund! but has type String`,
    );
  });

  it('rejects a value outside the enum', () => {
    const id = `${vault}-1`;
    expect(() =>
      inBlock((env) => storeSet(env, 'NavRecord', id, navData({ status: S('Approved') }))),
    ).toThrow(
      `Entity NavRecord[${id}]: the value \`Approved\` for field \`status\` is not a value of enum NavStatus (Draft, PendingVerification, Verified, Published)`,
    );
  });

  it('rejects setting a derived field', () => {
    expect(setFund(fundData({ navRecords: L([S('x')]) }))).toThrow(
      `${where}: field \`navRecords\` is derived and cannot be set`,
    );
  });

  it('rejects an id attribute of the wrong type', () => {
    expect(setFund(fundData({ id: S(vault) }))).toThrow(
      'Attribute `Fund.id` has wrong type: expected Bytes but got String',
    );
  });

  it('rejects an id attribute that differs from the id passed to store.set', () => {
    expect(setFund(fundData({ id: B('0x' + '0d'.repeat(20)) }))).toThrow(
      `Value of Fund attribute 'id' conflicts with ID passed to \`store.set()\`: 0x${'0d'.repeat(20)} != ${vault}`,
    );
  });

  it('rejects a Bytes id that is not hex', () => {
    expect(() => inBlock((env) => storeSet(env, 'Fund', 'alpha', fundData()))).toThrow(
      'Entity Fund: id `alpha` is not valid hex for an id of type Bytes',
    );
  });

  it('rejects an entity type the schema does not define', () => {
    expect(() => inBlock((env) => storeSet(env, 'Vault', '1', new Map()))).toThrow(
      'Entity type `Vault` is not defined in the schema',
    );
  });

  it('leaves the store unchanged when a set is rejected', () => {
    expect(setFund(fundData({ slug: I(5) }))).toThrow();
    expect(current('Fund', vault)).toBeNull();
  });
});

describe('immutable entities', () => {
  const id = `${vault}-3`;

  it('may be set again within the block that created them', () => {
    inBlock((env) => {
      storeSet(env, 'Settlement', id, settlementData(1n));
      storeSet(env, 'Settlement', id, settlementData(2n));
    });
    expect(current('Settlement', id)?.get('navPerShare')).toEqual(BI(2n));
  });

  it('cannot be updated in a later block', () => {
    inBlock((env) => storeSet(env, 'Settlement', id, settlementData(1n)));
    expect(() => inBlock((env) => storeSet(env, 'Settlement', id, settlementData(2n)))).toThrow(
      `Entity Settlement[${id}] is immutable and was inserted at an earlier block; it cannot be updated`,
    );
    expect(current('Settlement', id)?.get('navPerShare')).toEqual(BI(1n));
  });

  it('cannot be removed', () => {
    inBlock((env) => storeSet(env, 'Settlement', id, settlementData(1n)));
    expect(() => inBlock((env) => storeRemove(env, 'Settlement', id))).toThrow(
      `Entity Settlement[${id}] is immutable and cannot be removed`,
    );
  });
});

// graph-node's entity cache merges a set into the entity it holds (graph/src/components/store/
// entity_cache.rs, as_modifications): a set that changes nothing (merge_remove_null_fields finds no
// field added, changed or removed) is no modification, so its store never sees it; a change is an
// Overwrite, which the store refuses for immutable types (write.rs, append_row).
describe('immutable entities set again in a later block', () => {
  const imm = parseSubgraphSchema(
    'type Imm @entity(immutable: true) { id: ID!, name: String!, tags: [Bytes!]!, note: String }',
  );
  const immData = (fields: Record<string, StoreValue> = {}): Entity =>
    new Map(Object.entries({ name: S('a'), tags: L([B('0x01'), B('0x02')]), ...fields }));
  const immutableError =
    'Entity Imm[a] is immutable and was inserted at an earlier block; it cannot be updated';

  beforeEach(() => {
    store.close();
    openStoreFor(imm, 'imm.sqlite');
    inBlock((env) => storeSet(env, 'Imm', 'a', immData({ note: S('first') })));
  });

  it('are accepted unchanged after a store.get, writing nothing', () => {
    const before = current('Imm', 'a');
    expect(before?.get('note')).toEqual(S('first'));
    const written: string[] = [];
    inBlock(
      (env) => {
        const loaded = storeGet(env, 'Imm', 'a', 'store');
        storeSet(env, 'Imm', 'a', new Map(loaded));
      },
      { written },
    );
    expect(written).toEqual([]);
    expect(current('Imm', 'a')).toEqual(before);
  });

  it('are accepted unchanged without a store.get, writing nothing', () => {
    // graph-node's cache holds the entity from the block that inserted it on (until evicted)
    const written: string[] = [];
    inBlock((env) => storeSet(env, 'Imm', 'a', immData({ note: S('first') })), { written });
    expect(written).toEqual([]);
    expect(current('Imm', 'a')?.get('note')).toEqual(S('first'));
  });

  it('are accepted with only some fields, at their values, and nulls for fields they lack', () => {
    inBlock((env) => storeSet(env, 'Imm', 'b', immData()));
    const written: string[] = [];
    inBlock(
      (env) => {
        storeSet(env, 'Imm', 'a', new Map([['name', S('a')]]));
        storeSet(env, 'Imm', 'b', new Map([['note', Null]]));
      },
      { written },
    );
    expect(written).toEqual([]);
  });

  it('fail when a field gets another value', () => {
    expect(() => inBlock((env) => storeSet(env, 'Imm', 'a', immData({ note: S('second') })))).toThrow(
      immutableError,
    );
  });

  it('fail when a list field gets another item', () => {
    expect(() => inBlock((env) => storeSet(env, 'Imm', 'a', immData({ tags: L([B('0x01')]) })))).toThrow(
      immutableError,
    );
  });

  it('fail when a null removes a field they hold', () => {
    expect(() => inBlock((env) => storeSet(env, 'Imm', 'a', new Map([['note', Null]])))).toThrow(
      immutableError,
    );
  });

  it('fail when a field they lack is set', () => {
    inBlock((env) => storeSet(env, 'Imm', 'b', immData()));
    expect(() => inBlock((env) => storeSet(env, 'Imm', 'b', immData({ note: S('new') })))).toThrow(
      'Entity Imm[b] is immutable',
    );
  });

  it('count as set in the block when unchanged, for store.get_in_block, with the fields set', () => {
    inBlock((env) => {
      expect(storeGet(env, 'Imm', 'a', 'block')).toBeNull();
      storeSet(env, 'Imm', 'a', immData());
      const inBlock = storeGet(env, 'Imm', 'a', 'block');
      expect(inBlock?.get('name')).toEqual(S('a'));
      // the stored entity's note, which this set left alone, is not what the block set
      expect(inBlock?.has('note')).toBe(false);
    });
  });

  it('fail a change after an unchanged set in the same block', () => {
    expect(() =>
      inBlock((env) => {
        storeSet(env, 'Imm', 'a', immData());
        storeSet(env, 'Imm', 'a', immData({ name: S('z') }));
      }),
    ).toThrow(immutableError);
    expect(current('Imm', 'a')?.get('name')).toEqual(S('a'));
  });

  it('are compared at the set under deferred checks once a store.get found them', () => {
    const written: string[] = [];
    inBlock(
      (env) => {
        storeGet(env, 'Imm', 'a', 'store');
        storeSet(env, 'Imm', 'a', immData());
      },
      { deferImmutableChecks: true, written },
    );
    expect(written).toEqual([]);
    expect(() =>
      inBlock(
        (env) => {
          storeGet(env, 'Imm', 'a', 'store');
          storeSet(env, 'Imm', 'a', immData({ name: S('z') }));
        },
        { deferImmutableChecks: true },
      ),
    ).toThrow(immutableError);
  });

  it('are left to the store under deferred checks without a store.get, which refuses the insert', () => {
    // the follower then runs the block again without deferring, and the set is compared there
    expect(() =>
      inBlock((env) => storeSet(env, 'Imm', 'a', immData()), { deferImmutableChecks: true }),
    ).toThrow('Entity Imm[a] is immutable and was inserted at an earlier block');
  });
});

describe('immutable entities with skipDuplicates', () => {
  const id = `${vault}-3`;

  beforeEach(() => {
    store.close();
    const sdl = readFileSync(new URL('../../../subgraph/schema.graphql', import.meta.url), 'utf8');
    const marked = 'type Settlement @entity(immutable: true, skipDuplicates: true)';
    expect(sdl).toContain('type Settlement @entity(immutable: true)');
    openStoreFor(
      parseSubgraphSchema(sdl.replace('type Settlement @entity(immutable: true)', marked)),
      'skip.sqlite',
    );
  });

  it('keep the first version when a later block sets them again', () => {
    inBlock((env) => storeSet(env, 'Settlement', id, settlementData(1n)));
    inBlock((env) => storeSet(env, 'Settlement', id, settlementData(2n)));
    expect(current('Settlement', id)?.get('navPerShare')).toEqual(BI(1n));
  });

  it('still fail a later block’s set that does not validate, as graph-node validates it before dropping it', () => {
    inBlock((env) => storeSet(env, 'Settlement', id, settlementData(1n)));
    const invalid = new Map([['navPerShare', S('one')]]);
    expect(() => inBlock((env) => storeSet(env, 'Settlement', id, invalid))).toThrow(
      'Entity Settlement[' +
        id +
        ']: the value `one` for field `navPerShare` must have type BigInt! but has type String',
    );
  });

  it('stay when a later block removes them', () => {
    inBlock((env) => storeSet(env, 'Settlement', id, settlementData(1n)));
    inBlock((env) => storeRemove(env, 'Settlement', id));
    expect(current('Settlement', id)?.get('navPerShare')).toEqual(BI(1n));
  });

  it('may still be set again within the block that created them', () => {
    inBlock((env) => {
      storeSet(env, 'Settlement', id, settlementData(1n));
      storeSet(env, 'Settlement', id, settlementData(2n));
    });
    expect(current('Settlement', id)?.get('navPerShare')).toEqual(BI(2n));
  });
});

describe('generated ids (store.set with the id auto)', () => {
  const ticks =
    'type Tick @entity(immutable: true) { id: Int8! n: Int! } type Mark @entity { id: Bytes! n: Int! }';
  const n = (value: number): Entity => new Map([['n', I(value)]]);

  beforeEach(() => {
    store.close();
    openStoreFor(parseSubgraphSchema(ticks), 'ticks.sqlite');
  });

  it('number the block’s entities of every type in one sequence below the block number', () => {
    inBlock((env) => {
      storeSet(env, 'Tick', 'auto', n(1));
      storeSet(env, 'Mark', 'auto', n(2));
      storeSet(
        env,
        'Tick',
        'auto',
        new Map([
          ['id', { kind: 'Int8', value: 99n }],
          ['n', I(3)],
        ]),
      );
    });
    inBlock((env) => storeSet(env, 'Tick', 'auto', n(4)));
    expect(current('Tick', String(2 ** 32))?.get('n')).toEqual(I(1));
    expect(current('Mark', '0x0000000100000001')?.get('n')).toEqual(I(2));
    expect(current('Tick', String(2 ** 32 + 2))?.get('id')).toEqual({ kind: 'Int8', value: 2n ** 32n + 2n });
    expect(current('Tick', String(2 * 2 ** 32))?.get('n')).toEqual(I(4));
  });

  it('are refused for String ids, in graph-node’s words', () => {
    store.close();
    openStoreFor(schema, 'strings.sqlite');
    expect(() => inBlock((env) => storeSet(env, 'NavRecord', 'auto', navData()))).toThrow(
      'String does not support generating ids',
    );
  });

  it('are refused to file data sources, in graph-node’s words', () => {
    expect(() =>
      inBlock((env) => {
        const running = env.runtime.dataSource!;
        env.runtime.dataSource = {
          ...running,
          file: { source: 'QmFile', region: 1 },
          mapping: { ...running.mapping, entities: ['Tick'] },
        };
        storeSet(env, 'Tick', 'auto', n(1));
      }),
    ).toThrow('Autogenerated IDs are only supported for onchain data sources');
  });
});

describe('store.remove and store.get', () => {
  it('removes a mutable entity', () => {
    inBlock((env) => storeSet(env, 'Fund', vault, fundData()));
    inBlock((env) => storeRemove(env, 'Fund', vault));
    expect(current('Fund', vault)).toBeNull();
  });

  it('reads the block’s own writes, and get_in_block sees only those', () => {
    const other = '0x' + '0e'.repeat(20);
    inBlock((env) => storeSet(env, 'Fund', other, fundData({ vault: B(other) })));
    inBlock((env) => {
      storeSet(env, 'Fund', vault, fundData({ slug: S('fresh') }));
      expect(storeGet(env, 'Fund', vault, 'store')?.get('slug')).toEqual(S('fresh'));
      expect(storeGet(env, 'Fund', vault, 'block')?.get('slug')).toEqual(S('fresh'));
      expect(storeGet(env, 'Fund', other, 'store')?.get('vault')).toEqual(B(other));
      expect(storeGet(env, 'Fund', other, 'block')).toBeNull();
    });
  });
});

describe('id types', () => {
  const int8Schema = parseSubgraphSchema(`type Counter @entity { id: Int8!, n: Int! }`);
  const counter = int8Schema.entities.get('Counter');

  it('parses Int8 ids as 64-bit integers and rejects anything else', () => {
    if (!counter) throw new Error('Counter missing');
    expect(parseEntityId(counter, '-42')).toEqual({ key: '-42', value: { kind: 'Int8', value: -42n } });
    expect(() => parseEntityId(counter, '9223372036854775808')).toThrow('is not an Int8');
    expect(() => parseEntityId(counter, '4x')).toThrow('is not an Int8');
  });
});
