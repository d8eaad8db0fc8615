// Exact conversions from the integers the chain and the subgraph carry to the strings the
// API returns. No floating point touches an amount or a NAV.

/** 1234567n, 6 -> "1.234567"; always exactly `decimals` fraction digits. */
export function formatUnits(raw: bigint | string, decimals: number): string {
  const value = BigInt(raw);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals);
  return `${negative ? '-' : ''}${whole}${decimals > 0 ? `.${fraction}` : ''}`;
}

/** Unix seconds (as the subgraph's BigInt string) -> ISO 8601 UTC with milliseconds. */
export function isoFromSeconds(seconds: bigint | string | number): string {
  return new Date(Number(seconds) * 1000).toISOString();
}

/**
 * part / whole as a percent rounded half up to 2 decimals, computed on integers; null when whole is
 * 0, of which no part is a percent (a reserve against no assets is not 0% of them).
 */
export function percentOf(part: bigint, whole: bigint): number | null {
  if (whole === 0n) return null;
  const hundredths = (part * 10_000n + whole / 2n) / whole;
  return Number(hundredths) / 100;
}

export function explorerAddressUrl(explorer: string, address: string): string {
  return `${explorer.replace(/\/$/, '')}/address/${address}`;
}
