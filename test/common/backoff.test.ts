// The waits between tries after failures in a row (common/backoff.ts backoffMs), with the first and
// longest waits of the places that back off: the follower's ranges and the chain source's requests
// (250 ms to 15 s), the chain source's start-up chain id (250 ms to 2 s), the supervisor's restarts
// (1 s to 60 s), the file fetcher's default (5 s to 600 s) and the service's Redis reconnections
// (100 ms to 5 s).
import { describe, expect, it } from 'vitest';
import { backoffMs, type Backoff } from '../../common/backoff.ts';

const waits = (backoff: Backoff, attempts: number) =>
  Array.from({ length: attempts }, (_, attempt) => backoffMs(attempt, backoff));

describe('backoffMs', () => {
  it('waits the first wait after the first failure and doubles it after each further one', () => {
    expect(waits({ minMs: 250, maxMs: 15_000 }, 6)).toEqual([250, 500, 1_000, 2_000, 4_000, 8_000]);
  });

  it('waits the longest wait once doubling would pass it, however many failures follow', () => {
    expect(waits({ minMs: 250, maxMs: 15_000 }, 10).slice(6)).toEqual([15_000, 15_000, 15_000, 15_000]);
    expect(backoffMs(5_000, { minMs: 250, maxMs: 15_000 })).toBe(15_000);
  });

  it("spaces the chain id's tries at start-up 250 ms, 500 ms, 1 s and 2 s apart", () => {
    expect(waits({ minMs: 250, maxMs: 2_000 }, 4)).toEqual([250, 500, 1_000, 2_000]);
  });

  it('restarts a failed follower after 1 s, doubling up to a minute', () => {
    expect(waits({ minMs: 1_000, maxMs: 60_000 }, 8)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000,
    ]);
  });

  it('tries a file again after 5 s, doubling up to 600 s by default', () => {
    expect(waits({ minMs: 5_000, maxMs: 600_000 }, 9)).toEqual([
      5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000,
    ]);
  });

  it('reconnects to Redis after 100 ms, doubling up to 5 s', () => {
    expect(waits({ minMs: 100, maxMs: 5_000 }, 8)).toEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
  });

  it('never waits when the first wait is 0, however many failures in a row', () => {
    expect(waits({ minMs: 0, maxMs: 15_000 }, 3)).toEqual([0, 0, 0]);
    expect(backoffMs(2_000, { minMs: 0, maxMs: 15_000 })).toBe(0);
  });
});
