// The initial-sync progress display: blocks done of the head, events per second and an ETA (and
// the file data sources waiting for their files, when there are any). On a
// terminal one status line is redrawn in place; otherwise (logs, CI) a plain line is printed every
// few seconds. Rates are measured over a sliding window so they follow the current speed.
import type { FollowerProgress } from './follower/follower.ts';

interface Sample {
  at: number;
  checkpoint: number;
  events: number;
}

export interface ProgressDisplayOptions {
  write: (text: string) => void;
  /** redraw one line in place (a TTY) instead of printing lines */
  tty: boolean;
  /** minimum interval between plain lines (default 5 s) */
  lineIntervalMs?: number;
  now?: () => number;
}

const WINDOW_MS = 10_000;

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

/** Formats one progress line from the rates over the sample window. */
function formatProgress(p: FollowerProgress, blocksPerSecond: number, eventsPerSecond: number): string {
  const total = Math.max(0, p.head - p.startBlock + 1);
  const done = Math.max(0, Math.min(total, p.checkpoint - p.startBlock + 1));
  const percent = total === 0 ? 100 : (done / total) * 100;
  const remaining = Math.max(0, p.head - p.checkpoint);
  const eta = remaining === 0 ? 0 : blocksPerSecond > 0 ? remaining / blocksPerSecond : Infinity;
  return (
    `indexing block ${fmt(p.checkpoint)} of ${fmt(p.head)} (${percent.toFixed(1)}%)` +
    ` | ${fmt(eventsPerSecond)} events/s | ${fmt(p.events)} events | ETA ${duration(eta)}${awaited(p)}`
  );
}

export function createProgressDisplay(options: ProgressDisplayOptions): (p: FollowerProgress) => void {
  const now = options.now ?? Date.now;
  const samples: Sample[] = [];
  let lastLineAt = 0;
  let reportedCaughtUp = false;
  return (p) => {
    const t = now();
    samples.push({ at: t, checkpoint: p.checkpoint, events: p.events });
    while (samples.length > 2 && samples[0]!.at < t - WINDOW_MS) samples.shift();
    const first = samples[0]!;
    const seconds = (t - first.at) / 1000;
    const blocksPerSecond = seconds > 0 ? (p.checkpoint - first.checkpoint) / seconds : 0;
    const eventsPerSecond = seconds > 0 ? (p.events - first.events) / seconds : 0;
    if (p.caughtUp) {
      if (!reportedCaughtUp) {
        reportedCaughtUp = true;
        const done = `synced to block ${fmt(p.checkpoint)} (head ${fmt(p.head)}), ${fmt(p.events)} events; following the head${awaited(p)}`;
        options.write(options.tty ? `\r\x1b[K${done}\n` : `${done}\n`);
      }
      return;
    }
    reportedCaughtUp = false;
    const line = formatProgress(p, blocksPerSecond, eventsPerSecond);
    if (options.tty) {
      options.write(`\r\x1b[K${line}`);
    } else if (t - lastLineAt >= (options.lineIntervalMs ?? 5000)) {
      lastLineAt = t;
      options.write(`${line}\n`);
    }
  };
}
