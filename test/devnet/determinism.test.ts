// Same seed, same chain: a small scenario run twice on two fresh devnets gives the same
// addresses, the same ledger (transaction hashes included) and the same distribution files.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileContracts } from '../../devnet/compile.ts';
import { scenarioParamsFromEnv } from '../../devnet/scenario-params.ts';
import { startDevnet } from '../../devnet/start-devnet.ts';

const smallScenario = {
  SCENARIO_EPOCHS: '24',
  SCENARIO_INVESTORS: '12',
  SCENARIO_REQUESTS_PER_EPOCH: '3',
  SCENARIO_ONBOARDING_DAYS: '4',
  SCENARIO_ROUND_INTERVAL: '8',
  SCENARIO_CLAIM_BPS: '5000',
};
async function seed(env: Record<string, string>) {
  const { deployment, ledger, dataDir, stop } = await startDevnet({
    tempDirPrefix: 'fund-devnet-determinism-',
    scenario: (dataDir) => scenarioParamsFromEnv(env, dataDir),
  });
  try {
    const files = new Map<string, string>();
    for (const fund of readdirSync(join(dataDir, 'distributions'))) {
      for (const file of readdirSync(join(dataDir, 'distributions', fund))) {
        files.set(`${fund}/${file}`, readFileSync(join(dataDir, 'distributions', fund, file), 'utf8'));
      }
    }
    const { rpcUrl: _rpcUrl, ...addresses } = deployment;
    const { seedingMs: _seedingMs, params: _params, ...history } = ledger;
    return { addresses, history, files };
  } finally {
    await stop();
  }
}

describe('devnet determinism', () => {
  it('replays the same chain from the same seed', async () => {
    compileContracts();
    const first = await seed(smallScenario);
    const second = await seed(smallScenario);
    expect(first.history.rounds.length).toBeGreaterThan(0);
    expect(second.addresses).toEqual(first.addresses);
    expect(second.history).toEqual(first.history);
    expect(second.files).toEqual(first.files);
  });

  it('gives a different history for a different seed', async () => {
    const first = await seed(smallScenario);
    const other = await seed({ ...smallScenario, SCENARIO_SEED: '7' });
    expect(other.addresses).toEqual(first.addresses);
    expect(other.history.requests).not.toEqual(first.history.requests);
  });
});

describe('scenario parameters', () => {
  it('reads SCENARIO_* variables over the defaults', () => {
    const params = scenarioParamsFromEnv({ SCENARIO_EPOCHS: '400', SCENARIO_INVESTORS: '1000' }, '/tmp/x');
    expect([params.epochs, params.investorsPerFund, params.dataDir]).toEqual([400, 1000, '/tmp/x']);
  });

  it('names the variable that is malformed', () => {
    expect(() => scenarioParamsFromEnv({ SCENARIO_EPOCHS: 'many' }, '/tmp/x')).toThrow(/SCENARIO_EPOCHS/);
    expect(() => scenarioParamsFromEnv({ SCENARIO_CLAIM_BPS: '20000' }, '/tmp/x')).toThrow(
      /SCENARIO_CLAIM_BPS/,
    );
  });
});
