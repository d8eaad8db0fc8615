// percentOf, the reserve's share of assets under management: exact on integers, rounded half up
// to 2 decimals, and null where there are no assets to be a percent of.
import { describe, expect, it } from 'vitest';
import { percentOf } from '../../gateway/format.ts';

describe('percentOf', () => {
  it('rounds half up to 2 decimals', () => {
    expect(percentOf(1n, 8n)).toBe(12.5);
    expect(percentOf(1n, 3n)).toBe(33.33);
    expect(percentOf(2n, 3n)).toBe(66.67);
    expect(percentOf(1n, 20_001n)).toBe(0); // just under 0.005% rounds down
    expect(percentOf(1n, 20_000n)).toBe(0.01); // 0.005% rounds half up
  });

  it('is exact for amounts beyond 2^53', () => {
    expect(percentOf(2n ** 200n, 2n ** 201n)).toBe(50);
  });

  it('is over 100 when the part exceeds the whole', () => {
    expect(percentOf(28_153_598_960n, 1_390_000n)).toBe(2_025_438.77);
  });

  it('is null when the whole is 0, whatever the part', () => {
    expect(percentOf(28_153_598_960n, 0n)).toBeNull();
    expect(percentOf(0n, 0n)).toBeNull();
  });
});
