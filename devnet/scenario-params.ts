// Size and seed of the seeded scenario. Defaults give the standard devnet history (seeds in
// seconds); SCENARIO_* environment variables grow the same history for benchmarks. They are read by
// the rule every process shares (common/env.ts): surrounding whitespace trimmed, a blank value unset.
import { envInteger, type Env } from '../common/env.ts';

export interface ScenarioParams {
  /** PRNG seed: the same seed gives the same history. */
  seed: number;
  /** Daily epochs (days) to simulate; at least 20. */
  epochs: number;
  /** Investors per fund (holders per dividend round come from these). */
  investorsPerFund: number;
  /** Subscription/redemption requests per fund per day once the onboarding days are over. */
  requestsPerEpoch: number;
  /** Days at the start during which every fund onboards its investors. */
  onboardingDays: number;
  /** Epochs between two dividend rounds of a fund. */
  roundInterval: number;
  /** Share of each round's leaves that claim, in bps. */
  claimBps: number;
  /** Directory the distribution files go to (<dataDir>/distributions/<fund>/<epoch>.json). */
  dataDir: string;
}

export const defaultScenarioParams: Omit<ScenarioParams, 'dataDir'> = {
  seed: 20250101,
  epochs: 190,
  investorsPerFund: 240,
  requestsPerEpoch: 6,
  onboardingDays: 20,
  roundInterval: 30,
  claimBps: 1200,
};

const envNames: Record<keyof typeof defaultScenarioParams, string> = {
  seed: 'SCENARIO_SEED',
  epochs: 'SCENARIO_EPOCHS',
  investorsPerFund: 'SCENARIO_INVESTORS',
  requestsPerEpoch: 'SCENARIO_REQUESTS_PER_EPOCH',
  onboardingDays: 'SCENARIO_ONBOARDING_DAYS',
  roundInterval: 'SCENARIO_ROUND_INTERVAL',
  claimBps: 'SCENARIO_CLAIM_BPS',
};

const minimums: Record<keyof typeof defaultScenarioParams, number> = {
  seed: 0,
  epochs: 20,
  investorsPerFund: 1,
  requestsPerEpoch: 0,
  onboardingDays: 1,
  roundInterval: 1,
  claimBps: 0,
};

/** Whether `params` seed the default scenario, the one the discovery documents' examples come from. */
export function isDefaultScenario(params: ScenarioParams): boolean {
  return (Object.keys(defaultScenarioParams) as (keyof typeof defaultScenarioParams)[]).every(
    (key) => params[key] === defaultScenarioParams[key],
  );
}

/** A SCENARIO_* value that cannot be used: its message names the variable and the rule. */
export class ScenarioConfigError extends Error {}

/** Reads SCENARIO_* variables over the defaults; a malformed value stops the start with its name. */
export function scenarioParamsFromEnv(env: Env, dataDir: string): ScenarioParams {
  const params: ScenarioParams = { ...defaultScenarioParams, dataDir };
  for (const key of Object.keys(envNames) as (keyof typeof defaultScenarioParams)[]) {
    const name = envNames[key];
    params[key] = envInteger(env, name, params[key], { min: minimums[key] }, ScenarioConfigError);
  }
  if (params.claimBps > 10_000)
    throw new ScenarioConfigError(`SCENARIO_CLAIM_BPS must be <= 10000, got ${params.claimBps}`);
  if (params.onboardingDays >= params.epochs)
    throw new ScenarioConfigError('SCENARIO_ONBOARDING_DAYS must be below SCENARIO_EPOCHS');
  return params;
}
