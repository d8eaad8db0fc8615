// A subgraph declaring nonFatalErrors on a real chain: the host-probe subgraph with the feature, on
// the test's own anvil, with probes whose handler aborts (kind 17). As in graph-node, a handler
// error before the subgraph first caught up with the chain head (to within 10 blocks) pauses
// indexing at its block (committed without the handler's changes), and a restart stays paused
// unless fail-fast is off; once synced, indexing goes on past such errors. Queries apply
// graph-node's error policy to the errors' blocks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Indexer } from '../../indexer/indexer.ts';
import { indexingStatusOf, queryAnswer } from './graphql-client.ts';
import { editedProbeBuild } from './probe-build.ts';
import { startProbeChain, startProbeIndexer, type ProbeChain } from './probe-chain.ts';

/** probe kinds: the handler stores the keccak of the input; the handler aborts with the input */
const STORES = 14;
const ABORTS = 17;

let chain: ProbeChain;
let buildDir: string;
let dataDir: string;
let indexer: Indexer | null = null;
/** the block of the first aborting probe */
let failedAt: number;

beforeAll(async () => {
  chain = await startProbeChain();
  buildDir = editedProbeBuild((manifest) =>
    manifest.replace(/^features:$/m, 'features:\n  - nonFatalErrors'),
  );
  dataDir = mkdtempSync(join(tmpdir(), 'probe-non-fatal-data-'));
}, 180_000);

afterAll(async () => {
  await indexer?.stop();
  await chain?.stop();
  rmSync(buildDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

/** (Re)starts the indexer of the subgraph with nonFatalErrors over the test's data directory. */
async function restart(disableFailFast = false): Promise<Indexer> {
  await indexer?.stop();
  const started = await startProbeIndexer(chain, undefined, { buildDir, dataDir, disableFailFast });
  indexer = started.indexer;
  return started.indexer;
}

const storedInputs = async (running: Indexer): Promise<string[]> => {
  const answer = await queryAnswer<{ probeResults: { input: string }[] }>(
    running.queryUrl,
    `{ probeResults(where: { kind: ${STORES} }, orderBy: sequence, subgraphError: allow) { input } }`,
  );
  return answer.data!.probeResults.map((r) => r.input);
};

interface Status {
  synced: boolean;
  health: string;
  paused: boolean;
  fatalError: unknown;
  nonFatalErrors: { message: string; handler: string; deterministic: boolean; block: { number: string } }[];
}
const indexingStatus = (running: Indexer) =>
  indexingStatusOf<Status>(
    running.queryUrl,
    'synced health paused fatalError { message } nonFatalErrors { message handler deterministic block { number } }',
  );

describe('indexer: a subgraph with nonFatalErrors', () => {
  it('pauses at a handler error met before it first caught up with the chain head, its block committed without that handler', async () => {
    const block = await chain.probesInOneBlock([
      { kind: STORES, input: 'a' },
      { kind: ABORTS, input: 'boom' },
      { kind: STORES, input: 'b' },
    ]);
    failedAt = block.number;
    await chain.probe(STORES, 'after the pause');
    // more than 10 blocks (graph-node's caught-up distance) behind the head: not yet synced
    for (let i = 0; i < 10; i++) await chain.mine([]);
    const running = await restart();
    await expect(running.waitForHead()).rejects.toThrow(
      `indexing paused at block ${failedAt}: a handler failed before the subgraph was first synced, within 10 blocks of the chain head`,
    );
    expect(running.status().checkpoint).toBe(failedAt);
    expect(await storedInputs(running)).toEqual(['a', 'b']);
  });

  it('reports the error and the pause through the index-node status API', async () => {
    const status = await indexingStatus(indexer!);
    expect(status).toMatchObject({ synced: false, health: 'unhealthy', paused: true, fatalError: null });
    expect(status.nonFatalErrors).toHaveLength(1);
    expect(status.nonFatalErrors[0]).toMatchObject({
      handler: 'handleProbe',
      deterministic: true,
      block: { number: String(failedAt) },
    });
    expect(status.nonFatalErrors[0]!.message).toContain('boom');
  });

  it('stays paused when restarted', async () => {
    const running = await restart();
    await expect(running.waitForHead()).rejects.toThrow(`indexing paused at block ${failedAt}`);
    expect(running.status().checkpoint).toBe(failedAt);
  });

  it('goes on from the paused block when restarted with fail-fast off', async () => {
    const running = await restart(true);
    await running.waitForHead();
    expect(await storedInputs(running)).toEqual(['a', 'b', 'after the pause']);
    expect(await indexingStatus(running)).toMatchObject({ synced: true, health: 'unhealthy', paused: false });
  });

  it('once synced, indexes on past later handler errors, recording each', async () => {
    const running = await restart();
    await running.waitForHead();
    const block = await chain.probesInOneBlock([
      { kind: ABORTS, input: 'boom again' },
      { kind: STORES, input: 'c' },
    ]);
    await running.waitForBlock(await chain.probe(STORES, 'd'));
    expect(await storedInputs(running)).toEqual(['a', 'b', 'after the pause', 'c', 'd']);
    const status = await indexingStatus(running);
    expect(status.paused).toBe(false);
    expect(status.nonFatalErrors.map((e) => Number(e.block.number))).toEqual([failedAt, block.number]);
  });

  it('withholds entity data from queries that do not allow indexing errors', async () => {
    const answer = await queryAnswer(
      indexer!.queryUrl,
      `{ probeResults(where: { kind: ${STORES} }) { input } }`,
    );
    expect(answer).toEqual({ errors: [{ message: 'indexing_error' }] });
  });

  it('answers queries at blocks before the first error without one', async () => {
    const before = failedAt - 1;
    const answer = await queryAnswer(
      indexer!.queryUrl,
      `{ probeResults(where: { kind: ${STORES} }, block: { number: ${before} }) { input } _meta(block: { number: ${before} }) { hasIndexingErrors } }`,
    );
    expect(answer).toEqual({ data: { probeResults: [], _meta: { hasIndexingErrors: false } } });
  });
});

describe('indexer: a subgraph with nonFatalErrors syncing for the first time', () => {
  let fresh: ProbeChain;
  let running: Awaited<ReturnType<typeof startProbeIndexer>> | null = null;
  beforeAll(async () => {
    fresh = await startProbeChain();
  }, 180_000);
  afterAll(async () => {
    await running?.stop();
    await fresh?.stop();
  });

  it('does not pause at a handler error within 10 blocks of the chain head, where graph-node counts it synced', async () => {
    const block = await fresh.probesInOneBlock([
      { kind: ABORTS, input: 'near the head' },
      { kind: STORES, input: 'kept' },
    ]);
    for (let i = 0; i < 9; i++) await fresh.mine([]);
    running = await startProbeIndexer(fresh, undefined, { buildDir });
    await running.indexer.waitForHead();
    expect(await storedInputs(running.indexer)).toEqual(['kept']);
    const status = await indexingStatus(running.indexer);
    expect(status).toMatchObject({ synced: true, paused: false, health: 'unhealthy' });
    expect(status.nonFatalErrors.map((e) => Number(e.block.number))).toEqual([block.number]);
  });
});
