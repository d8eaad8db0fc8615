// A small, fully known history written straight into the store through EntityStoreTx (no chain,
// no wasm): what the store and query tests check their answers against. Values are chosen to hit
// the hard cases: negative and 200-bit BigInts, nulls, mixed-case and wildcard-laden strings,
// lists, references, removals, and versions changing from block to block.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Entity, StoreValue } from '../../indexer/store/entity.ts';
import {
  createQueryService,
  type QueryService,
  type QueryServiceOptions,
} from '../../indexer/query/create-query-service.ts';
import { UNPRUNED_HISTORY_BLOCKS } from '../../indexer/runtime/manifest.ts';
import type { BlockWriteBuffer } from '../../indexer/store/block-write-buffer.ts';
import type { BlockHeader } from '../../indexer/store/meta-tables.ts';
import { openStore, type IndexerStore } from '../../indexer/store/sqlite-store.ts';
import { parseSubgraphSchema, type SubgraphSchema } from '../../indexer/subgraph-schema.ts';

export const schema: SubgraphSchema = parseSubgraphSchema(
  readFileSync(new URL('../../subgraph/schema.graphql', import.meta.url), 'utf8'),
);

export const S = (value: string): StoreValue => ({ kind: 'String', value });
export const I = (value: number): StoreValue => ({ kind: 'Int', value });
export const BI = (value: bigint): StoreValue => ({ kind: 'BigInt', value });
/** Bytes as the store reads them back (a plain Uint8Array, not a Buffer), so `toEqual` can compare them. */
export const B = (hex: string): StoreValue => ({
  kind: 'Bytes',
  value: Uint8Array.from(Buffer.from(hex.slice(2), 'hex')),
});
export const Bool = (value: boolean): StoreValue => ({ kind: 'Bool', value });
export const L = (value: StoreValue[]): StoreValue => ({ kind: 'List', value });

export function entity(fields: Record<string, StoreValue>): Entity {
  return new Map(Object.entries(fields));
}

const blockHash = (n: number, fork: number) => '0x' + (fork * 0x1000000 + n).toString(16).padStart(64, '0');

/** A block header; `fork` distinguishes alternative blocks at the same height. */
export function header(number: number, fork = 0, parentFork = fork): BlockHeader {
  return {
    number,
    hash: blockHash(number, fork),
    parentHash: blockHash(number - 1, parentFork),
    timestamp: 1_700_000_000 + number * 12,
  };
}

/**
 * One block committed: a store transaction, the writes `write` makes through the block's writer,
 * flushed, and the commit of `block` with the chain head seen at `headSeen`.
 */
export function commitBlock(
  store: IndexerStore,
  block: BlockHeader,
  headSeen: number | null,
  write: (writer: BlockWriteBuffer) => void,
): void {
  store.begin();
  const writer = store.blockWriter(block.number);
  write(writer);
  writer.flush();
  store.commit(block, headSeen);
}

export const vault1 = '0x' + '01'.repeat(20);
export const vault2 = '0x' + 'aa'.repeat(20);
export const vault3 = '0x' + '55'.repeat(20);

export function fund(
  id: string,
  slug: string,
  closed: boolean,
  paused: string[],
  block: number,
  latestNav?: string,
): Entity {
  const e = entity({
    id: B(id),
    slug: S(slug),
    vault: B(id),
    shareToken: B('0x' + 'ee'.repeat(20)),
    policy: B('0x' + 'cc'.repeat(20)),
    closed: Bool(closed),
    pausedModules: L(paused.map(S)),
    registeredAtBlock: BI(BigInt(block)),
    registeredAt: BI(BigInt(1_700_000_000 + block * 12)),
    registeredTxHash: B('0x' + block.toString(16).padStart(64, '0')),
  });
  if (latestNav) e.set('latestNav', S(latestNav));
  return e;
}

export interface NavInput {
  vault: string;
  epoch: number;
  status: string;
  navPerShare: bigint;
  block: number;
  publishedAt?: bigint;
  reason?: string;
}

export const navId = (vault: string, epoch: number) => `${vault}-${epoch}`;

export function nav(n: NavInput): Entity {
  const e = entity({
    id: S(navId(n.vault, n.epoch)),
    fund: B(n.vault),
    epoch: I(n.epoch),
    status: S(n.status),
    navPerShare: BI(n.navPerShare),
    totalAssets: BI(1_000_000n * BigInt(n.epoch)),
    totalSupply: BI(999n),
    draftedAt: BI(BigInt(n.block)),
    draftedTxHash: B('0x' + 'ab'.repeat(32)),
    rejectionCount: I(n.reason ? 1 : 0),
    updatedAtBlock: BI(BigInt(n.block)),
  });
  if (n.publishedAt !== undefined) e.set('publishedAt', BI(n.publishedAt));
  if (n.reason !== undefined) e.set('lastRejectionReason', S(n.reason));
  return e;
}

export function protocolEvent(
  index: number,
  block: number,
  name: string,
  sortKey: bigint,
  contract: string,
): Entity {
  const id = '0x' + index.toString(16).padStart(8, '0');
  return entity({
    id: B(id),
    contract: B(contract),
    eventName: S(name),
    blockNumber: BI(BigInt(block)),
    timestamp: BI(BigInt(1_700_000_000 + block * 12)),
    txHash: B('0x' + 'fe'.repeat(32)),
    logIndex: BI(BigInt(index)),
    sortKey: BI(sortKey),
    args: S(JSON.stringify({ index })),
  });
}

/** Navs as they stand after each block (the oracle), by block number. */
export const navHistory: Record<number, NavInput[]> = {};

export interface Fixture {
  dir: string;
  path: string;
  store: IndexerStore;
  cleanup(): void;
}

export const deployment = 'QmStoreFixture';

/** A fixture's store as the query service reads it: its file and what the index-node API reports. */
export function fixtureStoreOptions(fixture: Fixture) {
  return {
    storePath: fixture.path,
    schema,
    deployment,
    subgraphName: 'fund-protocol',
    network: 'devnet',
    startBlock: 10,
    historyBlocks: UNPRUNED_HISTORY_BLOCKS,
  };
}

/** The query service over a fixture's store, as the indexer serves it (with `options` over its defaults). */
export function fixtureQueryService(
  fixture: Fixture,
  options: Partial<Pick<QueryServiceOptions, 'maxResultBytes' | 'timeoutMs' | 'keepAliveTimeoutMs'>> = {},
): QueryService {
  return createQueryService({ ...fixtureStoreOptions(fixture), ...options });
}

export interface ServedFixture {
  fixture: Fixture;
  service: QueryService;
  /** the /subgraphs/name/fund-protocol endpoint */
  url: string;
  /** stops the service and removes the store */
  close(): Promise<void>;
}

/** The fixture's history (writeFixture) in a store of its own, `prepare`d further, served by the query service. */
export async function serveFixture(prepare: (fixture: Fixture) => void = () => {}): Promise<ServedFixture> {
  const fixture = createFixture();
  writeFixture(fixture.store);
  prepare(fixture);
  const service = fixtureQueryService(fixture);
  const url = await service.listen(0);
  return {
    fixture,
    service,
    url,
    close: async () => {
      await service.close();
      fixture.cleanup();
    },
  };
}

export const extraEvents = 150;

/**
 * Blocks 10..13:
 * 10: fund alpha; nav alpha-1 Draft; events 1-2
 * 11: fund Beta; alpha-1 Published; alpha-2 Draft (rejected once, reason with % and _)
 * 12: fund gamma; beta-1 Draft (navPerShare -5); beta-2 Verified (2^200); alpha latestNav -> alpha-2; events 3-5
 * 13: beta-2 removed; 150 more events
 */
export function writeFixture(store: IndexerStore, upTo = 13, from = 10): void {
  const navs = new Map<string, NavInput>();
  const put = (w: BlockWriteBuffer, n: NavInput) => {
    navs.set(navId(n.vault, n.epoch), n);
    w.set('NavRecord', navId(n.vault, n.epoch), nav(n));
  };
  const blocks: BlockWrites = {
    10: (w) => {
      w.set('Fund', vault1, fund(vault1, 'alpha-income', false, [], 10));
      put(w, { vault: vault1, epoch: 1, status: 'Draft', navPerShare: 1_000_000n, block: 10 });
      w.set('ProtocolEvent', '0x00000001', protocolEvent(1, 10, 'FundRegistered', 10n << 32n, vault1));
      w.set('ProtocolEvent', '0x00000002', protocolEvent(2, 10, 'NavDrafted', (10n << 32n) + 1n, vault1));
    },
    11: (w) => {
      w.set('Fund', vault2, fund(vault2, 'Beta-Growth', true, ['claims', 'redemptions'], 11));
      put(w, {
        vault: vault1,
        epoch: 1,
        status: 'Published',
        navPerShare: 1_000_000n,
        block: 11,
        publishedAt: 1111n,
      });
      put(w, {
        vault: vault1,
        epoch: 2,
        status: 'Draft',
        navPerShare: 1_020_000n,
        block: 11,
        reason: 'bad_nav 5%',
      });
    },
    12: (w) => {
      w.set('Fund', vault3, fund(vault3, 'gamma_reserve', false, ['subscriptions'], 12));
      put(w, { vault: vault2, epoch: 1, status: 'Draft', navPerShare: -5n, block: 12 });
      put(w, { vault: vault2, epoch: 2, status: 'Verified', navPerShare: 2n ** 200n, block: 12 });
      const alpha = w.get('Fund', vault1)!;
      alpha.set('latestNav', S(navId(vault1, 2)));
      w.set('Fund', vault1, alpha);
      w.set('ProtocolEvent', '0x00000003', protocolEvent(3, 12, 'NavPublished', -(2n ** 70n), vault2));
      w.set('ProtocolEvent', '0x00000004', protocolEvent(4, 12, 'navpublished', 0n, vault2));
      w.set('ProtocolEvent', '0x00000005', protocolEvent(5, 12, 'EpochSettled', 2n ** 64n, vault3));
    },
    13: (w) => {
      w.remove('NavRecord', navId(vault2, 2));
      navs.delete(navId(vault2, 2));
      for (let i = 0; i < extraEvents; i++) {
        w.set(
          'ProtocolEvent',
          '0x' + (1000 + i).toString(16).padStart(8, '0'),
          protocolEvent(1000 + i, 13, 'Bulk', 13n << (32n + BigInt(i)), vault3),
        );
      }
    },
  };
  for (let b = from; b <= upTo; b++) {
    commitBlock(store, header(b), 20, blocks[b]!);
    navHistory[b] = [...navs.values()];
  }
}

export function createFixture(options: { historyBlocks?: number; schema?: SubgraphSchema } = {}): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'indexer-store-'));
  const path = join(dir, 'store.sqlite');
  const store = openStore({ path, schema, startBlock: 10, deployment, ...options });
  return {
    dir,
    path,
    store,
    cleanup: () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Each block's writes, by block number. */
export type BlockWrites = Record<number, (writer: BlockWriteBuffer) => void>;

export interface ServedHistory {
  /** the /subgraphs/name/<subgraphName> endpoint */
  url: string;
  close(): Promise<void>;
}

/**
 * `history` committed block by block (the chain head seen at `headSeen`) into a new store of
 * `schema`, served by the query service as `subgraphName`; close() stops it and removes the store.
 */
export async function serveHistory(options: {
  schema: SubgraphSchema;
  history: BlockWrites;
  startBlock: number;
  headSeen: number;
  deployment: string;
  subgraphName: string;
}): Promise<ServedHistory> {
  const { schema, history, startBlock, deployment, subgraphName } = options;
  const dir = mkdtempSync(join(tmpdir(), `${subgraphName}-`));
  const path = join(dir, 'store.sqlite');
  const store = openStore({ path, schema, startBlock, deployment });
  for (const [number, write] of Object.entries(history)) {
    commitBlock(store, header(Number(number)), options.headSeen, write);
  }
  const service = createQueryService({
    storePath: path,
    schema,
    deployment,
    subgraphName,
    network: 'devnet',
    startBlock,
    historyBlocks: UNPRUNED_HISTORY_BLOCKS,
  });
  const url = await service.listen(0);
  return {
    url,
    async close() {
      await service.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
