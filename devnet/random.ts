// The scenario's only source of randomness: a seeded pure-rand generator, so the same seed
// replays the same history (and therefore the same chain) every time.
import { unsafeUniformIntDistribution, xoroshiro128plus, type RandomGenerator } from 'pure-rand';

export interface Random {
  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number;
  /** True with probability bps / 10000. */
  chance(bps: number): boolean;
  pick<T>(items: readonly T[]): T;
  shuffle<T>(items: readonly T[]): T[];
  /** An approximately standard-normal draw, scaled by 1000 and rounded (Irwin-Hall of 12 uniforms). */
  normalMilli(): number;
}

export function createRandom(seed: number): Random {
  const rng: RandomGenerator = xoroshiro128plus(seed);
  const int = (min: number, max: number): number => unsafeUniformIntDistribution(min, max, rng);
  return {
    int,
    chance: (bps) => int(0, 9_999) < bps,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(0, items.length - 1)]!;
    },
    shuffle<T>(items: readonly T[]): T[] {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = int(0, i);
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      return copy;
    },
    normalMilli() {
      let sum = 0;
      for (let i = 0; i < 12; i++) sum += int(0, 1_000);
      return sum - 6_000;
    },
  };
}
