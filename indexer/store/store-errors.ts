// The store's failures that its callers tell apart: the follower stops on a conflict a handler
// caused, and retries one the disk or the file system caused. Apart from the store class so that
// telling them apart needs no store.

/** An immutable entity written again by a later block: the store holds its id already. */
export class ImmutableEntityConflict extends Error {
  constructor(
    readonly entityType: string,
    readonly id: string,
    options?: { cause?: unknown },
  ) {
    super(`Entity ${entityType}[${id}] is immutable and was inserted at an earlier block`, options);
  }
}

/**
 * Whether a store failure came from the disk or the file system rather than from what was written:
 * a full disk, an I/O error, a file made read-only or locked. Writing again later can succeed, as
 * it cannot after a constraint failure.
 */
export function isTransientStoreError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR|BUSY|LOCKED|READONLY|CANTOPEN|NOMEM)/.test(code);
}
