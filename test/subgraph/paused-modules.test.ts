// A fund's paused modules over pauses and unpauses of several modules at once, on the test's own
// chain: the scenario never has two modules of one fund paused together, so a mapping that
// forgot the other paused modules on each change would pass it. Each pause or unpause rewrites
// Fund.pausedModules in module-id order and records a PauseChange; the fund's owner (its multisig)
// sends them, each mined as one block, and the embedded indexer indexes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../devnet/deploy.ts';
import { MODULE } from '../../devnet/scenario/funds.ts';
import type { Indexer } from '../../indexer/indexer.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';
import { ChainActions } from '../indexer/chain-actions.ts';
import { devnetIndexers } from '../indexer/devnet-indexers.ts';
import { queryIndexer } from '../indexer/graphql-client.ts';

const { subscriptions: SUBSCRIPTIONS, claims: CLAIMS } = MODULE;

let devnet: PrivateDevnet;
let deployment: Deployment;
let actions: ChainActions;
let indexer: Indexer;
const indexers = devnetIndexers(() => devnetContracts(deployment), 'subgraph-paused-modules-');

const fund = () => deployment.funds[0]!;
const vault = () => fund().vault.toLowerCase();

/** the blocks of the changes, in the order they were mined */
const blocks = { pauseClaims: 0, pauseSubscriptions: 0, unpauseSubscriptions: 0 };

/** The first fund's paused modules as the subgraph holds them at `block`. */
async function pausedAt(block: number): Promise<string[]> {
  const { fund } = await queryIndexer<{ fund: { pausedModules: string[] } }>(
    indexer.queryUrl,
    `{ fund(id: "${vault()}", block: { number: ${block} }) { pausedModules } }`,
  );
  return fund.pausedModules;
}

beforeAll(async () => {
  devnet = await startPrivateDevnet();
  deployment = devnet.deployment;
  actions = new ChainActions(devnet.rpcUrl, deployment);
  // the higher module id first: the list is in module-id order however it was reached
  blocks.pauseClaims = await actions.pause(0, CLAIMS);
  blocks.pauseSubscriptions = await actions.pause(0, SUBSCRIPTIONS);
  blocks.unpauseSubscriptions = await actions.unpause(0, SUBSCRIPTIONS);
  indexer = await indexers.start(devnet.rpcUrl);
  await indexer.waitForBlock(blocks.unpauseSubscriptions);
});

afterAll(async () => {
  await indexers.stopAll();
  await devnet?.stop();
});

describe("a fund's paused modules", () => {
  it('lists both modules, in module-id order, once a second module is paused', async () => {
    expect(await pausedAt(blocks.pauseClaims)).toEqual(['claims']);
    expect(await pausedAt(blocks.pauseSubscriptions)).toEqual(['subscriptions', 'claims']);
  });

  it('keeps the other paused module when one of two is unpaused', async () => {
    expect(await pausedAt(blocks.unpauseSubscriptions)).toEqual(['claims']);
  });

  it('records each pause and unpause as a PauseChange of its module, in its block', async () => {
    const { pauseChanges } = await queryIndexer<{ pauseChanges: unknown[] }>(
      indexer.queryUrl,
      `{ pauseChanges(where: { fund: "${vault()}" }, orderBy: blockNumber) { fund { id } module paused blockNumber } }`,
    );
    const change = (module: string, paused: boolean, block: number) => ({
      fund: { id: vault() },
      module,
      paused,
      blockNumber: String(block),
    });
    expect(pauseChanges).toEqual([
      change('claims', true, blocks.pauseClaims),
      change('subscriptions', true, blocks.pauseSubscriptions),
      change('subscriptions', false, blocks.unpauseSubscriptions),
    ]);
  });
});
