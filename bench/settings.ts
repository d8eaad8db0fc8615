// The benchmarks' own settings from the environment (BENCH_*, LOAD_*, SOAK_*), read by the rule
// every process shares (common/env.ts): surrounding whitespace trimmed, a blank value unset, decimal
// digits only, so a typo stops the run naming the variable instead of measuring with NaN.
import { envInteger } from '../common/env.ts';

export function benchSetting(name: string, fallback: number, minimum = 1): number {
  return envInteger(process.env, name, fallback, { min: minimum }, Error);
}
