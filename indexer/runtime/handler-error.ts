// What a failed handler becomes for the caller of the block processor: a HandlerError naming the
// block, data source, handler and trigger (the subgraph cannot index that block), or, when the
// store or the chain failed underneath the handler, that failure itself (not the subgraph's fault:
// the caller retries). Kept apart from the block processor because it runs only on failure.
import type { Hex, Log } from 'viem';
import type { ActiveDataSource } from './data-sources.ts';
import type { ContractCall } from './ethereum-call.ts';
import { ChainAccessError, StoreAccessError } from './host-context.ts';

/**
 * A deterministic failure of a handler: the subgraph cannot index this block. Failures of the
 * entity store and of chain reads (ChainAccessError) are not HandlerErrors: the block processor
 * rethrows them as they are.
 */
export class HandlerError extends Error {
  constructor(
    message: string,
    readonly blockNumber: bigint,
    readonly dataSource: string,
    readonly handler: string,
    readonly transactionHash: Hex | null,
    readonly logIndex: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The failure of a handler as the caller must see it (see HandlerError, StoreAccessError,
 * ChainAccessError: its subclass ChainReadPending asks the caller to await the read's answer and
 * run the block again from its start), for a log's handler, a call's, a block handler or a file's.
 * The caller discards the data source's mapping instance if the handler ran in it: it may have
 * stopped mid-way.
 */
export function handlerFailure(
  error: unknown,
  ds: ActiveDataSource,
  handler: string | null,
  block: { number: bigint },
  trigger: { log: Log } | { call: ContractCall } | { file: string } | null,
): unknown {
  if (error instanceof StoreAccessError) return error.cause;
  if (error instanceof ChainAccessError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const log = trigger && 'log' in trigger ? trigger.log : null;
  const call = trigger && 'call' in trigger ? trigger.call : null;
  const file = trigger && 'file' in trigger ? trigger.file : null;
  const where = log
    ? `, transaction ${log.transactionHash}, log index ${log.logIndex}`
    : call
      ? `, transaction ${call.transactionHash}, call to ${call.to}`
      : file
        ? `, file ${file}`
        : '';
  return new HandlerError(
    `Handler ${handler ?? '(matching)'} of data source ${ds.name} failed at block ${block.number}${where}: ${message}`,
    block.number,
    ds.name,
    handler ?? '',
    log?.transactionHash ?? call?.transactionHash ?? null,
    log?.logIndex ?? null,
    { cause: error },
  );
}
