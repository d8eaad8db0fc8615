// The writer's side of keeping the WAL within its limit: between two transactions it checkpoints
// the WAL in full and truncates it once it has grown past the limit, taking turns with the
// checkpointer thread it starts (wal-checkpointer.ts), and tells a failed checkpoint once per kind.
// Apart from the store class because none of it concerns what the store holds, only the file it
// is held in.
import Database from 'better-sqlite3';
import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { startWalCheckpointer, type CheckpointFailure, type WalCheckpointer } from './wal-checkpointer.ts';

/**
 * The WAL's size past which the writer, between two transactions, checkpoints it in full and
 * truncates it (or past a quarter of the disk's free space, if that is less), and the size SQLite
 * trims it to when it starts it over. The checkpointer thread copies the commits into the database
 * file meanwhile, but a writer that begins again as soon as it commits leaves it no moment to start
 * the WAL over, and the WAL grew without end (twice the database, ten times with a commit per
 * range), until a disk that had room for the data was full.
 */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * How long the writer's truncating checkpoint waits for reads of the WAL to end (the query
 * workers', each in its own thread): a slow query would otherwise hold indexing, and under
 * `npm start` the REST API, for the writer's whole busy timeout (5 s). A WAL left as it was is
 * truncated at a later try.
 */
export const TRUNCATE_WAIT_MS = 250;

export class WalLimit {
  private readonly checkpointer: WalCheckpointer;
  private readonly walPath: string;
  /** the WAL size past which truncateIfPastLimit() (the store's begin()) checkpoints and truncates it first */
  private walCheckpointAt: number;
  /** the kinds (SQLite codes) of checkpoint failure told already */
  private readonly checkpointFailuresTold = new Set<string>();

  /** Starts the checkpointer thread for the writer `db` of the store at `path`, its tables made. */
  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly walLimit: number,
    private readonly log: (line: string) => void,
  ) {
    // the writer's own checkpoints keep the WAL within its limit (WAL_LIMIT_BYTES)
    this.walPath = `${path}-wal`;
    this.walCheckpointAt = this.walLimitNow();
    this.db.pragma(`journal_size_limit = ${this.walLimit}`);
    this.checkpointer = startWalCheckpointer(path, (failure) => this.checkpointFailed(failure));
  }

  /** Truncates the WAL first if it has grown past its limit; called with no transaction open. */
  truncateIfPastLimit(): void {
    // a stat, between two transactions: the WAL can be started over only when none is open
    if ((statSync(this.walPath, { throwIfNoEntry: false })?.size ?? 0) > this.walCheckpointAt) {
      this.truncate();
    }
  }

  /** Makes the next truncateIfPastLimit() truncate the WAL whatever its size. */
  truncateAtNextBegin(): void {
    this.walCheckpointAt = 0;
  }

  /**
   * Checkpoints the whole WAL into the database file and truncates it, between two of the
   * checkpointer thread's passes. A reader (a query worker, or another process) still reading the
   * WAL after TRUNCATE_WAIT_MS keeps it from being truncated: it is tried again once the WAL has
   * grown by the limit once more.
   */
  truncate(): void {
    const busyTimeout = String(this.db.pragma('busy_timeout', { simple: true }));
    this.db.pragma(`busy_timeout = ${TRUNCATE_WAIT_MS}`);
    try {
      const [{ busy }] = this.checkpointer.between(
        () => this.db.pragma('wal_checkpoint(TRUNCATE)') as [{ busy: bigint }],
      );
      const size = statSync(this.walPath, { throwIfNoEntry: false })?.size ?? 0;
      this.walCheckpointAt = (busy === 0n ? 0 : size) + this.walLimitNow();
    } catch (error) {
      if (!(error instanceof Database.SqliteError)) throw error;
      this.checkpointFailed(error);
    } finally {
      this.db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }

  /** Stops the checkpointer thread. */
  stop(): void {
    this.checkpointer.stop();
  }

  /**
   * How far the WAL may grow from here: the limit, or a quarter of the disk's free space if that is
   * less, so that on a small disk the WAL leaves room for what it is folded into.
   */
  private walLimitNow(): number {
    const { bavail, bsize } = statfsSync(dirname(this.path));
    return Math.min(this.walLimit, (bavail * bsize) / 4);
  }

  /** Tells a failed WAL checkpoint, the first of its kind only: one per commit would flood the log. */
  private checkpointFailed({ code, message }: CheckpointFailure): void {
    if (this.checkpointFailuresTold.has(code)) return;
    this.checkpointFailuresTold.add(code);
    const fix =
      code === 'SQLITE_FULL'
        ? 'free space on its disk'
        : 'check that the file and its directory can be written';
    this.log(
      `store: the WAL of ${this.path} could not be checkpointed into it (${message}, ${code}); it grows until a checkpoint succeeds: ${fix}. Failures of this kind are told once`,
    );
  }
}
