// A backward step of the wall clock (NTP correcting a clock that ran ahead) during an initial sync.
// The indexer measures its intervals on the monotonic clock, so the step changes nothing: catch-up
// goes on committing (a crash loses no more than it would have), and the progress display goes on
// printing lines with sensible rates. Measured with Date.now(), commits stopped until the step's
// length had passed or the head was reached, and the display fell silent as long.
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import type { FollowerProgress } from '../../indexer/follower/follower.ts';
import { createProgressDisplay } from '../../indexer/progress.ts';
import { devnetContracts } from '../harness/indexer.ts';
import { devnetIndexers } from './devnet-indexers.ts';

const STEP_BACK_MS = 3_600_000;

/** Moves Date.now() (and only it: timers go on as with an NTP step) back by STEP_BACK_MS. */
function stepWallClockBack(): void {
  const wallNow = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => wallNow() - STEP_BACK_MS);
}

describe('a backward step of the wall clock during an initial sync', () => {
  const { deployment, rpcUrl } = inject('devnet');
  const indexers = devnetIndexers(() => devnetContracts(deployment), 'indexer-clock-step-');

  afterEach(async () => {
    vi.restoreAllMocks();
    await indexers.stopAll();
  });

  it('leaves catch-up committing every range when every range is to be committed', async () => {
    // commitIntervalMs 0 commits each range written: the interval since the last commit is never
    // negative on the monotonic clock, whatever the wall clock does
    const catchUp: number[] = [];
    let stepped = false;
    const indexer = await indexers.start(rpcUrl, {
      commitIntervalMs: 0,
      maxRange: 10,
      onProgress: (p) => {
        if (p.caughtUp) return;
        // stepped once the first range is committed: the commit the interval is measured from
        if (!stepped) {
          stepped = true;
          stepWallClockBack();
        }
        catchUp.push(p.checkpoint);
      },
    });
    await indexer.waitForHead();
    const stalled = catchUp.filter((checkpoint, i) => i > 0 && checkpoint <= catchUp[i - 1]!);
    expect(stalled).toEqual([]);
    // the scenario's blocks in spans of at most 10: enough ranges for the step to have mattered
    expect(catchUp.length).toBeGreaterThanOrEqual(20);
  });
});

describe('the progress display over a backward step of the wall clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: Date.UTC(2025, 0, 1) });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  const progress = (checkpoint: number, events: number): FollowerProgress => ({
    startBlock: 1,
    checkpoint,
    head: 1000,
    events,
    caughtUp: false,
    filesAwaited: 0,
  });

  it('goes on printing a plain line every interval with the rates of the blocks indexed', () => {
    const lines: string[] = [];
    const show = createProgressDisplay({ write: (text) => void lines.push(text), tty: false });
    show(progress(100, 0));
    vi.advanceTimersByTime(5000);
    // the wall clock steps back an hour; the monotonic clock, as performance.now(), goes on
    vi.setSystemTime(Date.now() - STEP_BACK_MS);
    show(progress(600, 25_000));
    expect(lines).toEqual([
      'indexing block 100 of 1,000 (10.0%) | 0 events/s | 0 events | ETA ?\n',
      'indexing block 600 of 1,000 (60.0%) | 5,000 events/s | 25,000 events | ETA 4s\n',
    ]);
  });
});
