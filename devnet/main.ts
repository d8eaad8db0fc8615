// `npm run devnet`: starts anvil, deploys the protocol, seeds the scenario, writes
// deployment.json and ledger.json to DEVNET_DATA_DIR (default data/devnet), prints what it made,
// and runs until Ctrl-C.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { envValue } from '../common/env.ts';
import { LONG_RUNNING_PERSISTED_STATES } from './anvil.ts';
import { compileContracts } from './compile.ts';
import { ScenarioConfigError, scenarioParamsFromEnv, type ScenarioParams } from './scenario-params.ts';
import { DEPLOYMENT_FILE, DevnetDirError, startDevnet, type SeededDevnet } from './start-devnet.ts';
import { summarizeLedger } from './summary.ts';

const dataDir = resolve(envValue(process.env, 'DEVNET_DATA_DIR') ?? join('data', 'devnet'));
let params: ScenarioParams;
try {
  params = scenarioParamsFromEnv(process.env, dataDir);
} catch (error) {
  if (!(error instanceof ScenarioConfigError)) throw error;
  console.error(`configuration error: ${error.message}`);
  process.exit(2);
}

compileContracts();
// Until the devnet is up, the exit takes anvil down (startAnvil ends it with this process).
let stopDevnet = (): Promise<void> => Promise.resolve();
const stop = (): void => {
  void stopDevnet().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

let devnet: SeededDevnet;
try {
  devnet = await startDevnet({
    anvil: { homeParent: dataDir, maxPersistedStates: LONG_RUNNING_PERSISTED_STATES },
    dataDir,
    scenario: () => params,
    automine: true,
  });
} catch (error) {
  if (!(error instanceof DevnetDirError)) throw error;
  console.error(`start-up error: cannot use DEVNET_DATA_DIR (${dataDir}): ${error.message}`);
  process.exit(1);
}
stopDevnet = devnet.stop;
const { anvil, deployment, ledger } = devnet;
writeFileSync(join(dataDir, 'ledger.json'), JSON.stringify(ledger));
console.log(summarizeLedger(deployment, ledger));
console.log(`\nwrote ${join(dataDir, DEPLOYMENT_FILE)} and ledger.json; distributions under ${dataDir}`);
console.log(`devnet RPC: ${anvil.rpcUrl} (chain id ${deployment.chainId}) - Ctrl-C to stop`);
