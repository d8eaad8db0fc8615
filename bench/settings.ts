// The benchmarks' own settings from the environment (BENCH_*, LOAD_*, SOAK_*): decimal digits
// only, as every numeric variable of the project, so a typo stops the run naming the variable
// instead of measuring with NaN.
export function benchSetting(name: string, fallback: number, minimum = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new Error(`${name} must be an integer >= ${minimum} in decimal digits, got "${raw}"`);
  }
  return value;
}
