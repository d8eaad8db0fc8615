// A store that keeps only the last blocks of history (indexerHints.prune, or INDEXER_HISTORY_BLOCKS):
// an indexer over the harness devnet keeping 50 blocks, compared with the harness indexer, which
// keeps them all. At every block it still holds, it answers exactly as the full store does; older
// blocks are refused in graph-node's words; the versions no kept block can see are gone.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { devnetIndexers } from './devnet-indexers.ts';
import { indexingStatusOf, queryErrorOf, queryIndexer } from './graphql-client.ts';

const HISTORY_BLOCKS = 50;
const { deployment, rpcUrl } = inject('devnet');
const full = inject('indexer');
const head = full.indexedBlock;
const indexers = devnetIndexers(() => devnetContracts(deployment), 'indexer-pruned-');
let pruned: Indexer;
let earliest: number;

/** Every mutable entity type's versions as of `block`, as the query API gives them. */
const stateAt = (block: number) => `{
  funds(first: 1000, orderBy: id, block: { number: ${block} }) { id closed pausedModules latestNav { id } latestPublishedNav { id } }
  navRecords(first: 1000, orderBy: id, block: { number: ${block} }) { id status rejectionCount publishedBlock updatedAtBlock }
  dividendRounds(first: 1000, orderBy: id, block: { number: ${block} }) { id claimedCount }
  strategyAllocations(first: 1000, orderBy: id, block: { number: ${block} }) { id }
}`;

beforeAll(async () => {
  pruned = await indexers.start(rpcUrl, { historyBlocks: HISTORY_BLOCKS, reorgThreshold: 10, maxRange: 10 });
  await pruned.waitForBlock(head);
  const indexing = await indexingStatusOf<{
    historyBlocks: number;
    chains: { earliestBlock: { number: string } }[];
  }>(pruned.queryUrl, 'historyBlocks chains { earliestBlock { number } }');
  expect(indexing.historyBlocks).toBe(HISTORY_BLOCKS);
  earliest = Number(indexing.chains[0]!.earliestBlock.number);
}, 120_000);

afterAll(() => indexers.stopAll());

describe('a store keeping 50 blocks of history', () => {
  it('holds between 50 and 60 blocks (graph-node prunes once the history exceeds what it keeps by a fifth)', () => {
    expect(head - earliest).toBeGreaterThanOrEqual(HISTORY_BLOCKS);
    expect(head - earliest).toBeLessThanOrEqual(HISTORY_BLOCKS * 1.2);
  });

  it('answers at every block it holds exactly as a store keeping all history', async () => {
    for (const block of [earliest, earliest + 1, Math.floor((earliest + head) / 2), head]) {
      const fromPruned = await queryIndexer(pruned.queryUrl, stateAt(block));
      expect(fromPruned, `block ${block}`).toEqual(await queryIndexer(full.queryUrl, stateAt(block)));
    }
  });

  it("refuses a block before the ones it holds, in graph-node's words", async () => {
    const query = `{ funds(block: { number: ${earliest - 1} }) { id } }`;
    expect(await queryErrorOf(pruned.queryUrl, query)).toBe(
      `Failed to decode \`block.number\` value: \`subgraph ${pruned.deployment} only has data starting at block number ${earliest} and data for block number ${earliest - 1} is therefore not available\``,
    );
  });

  it('no longer holds the versions no block it holds can see, nor the headers of older blocks', () => {
    const count = (path: string, sql: string) => {
      const db = new Database(path, { readonly: true });
      try {
        return Number(db.prepare(sql).pluck().get());
      } finally {
        db.close();
      }
    };
    const closedBefore = `SELECT count(*) FROM "NavRecord" WHERE "__to" <= ${earliest}`;
    expect(count(full.storePath, closedBefore)).toBeGreaterThan(0);
    expect(count(pruned.storePath, closedBefore)).toBe(0);
    const olderHeaders = `SELECT count(*) FROM "__blocks" WHERE "number" < ${earliest}`;
    expect(count(full.storePath, olderHeaders)).toBeGreaterThan(0);
    expect(count(pruned.storePath, olderHeaders)).toBe(0);
  });
});
