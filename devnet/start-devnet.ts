// The one way a process brings up a devnet: anvil, the protocol deployed, and (when asked) the
// scenario seeded. npm start, npm run devnet, the benchmarks and the test harnesses all need the
// same three steps and, if one fails, the same undoing of the ones before; each wrote it out itself.
// stop() takes down everything this made (anvil, its home, a temporary data dir) and nothing the
// caller made; a failing step does the same before its error is thrown.
//
// A data dir of the caller's (npm start's <DATA_DIR>/devnet, npm run devnet's DEVNET_DATA_DIR, by
// default the same data/devnet) gets the deployment.json that says which chain runs from it, which
// `npm run indexer` reads to find the devnet. Starting another devnet there while one runs would
// point that file at the new chain, and at a dead one once it stops: a devnet whose deployment.json
// names a chain that answers is refused.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirectory } from '../common/directory.ts';
import { startAnvil, type AnvilInstance } from './anvil.ts';
import { deployProtocol, type Deployment } from './deploy.ts';
import type { Ledger } from './ledger.ts';
import { createRpcClient } from './rpc.ts';
import { runScenario } from './scenario.ts';
import type { ScenarioParams } from './scenario-params.ts';

interface DevnetOptions {
  /** How anvil runs (startAnvil's options; default its defaults). */
  anvil?: Parameters<typeof startAnvil>[0];
  /**
   * The scenario to seed once the protocol is deployed, given the data dir its files go to; without
   * it the chain holds the deployment alone and no data dir is made.
   */
  scenario?: (dataDir: string) => ScenarioParams;
  /**
   * A data dir of the caller's: made (before anvil, which may keep its home in it) if missing, given
   * the deployment.json of the devnet, and kept by stop(); refused while another devnet runs from it.
   * Without it a seeded devnet writes to a temporary dir that stop() removes.
   */
  dataDir?: string;
  /** Name prefix of that temporary dir, made in the OS temp directory (default 'devnet-'). */
  tempDirPrefix?: string;
  /**
   * Mine every transaction at once from the end of the set-up on, as a user sending one expects
   * (default false: mined explicitly, as the scenario and the tests that change a chain mine).
   */
  automine?: boolean;
}

interface Devnet {
  anvil: AnvilInstance;
  deployment: Deployment;
  /** Stops anvil and removes the temporary data dir, if one was made; safe to call more than once. */
  stop(): Promise<void>;
}

export interface SeededDevnet extends Devnet {
  ledger: Ledger;
  /** Holds distributions/<fund>/<epoch>.json, the files the rounds' uris point to. */
  dataDir: string;
}

export function startDevnet(
  options: DevnetOptions & { scenario: (dataDir: string) => ScenarioParams },
): Promise<SeededDevnet>;
export function startDevnet(options?: DevnetOptions): Promise<Devnet>;
export async function startDevnet(options: DevnetOptions = {}): Promise<Devnet | SeededDevnet> {
  const callerDir = options.dataDir;
  if (callerDir !== undefined) {
    const running = await runningDevnetIn(callerDir);
    if (running)
      throw new DevnetDirError(
        `${callerDir} is the data dir of a devnet that is running: its ${DEPLOYMENT_FILE} names ${running}, which answers. Stop that devnet (npm run devnet or npm start), or use another directory`,
      );
    inDataDir(callerDir, 'create', () => makeDirectory(callerDir));
  }
  const anvil = await startAnvil(options.anvil);
  let temporaryDir: string | undefined;
  const stop = async (): Promise<void> => {
    await anvil.stop();
    if (temporaryDir !== undefined) rmSync(temporaryDir, { recursive: true, force: true });
  };
  try {
    const deployment = await deployProtocol(anvil.rpcUrl);
    if (callerDir !== undefined) {
      const file = join(callerDir, DEPLOYMENT_FILE);
      inDataDir(file, 'write', () => writeFileSync(file, `${JSON.stringify(deployment, null, 2)}\n`));
    }
    const automine = async () => {
      if (options.automine) await createRpcClient(anvil.rpcUrl).request('evm_setAutomine', [true]);
    };
    if (!options.scenario) {
      await automine();
      return { anvil, deployment, stop };
    }
    let dataDir = callerDir;
    if (dataDir === undefined)
      dataDir = temporaryDir = mkdtempSync(join(tmpdir(), options.tempDirPrefix ?? 'devnet-'));
    const ledger = await runScenario(anvil.rpcUrl, deployment, options.scenario(dataDir));
    await automine();
    return { anvil, deployment, ledger, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The caller's data dir cannot be used: running from it already, or not a directory this process can write. */
export class DevnetDirError extends Error {}

/** `step` on `path` in the caller's data dir, its failure a DevnetDirError naming what was done. */
function inDataDir(path: string, what: string, step: () => void): void {
  try {
    step();
  } catch (error) {
    throw new DevnetDirError(`cannot ${what} ${path}: ${(error as Error).message}`);
  }
}

/** What a devnet's data dir holds to say which chain runs from it: the deployment, its rpcUrl included. */
export const DEPLOYMENT_FILE = 'deployment.json';

/** How long a chain named in a deployment.json has to answer to count as running. */
const RUNNING_CHECK_MS = 1_000;

/** The RPC URL of the devnet running from `dataDir` (its deployment.json names a chain that answers), or null. */
async function runningDevnetIn(dataDir: string): Promise<string | null> {
  let rpcUrl: unknown;
  try {
    rpcUrl = (JSON.parse(readFileSync(join(dataDir, DEPLOYMENT_FILE), 'utf8')) as { rpcUrl?: unknown } | null)
      ?.rpcUrl;
  } catch {
    // none, or not one a devnet wrote: nothing to protect
    return null;
  }
  if (typeof rpcUrl !== 'string') return null;
  try {
    await createRpcClient(rpcUrl, { timeoutMs: RUNNING_CHECK_MS }).request('eth_chainId', []);
    return rpcUrl;
  } catch {
    // no answer, or none a chain gives: nothing runs from there
    return null;
  }
}
