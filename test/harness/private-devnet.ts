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
import { compileContracts } from '../../devnet/compile.ts';
import type { Deployment } from '../../devnet/deploy.ts';
import type { Ledger } from '../../devnet/ledger.ts';
import { defaultScenarioParams, type ScenarioParams } from '../../devnet/scenario-params.ts';
import { startDevnet } from '../../devnet/start-devnet.ts';

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
  const { scenario } = options;
  const { anvil, ...devnet } = await startDevnet({
    tempDirPrefix: options.dirPrefix ?? 'private-devnet-',
    scenario: scenario && ((dataDir) => ({ ...defaultScenarioParams, ...scenario, dataDir })),
    automine: options.automine,
  });
  return { rpcUrl: anvil.rpcUrl, ...devnet };
}
