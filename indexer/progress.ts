// The initial-sync progress display: blocks done of the head, events per second and an ETA (and
// the file data sources waiting for their files, when there are any). On a terminal one status
// line is redrawn in place, fitted to the terminal's width; otherwise (logs, CI) a plain line is
// printed every few seconds. Rates are measured over a sliding window so they follow the current
// speed. Once the follower reaches the head, one "synced … following the head" line is printed and
// the display stays quiet while it follows, until indexing really falls behind (see FALL_BEHIND_BLOCKS).
import { CAUGHT_UP_DISTANCE, type FollowerProgress } from './follower/follower.ts';

interface Sample {
  at: number;
  checkpoint: number;
  events: number;
}

/** What the display writes to: a stream such as process.stdout. */
interface ProgressStream {
  write(text: string): unknown;
  /** the terminal's width, read at each redraw (so a resized window is followed) */
  columns?: number;
  isTTY?: boolean;
}

export interface ProgressDisplayOptions {
  /** where the display writes; its `columns` bound the status line */
  stream?: ProgressStream;
  /** or a function writing the text (then process.stdout's columns give the width) */
  write?: (text: string) => void;
  /** redraw one line in place (a TTY) instead of printing lines (default: the stream's isTTY) */
  tty?: boolean;
  /** minimum interval between plain lines (default 5 s) */
  lineIntervalMs?: number;
  /**
   * the clock rates and intervals are measured with, in ms (default performance.now(): monotonic, so
   * that a step of the wall clock neither stops the lines nor makes rates negative)
   */
  now?: () => number;
}

/** The display: fed the follower's progress events; `stop()` ends a status line left on the terminal. */
interface ProgressDisplay {
  (progress: FollowerProgress): void;
  /** Ends the status line (redrawn, then a newline) so nothing written after starts mid-line; later events are ignored. */
  stop(): void;
}

const WINDOW_MS = 10_000;

/**
 * A checkpoint at most this far behind the head still follows it: graph-node's CAUGHT_UP_DISTANCE,
 * the distance the follower decides the subgraph is synced by.
 */
const FALL_BEHIND_BLOCKS = CAUGHT_UP_DISTANCE;
/** How long indexing must stay more than FALL_BEHIND_BLOCKS behind for the sync display to return. */
const FALL_BEHIND_MS = 30_000;

/** Erases the terminal line the cursor is on, from its start. */
const CLEAR_LINE = '\r\x1b[K';

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

const awaited = (p: FollowerProgress) =>
  p.filesAwaited > 0 ? ` | ${fmt(p.filesAwaited)} files awaited` : '';

/**
 * The parts of one progress line from the rates over the sample window: the position, in forms
 * from the longest to the shortest, and the other fields in the order they are shown, each with
 * its rank in the order they are dropped when the line is too wide (lowest first).
 */
function progressParts(
  p: FollowerProgress,
  blocksPerSecond: number,
  eventsPerSecond: number,
): { position: string[]; fields: { text: string; drop: number }[] } {
  const total = Math.max(0, p.head - p.startBlock + 1);
  const done = Math.max(0, Math.min(total, p.checkpoint - p.startBlock + 1));
  const percent = `${(total === 0 ? 100 : (done / total) * 100).toFixed(1)}%`;
  const remaining = Math.max(0, p.head - p.checkpoint);
  const eta = remaining === 0 ? 0 : blocksPerSecond > 0 ? remaining / blocksPerSecond : Infinity;
  const fields = [
    { text: `${fmt(eventsPerSecond)} events/s`, drop: 1 },
    { text: `${fmt(p.events)} events`, drop: 2 },
    { text: `ETA ${duration(eta)}`, drop: 0 },
  ];
  if (p.filesAwaited > 0) fields.push({ text: `${fmt(p.filesAwaited)} files awaited`, drop: 3 });
  // a node behind the block indexed (restarted, or one of a load-balanced provider's): no share of
  // a head below the store's to show, and no ETA
  if (p.checkpoint > p.head) {
    return {
      position: [
        `indexed to block ${fmt(p.checkpoint)}; waiting for the node, whose head is block ${fmt(p.head)}`,
        `block ${fmt(p.checkpoint)}; node at ${fmt(p.head)}`,
        `${fmt(p.checkpoint)}; node ${fmt(p.head)}`,
      ],
      fields: fields.filter((f) => f.drop !== 0),
    };
  }
  return {
    position: [
      `indexing block ${fmt(p.checkpoint)} of ${fmt(p.head)} (${percent})`,
      `block ${fmt(p.checkpoint)} of ${fmt(p.head)} (${percent})`,
      `${fmt(p.checkpoint)}/${fmt(p.head)} (${percent})`,
      percent,
    ],
    fields,
  };
}

/**
 * The longest line of the parts within `width` characters (no bound: all of it): the longest form
 * of the position that fits with the fields dropped least important first, whole parts only, never
 * a number cut short; '' when not even the percentage fits.
 */
function fitLine(parts: ReturnType<typeof progressParts>, width: number | undefined): string {
  const join = (position: string, dropped: number) =>
    [position, ...parts.fields.filter((f) => f.drop >= dropped).map((f) => f.text)].join(' | ');
  if (width === undefined) return join(parts.position[0]!, 0);
  for (const position of parts.position) {
    for (let dropped = 0; dropped <= parts.fields.length; dropped++) {
      const line = join(position, dropped);
      if (line.length <= width) return line;
    }
  }
  return '';
}

export function createProgressDisplay(options: ProgressDisplayOptions): ProgressDisplay {
  const { stream } = options;
  if (!options.write && !stream) throw new Error('createProgressDisplay: give a stream or a write function');
  const write = options.write ?? ((text: string) => void stream?.write(text));
  const tty = options.tty ?? Boolean(stream?.isTTY);
  const columns = (): number | undefined => (stream ? stream.columns : process.stdout.columns);
  const now = options.now ?? (() => performance.now());
  const samples: Sample[] = [];
  let lastLineAt = -Infinity;
  /** following the head: "synced" was printed and nothing is shown until indexing falls behind */
  let following = false;
  /** while following, since when the checkpoint has been more than FALL_BEHIND_BLOCKS behind */
  let behindSince: number | null = null;
  /** the status line on the terminal that no newline has ended yet */
  let open: ReturnType<typeof progressParts> | null = null;
  let stopped = false;

  // one column is left free: some terminals wrap as soon as the last one is written
  const width = (): number | undefined => {
    const c = columns();
    return c !== undefined && c > 0 ? c - 1 : undefined;
  };

  const show = (p: FollowerProgress): void => {
    if (stopped) return;
    const t = now();
    samples.push({ at: t, checkpoint: p.checkpoint, events: p.events });
    while (samples.length > 2 && samples[0]!.at < t - WINDOW_MS) samples.shift();
    if (following) {
      // lagging a little (the head moved during the last poll) is following; only a lag that lasts is not
      if (p.caughtUp || p.head - p.checkpoint <= FALL_BEHIND_BLOCKS) {
        behindSince = null;
        return;
      }
      behindSince ??= t;
      if (t - behindSince < FALL_BEHIND_MS) return;
      following = false;
      behindSince = null;
      lastLineAt = -Infinity;
    }
    if (p.caughtUp) {
      following = true;
      open = null;
      const done = `synced to block ${fmt(p.checkpoint)} (head ${fmt(p.head)}), ${fmt(p.events)} events this run; following the head${awaited(p)}`;
      write(tty ? `${CLEAR_LINE}${done}\n` : `${done}\n`);
      return;
    }
    const first = samples[0]!;
    const seconds = (t - first.at) / 1000;
    const blocksPerSecond = seconds > 0 ? (p.checkpoint - first.checkpoint) / seconds : 0;
    const eventsPerSecond = seconds > 0 ? (p.events - first.events) / seconds : 0;
    const parts = progressParts(p, blocksPerSecond, eventsPerSecond);
    if (tty) {
      open = parts;
      write(`${CLEAR_LINE}${fitLine(parts, width())}`);
    } else if (t - lastLineAt >= (options.lineIntervalMs ?? 5000)) {
      lastLineAt = t;
      write(`${fitLine(parts, undefined)}\n`);
    }
  };

  return Object.assign(show, {
    stop(): void {
      if (stopped) return;
      stopped = true;
      // drawn again before the newline: the terminal's echo of ^C, or a log line, may have overwritten it
      if (open) write(`${CLEAR_LINE}${fitLine(open, width())}\n`);
      open = null;
    },
  });
}
