// The initial-sync progress display: one line redrawn in place on a terminal (fitted to its width),
// plain lines at an interval otherwise, with blocks done of the head, events/s over the recent
// window and an ETA; one "synced" line when the head is reached, quiet while following it.
import { afterEach, describe, expect, it } from 'vitest';
import type { FollowerProgress } from '../../indexer/follower/follower.ts';
import { createProgressDisplay, type ProgressDisplayOptions } from '../../indexer/progress.ts';

function progress(
  checkpoint: number,
  events: number,
  caughtUp = false,
  filesAwaited = 0,
  head = 1000,
): FollowerProgress {
  return { startBlock: 1, checkpoint, head, events, caughtUp, filesAwaited };
}

/** A fake terminal (or pipe): what was written, and a width that the test can change. */
function fakeStream(columns: number | undefined, isTTY = true) {
  const writes: string[] = [];
  return { writes, columns, isTTY, write: (text: string) => void writes.push(text) };
}

/** A display over a fake stream with a clock the test moves. */
function display(columns: number | undefined, isTTY = true, options: Partial<ProgressDisplayOptions> = {}) {
  const stream = fakeStream(columns, isTTY);
  const clock = { now: 0 };
  const show = createProgressDisplay({ stream, now: () => clock.now, ...options });
  return { stream, clock, show };
}

const CLEAR = '\r\x1b[K';
/** The text a terminal shows for one write: without the clearing escape and the newline. */
const visible = (text: string) => text.replace(CLEAR, '').replace(/\n$/, '');

/** Progress events 2 s apart at 5,000 events/s, 100 blocks/s (the full line is 76 characters). */
function feedTwo(show: (p: FollowerProgress) => void, clock: { now: number }, filesAwaited = 0) {
  show(progress(100, 0, false, filesAwaited));
  clock.now = 2000;
  show(progress(300, 10_000, false, filesAwaited));
}

const FULL = 'indexing block 300 of 1,000 (30.0%) | 5,000 events/s | 10,000 events | ETA 7s';

describe('progress display', () => {
  it('redraws one terminal line with blocks of head, events/s and ETA', () => {
    const { stream, clock, show } = display(120);
    feedTwo(show, clock);
    expect(stream.writes[1]).toBe(`${CLEAR}${FULL}`);
    expect(stream.writes.every((t) => t.startsWith(CLEAR) && !t.endsWith('\n'))).toBe(true);
  });

  it('says it waits for a node whose head is behind the block indexed, with no share or ETA', () => {
    const { stream, show } = display(120);
    show(progress(2070, 0, false, 0, 82));
    expect(visible(stream.writes[0]!)).toBe(
      'indexed to block 2,070; waiting for the node, whose head is block 82 | 0 events/s | 0 events',
    );
  });

  it('prints plain lines no more often than the interval when not on a terminal', () => {
    const { stream, clock, show } = display(undefined, false, { lineIntervalMs: 5000 });
    clock.now = 10_000;
    show(progress(100, 0));
    clock.now = 11_000;
    show(progress(200, 500));
    clock.now = 16_000;
    show(progress(600, 2500));
    expect(stream.writes).toEqual([
      'indexing block 100 of 1,000 (10.0%) | 0 events/s | 0 events | ETA ?\n',
      'indexing block 600 of 1,000 (60.0%) | 417 events/s | 2,500 events | ETA 5s\n',
    ]);
  });

  it('does not shorten plain lines to the width of a terminal it is not writing to', () => {
    const { stream, clock, show } = display(40, false);
    feedTwo(show, clock);
    expect(stream.writes).toEqual(['indexing block 100 of 1,000 (10.0%) | 0 events/s | 0 events | ETA ?\n']);
  });

  it('counts the file data sources waiting for their files, when there are any', () => {
    const { stream, show } = display(undefined, false);
    show(progress(100, 0, false, 1_200));
    show(progress(1000, 42, true, 3));
    expect(stream.writes).toEqual([
      'indexing block 100 of 1,000 (10.0%) | 0 events/s | 0 events | ETA ? | 1,200 files awaited\n',
      'synced to block 1,000 (head 1,000), 42 events this run; following the head | 3 files awaited\n',
    ]);
  });

  it('reports reaching the head once, on its own line', () => {
    const { stream, show } = display(120);
    show(progress(1000, 42, true));
    show(progress(1000, 42, true));
    expect(stream.writes).toEqual([
      `${CLEAR}synced to block 1,000 (head 1,000), 42 events this run; following the head\n`,
    ]);
  });

  describe('on a narrow terminal', () => {
    it('drops the ETA first when the line is wider than a 70-column terminal', () => {
      const { stream, clock, show } = display(70);
      feedTwo(show, clock);
      expect(FULL.length).toBeGreaterThan(69);
      expect(stream.writes[1]).toBe(
        `${CLEAR}indexing block 300 of 1,000 (30.0%) | 5,000 events/s | 10,000 events`,
      );
    });

    it('drops events/s after the ETA when the terminal is narrower still', () => {
      const { stream, clock, show } = display(55);
      feedTwo(show, clock);
      expect(stream.writes[1]).toBe(`${CLEAR}indexing block 300 of 1,000 (30.0%) | 10,000 events`);
    });

    it('keeps the files awaited longer than the other fields', () => {
      const { stream, clock, show } = display(60);
      feedTwo(show, clock, 7);
      expect(stream.writes[1]).toBe(`${CLEAR}indexing block 300 of 1,000 (30.0%) | 7 files awaited`);
    });

    it('shortens the position to whole numbers only when no field fits beside it', () => {
      const { stream, clock, show } = display(27);
      feedTwo(show, clock);
      expect(stream.writes[1]).toBe(`${CLEAR}block 300 of 1,000 (30.0%)`);
    });

    it('shows only the percentage when nothing longer fits', () => {
      const { stream, clock, show } = display(10);
      feedTwo(show, clock);
      expect(stream.writes[1]).toBe(`${CLEAR}30.0%`);
    });

    it('never writes a line as wide as the terminal, at any width', () => {
      for (let columns = 1; columns <= 100; columns++) {
        const { stream, clock, show } = display(columns);
        feedTwo(show, clock, 1_200);
        for (const text of stream.writes) expect(visible(text).length).toBeLessThan(columns);
      }
    });

    it('reads the width at each redraw, so a resized window is followed', () => {
      const { stream, clock, show } = display(120);
      feedTwo(show, clock);
      stream.columns = 70;
      show(progress(300, 10_000));
      stream.columns = 120;
      show(progress(300, 10_000));
      expect(stream.writes.slice(1).map(visible)).toEqual([
        FULL,
        'indexing block 300 of 1,000 (30.0%) | 5,000 events/s | 10,000 events',
        FULL,
      ]);
    });

    it('clears the previous line before every redraw', () => {
      const { stream, clock, show } = display(120);
      feedTwo(show, clock);
      stream.columns = 30;
      show(progress(400, 12_000));
      expect(stream.writes.length).toBe(3);
      expect(stream.writes.every((t) => t.startsWith(CLEAR))).toBe(true);
    });
  });

  describe('without a stream', () => {
    const described = Object.getOwnPropertyDescriptor(process.stdout, 'columns');
    afterEach(() => {
      if (described) Object.defineProperty(process.stdout, 'columns', described);
      else delete (process.stdout as { columns?: number }).columns;
    });

    it("fits the terminal line to process.stdout's width, where npm run indexer writes", () => {
      Object.defineProperty(process.stdout, 'columns', { value: 70, configurable: true, writable: true });
      const writes: string[] = [];
      const clock = { now: 0 };
      const show = createProgressDisplay({ write: (t) => writes.push(t), tty: true, now: () => clock.now });
      feedTwo(show, clock);
      expect(writes[1]).toBe(`${CLEAR}indexing block 300 of 1,000 (30.0%) | 5,000 events/s | 10,000 events`);
    });
  });

  describe('following the head', () => {
    /** Reaches the head, then the head moves 19-25 blocks per poll over ranges of 10 blocks. */
    function followFastHead(show: (p: FollowerProgress) => void, clock: { now: number }) {
      show(progress(30_700, 100, true, 0, 30_700));
      let checkpoint = 30_700;
      for (let poll = 1; poll <= 20; poll++) {
        clock.now += 1000;
        const head = checkpoint + 19 + (poll % 7);
        while (checkpoint + 10 < head) {
          checkpoint += 10;
          show(progress(checkpoint, 100, false, 0, head));
        }
        checkpoint = head;
        show(progress(checkpoint, 100, true, 0, head));
      }
    }

    it.each([true, false])(
      'stays following when the head moves more than one range per poll (terminal: %s)',
      (tty) => {
        const { stream, clock, show } = display(120, tty);
        followFastHead(show, clock);
        expect(stream.writes.map(visible)).toEqual([
          'synced to block 30,700 (head 30,700), 100 events this run; following the head',
        ]);
      },
    );

    it('stays following while more than 10 blocks behind for less than 30 seconds', () => {
      const { stream, clock, show } = display(120);
      show(progress(1000, 0, true));
      for (clock.now = 1000; clock.now < 30_000; clock.now += 1000) show(progress(1000, 0, false, 0, 1500));
      expect(stream.writes.length).toBe(1);
    });

    it('returns to the sync display after staying more than 10 blocks behind for 30 seconds', () => {
      const { stream, clock, show } = display(120);
      show(progress(1000, 0, true));
      for (clock.now = 1000; clock.now <= 31_000; clock.now += 1000) show(progress(1000, 0, false, 0, 1500));
      expect(stream.writes.slice(1).map(visible)).toEqual([
        'indexing block 1,000 of 1,500 (66.7%) | 0 events/s | 0 events | ETA ?',
      ]);
    });

    it('starts the 30 seconds again whenever the lag comes back within 10 blocks', () => {
      const { stream, clock, show } = display(120);
      show(progress(1000, 0, true));
      for (clock.now = 1000; clock.now <= 50_000; clock.now += 1000) {
        const behind = clock.now === 25_000 ? 10 : 400;
        show(progress(1000, 0, false, 0, 1000 + behind));
      }
      expect(stream.writes.length).toBe(1);
    });

    it('prints synced again, once, when caught up after a real fall-behind', () => {
      const { stream, clock, show } = display(120);
      show(progress(1000, 0, true));
      for (clock.now = 1000; clock.now <= 31_000; clock.now += 1000) show(progress(1000, 0, false, 0, 1500));
      show(progress(1500, 9, true, 0, 1500));
      show(progress(1500, 9, false, 0, 1520));
      show(progress(1520, 9, true, 0, 1520));
      expect(stream.writes.filter((t) => t.includes('synced')).map(visible)).toEqual([
        'synced to block 1,000 (head 1,000), 0 events this run; following the head',
        'synced to block 1,500 (head 1,500), 9 events this run; following the head',
      ]);
      expect(stream.writes.at(-1)!.startsWith(`${CLEAR}synced to block 1,500`)).toBe(true);
    });
  });

  describe('stop', () => {
    it('ends the status line on a terminal with a newline, drawing it again first', () => {
      const { stream, clock, show } = display(120);
      feedTwo(show, clock);
      show.stop();
      expect(stream.writes.at(-1)).toBe(`${CLEAR}${FULL}\n`);
    });

    it('fits the line it ends to the width at the time of stopping', () => {
      const { stream, clock, show } = display(120);
      feedTwo(show, clock);
      stream.columns = 55;
      show.stop();
      expect(stream.writes.at(-1)).toBe(`${CLEAR}indexing block 300 of 1,000 (30.0%) | 10,000 events\n`);
    });

    it('writes nothing when the last line already ended (synced, or not a terminal)', () => {
      const synced = display(120);
      synced.show(progress(1000, 0, true));
      synced.show.stop();
      const plain = display(120, false);
      feedTwo(plain.show, plain.clock);
      plain.show.stop();
      expect(synced.stream.writes.length).toBe(1);
      expect(plain.stream.writes.length).toBe(1);
    });

    it('ignores the progress events that come after it', () => {
      const { stream, clock, show } = display(120);
      feedTwo(show, clock);
      show.stop();
      show.stop();
      show(progress(500, 20_000));
      expect(stream.writes.length).toBe(3);
      expect(stream.writes.at(-1)!.endsWith('\n')).toBe(true);
    });
  });
});
