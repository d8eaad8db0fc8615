// The one way a process brings up a devnet: anvil, the protocol deployed, and (when asked) the
// scenario seeded. npm start, npm run devnet, the benchmarks and the test harnesses all need the
// same three steps and, if one fails, the same undoing of the ones before; each wrote it out itself.
// stop() takes down everything this made (anvil, its home, a temporary data dir) and nothing the
// caller made; a failing step does the same before its error is thrown.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAnvil, type AnvilInstance } from './anvil.ts';
import { deployProtocol, type Deployment } from './deploy.ts';
import type { Ledger } from './ledger.ts';
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
   * A data dir of the caller's: made (before anvil, which may keep its home in it) if missing, and
   * kept by stop(). Without it a seeded devnet writes to a temporary dir that stop() removes.
   */
  dataDir?: string;
  /** Name prefix of that temporary dir, made in the OS temp directory (default 'devnet-'). */
  tempDirPrefix?: string;
}

export interface Devnet {
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
  if (options.dataDir !== undefined) mkdirSync(options.dataDir, { recursive: true });
  const anvil = await startAnvil(options.anvil);
  let temporaryDir: string | undefined;
  const stop = async (): Promise<void> => {
    await anvil.stop();
    if (temporaryDir !== undefined) rmSync(temporaryDir, { recursive: true, force: true });
  };
  try {
    const deployment = await deployProtocol(anvil.rpcUrl);
    if (!options.scenario) return { anvil, deployment, stop };
    let dataDir = options.dataDir;
    if (dataDir === undefined)
      dataDir = temporaryDir = mkdtempSync(join(tmpdir(), options.tempDirPrefix ?? 'devnet-'));
    const ledger = await runScenario(anvil.rpcUrl, deployment, options.scenario(dataDir));
    return { anvil, deployment, ledger, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
