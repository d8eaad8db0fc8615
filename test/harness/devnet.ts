// The devnet part of the shared test harness: compiles the contracts, starts anvil, deploys the
// protocol and seeds the default scenario (whatever SCENARIO_* the shell holds: the suites' expectations
// and the documented examples are the default scenario's) into a temporary data dir. global-setup.ts runs it
// once per vitest run and provides the result to every suite as 'devnet'.
import { compileContracts } from '../../devnet/compile.ts';
import type { Deployment } from '../../devnet/deploy.ts';
import type { Ledger } from '../../devnet/ledger.ts';
import { defaultScenarioParams } from '../../devnet/scenario-params.ts';
import { startDevnet } from '../../devnet/start-devnet.ts';
import { summarizeLedger } from '../../devnet/summary.ts';

export interface DevnetFixture {
  rpcUrl: string;
  deployment: Deployment;
  ledger: Ledger;
  /** Holds distributions/<fund>/<epoch>.json, the files the rounds' uris point to. */
  dataDir: string;
}

export async function startDevnetFixture(): Promise<{ fixture: DevnetFixture; stop(): Promise<void> }> {
  compileContracts();
  const { anvil, deployment, ledger, dataDir, stop } = await startDevnet({
    tempDirPrefix: 'fund-devnet-',
    scenario: (dataDir) => ({ ...defaultScenarioParams, dataDir }),
  });
  console.log(`[harness] devnet ${anvil.rpcUrl}\n${summarizeLedger(deployment, ledger)}`);
  return { fixture: { rpcUrl: anvil.rpcUrl, deployment, ledger, dataDir }, stop };
}
