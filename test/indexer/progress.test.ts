// The initial-sync progress display: one line redrawn in place on a terminal, plain lines at an
// interval otherwise, with blocks done of the head, events/s over the recent window and an ETA.
import { describe, expect, it } from 'vitest';
import type { FollowerProgress } from '../../indexer/follower/follower.ts';
import { createProgressDisplay } from '../../indexer/progress.ts';

function progress(checkpoint: number, events: number, caughtUp = false, filesAwaited = 0): FollowerProgress {
  return { startBlock: 1, checkpoint, head: 1000, events, caughtUp, filesAwaited };
}

describe('progress display', () => {
  it('redraws one terminal line with blocks of head, events/s and ETA', () => {
    const out: string[] = [];
    let now = 0;
    const show = createProgressDisplay({ write: (t) => out.push(t), tty: true, now: () => now });
    show(progress(100, 0));
    now = 2000;
    show(progress(300, 10_000));
    expect(out[1]).toBe(
      '\r\x1b[Kindexing block 300 of 1,000 (30.0%) | 5,000 events/s | 10,000 events | ETA 7s',
    );
    expect(out.every((t) => t.startsWith('\r\x1b[K') && !t.endsWith('\n'))).toBe(true);
  });

  it('prints plain lines no more often than the interval when not on a terminal', () => {
    const out: string[] = [];
    let now = 10_000;
    const show = createProgressDisplay({
      write: (t) => out.push(t),
      tty: false,
      lineIntervalMs: 5000,
      now: () => now,
    });
    show(progress(100, 0));
    now = 11_000;
    show(progress(200, 500));
    now = 16_000;
    show(progress(600, 2500));
    expect(out).toEqual([
      'indexing block 100 of 1,000 (10.0%) | 0 events/s | 0 events | ETA ?\n',
      'indexing block 600 of 1,000 (60.0%) | 417 events/s | 2,500 events | ETA 5s\n',
    ]);
  });

  it('counts the file data sources waiting for their files, when there are any', () => {
    const out: string[] = [];
    const show = createProgressDisplay({ write: (t) => out.push(t), tty: false, now: () => 10_000 });
    show(progress(100, 0, false, 1_200));
    show(progress(1000, 42, true, 3));
    expect(out).toEqual([
      'indexing block 100 of 1,000 (10.0%) | 0 events/s | 0 events | ETA ? | 1,200 files awaited\n',
      'synced to block 1,000 (head 1,000), 42 events; following the head | 3 files awaited\n',
    ]);
  });

  it('reports reaching the head once, on its own line', () => {
    const out: string[] = [];
    const show = createProgressDisplay({ write: (t) => out.push(t), tty: true, now: () => 0 });
    show(progress(1000, 42, true));
    show(progress(1000, 42, true));
    expect(out).toEqual(['\r\x1b[Ksynced to block 1,000 (head 1,000), 42 events; following the head\n']);
  });
});
