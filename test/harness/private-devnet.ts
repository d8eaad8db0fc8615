// The private devnet: for a suite that changes a chain (mines, reverts, reorgs, kills an indexer
// mid-sync), which must never touch the shared devnet of devnet.ts that every other suite reads.
// It is the one place such a chain is built, so that the suites cannot drift apart in how: its own
// anvil, the protocol deployed (the same deterministic deployment as the shared one), optionally a
// small scenario seeded into a temporary data dir, and stop() that takes all of it down again.
//
// The scenario is the suite's own: its size parameters are required, each suite states the values
// its expectations were written for (they are part of what it tests), and only the seed and the
// requests per epoch fall back to the default scenario's. Without `scenario` the chain holds the
// deployment alone. Mining stays manual, as the scenario and ChainActions want it, unless
// `automine` is set once the chain is seeded.
//
//   const devnet = await startPrivateDevnet({ scenario: { epochs: 20, ... }, dirPrefix: 'my-suite-' });
//   afterAll(() => devnet?.stop());
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAnvil } from '../../devnet/anvil.ts';
import { compileContracts } from '../../devnet/compile.ts';
import { deployProtocol, type Deployment } from '../../devnet/deploy.ts';
import type { Ledger } from '../../devnet/ledger.ts';
import { createRpcClient } from '../../devnet/rpc.ts';
import { runScenario } from '../../devnet/scenario.ts';
import { defaultScenarioParams, type ScenarioParams } from '../../devnet/scenario-params.ts';

/** A suite's small scenario: the size is always stated; the seed and request rate may be the default's. */
export type PrivateScenario = Pick<
  ScenarioParams,
  'epochs' | 'onboardingDays' | 'investorsPerFund' | 'roundInterval' | 'claimBps'
> &
  Partial<Pick<ScenarioParams, 'seed' | 'requestsPerEpoch'>>;

export interface PrivateDevnetOptions {
  /** The scenario to seed after the deployment; none if left out. */
  scenario?: PrivateScenario;
  /** Prefix of the temporary data dir the scenario's distribution files go to (default 'private-devnet-'). */
  dirPrefix?: string;
  /** Mine every transaction at once from the end of the set-up on (default false: mined explicitly). */
  automine?: boolean;
}

export interface PrivateDevnet {
  rpcUrl: string;
  deployment: Deployment;
  /** Stops anvil and removes the data dir; safe to call more than once. */
  stop(): Promise<void>;
}

export interface SeededPrivateDevnet extends PrivateDevnet {
  ledger: Ledger;
  /** Holds distributions/<fund>/<epoch>.json, the files the rounds' uris point to; removed by stop(). */
  dataDir: string;
}

export function startPrivateDevnet(
  options: PrivateDevnetOptions & { scenario: PrivateScenario },
): Promise<SeededPrivateDevnet>;
export function startPrivateDevnet(options?: PrivateDevnetOptions): Promise<PrivateDevnet>;
export async function startPrivateDevnet(
  options: PrivateDevnetOptions = {},
): Promise<PrivateDevnet | SeededPrivateDevnet> {
  compileContracts();
  const anvil = await startAnvil();
  let dataDir: string | undefined;
  const stop = async (): Promise<void> => {
    await anvil.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const deployment = await deployProtocol(anvil.rpcUrl);
    let seeded: { ledger: Ledger; dataDir: string } | undefined;
    if (options.scenario) {
      dataDir = mkdtempSync(join(tmpdir(), options.dirPrefix ?? 'private-devnet-'));
      const params = { ...defaultScenarioParams, ...options.scenario, dataDir };
      seeded = { ledger: await runScenario(anvil.rpcUrl, deployment, params), dataDir };
    }
    if (options.automine) {
      await createRpcClient(anvil.rpcUrl).request('evm_setAutomine', [true]);
    }
    return { rpcUrl: anvil.rpcUrl, deployment, ...seeded, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
