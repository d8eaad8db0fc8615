// The query workers (query-worker.ts) as the HTTP server sees them: run(api, requestJson) resolves with
// the answer's JSON text once a worker has executed it. Requests wait their turn for a free worker;
// each has `timeoutMs` from its arrival to be answered (graph-node's GRAPH_GRAPHQL_QUERY_TIMEOUT).
// A request still waiting when its time is up is answered without running. One still running is
// answered all the same, and its worker is ended, since nothing else stops a synchronous query.
// A worker that runs out of its heap ends, its request told so; one that fails otherwise (a bug)
// ends too, its request answered with an internal error.
// One worker is kept ready at all times; more start while requests wait for one and end once idle,
// so that an indexer nobody queries holds one worker's memory.
import { Worker } from 'node:worker_threads';
import { checkThreadBundle } from '../../common/thread-bundle.ts';
import type { QueryApiName, QueryJob, QueryWorkerData, QueryWorkerMessage } from './query-worker.ts';

/**
 * How long a request may take unless INDEXER_QUERY_TIMEOUT_MS says otherwise (graph-node sets no
 * limit by default). Far above any query the gateway makes, even on the benchmark's 138,711-event
 * store (at most ~1.3 s, a query refused by the result-size limit), it ends those whose cost grows
 * without bound with history: deep `skip`s, pattern filters, sorts of every match.
 */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

/** How long a worker beyond the first stays without a request before it ends (~38 MB each). */
const EXTRA_WORKER_IDLE_MS = 30_000;

/**
 * The heap a query worker has at least, in MiB. The largest answer the default result-size limit
 * lets through needs 32 to 48 MiB; a heap left to V8's default grew under load to hundreds of MiB
 * per worker, since nothing made it collect sooner.
 */
const MIN_QUERY_WORKER_HEAP_MB = 128;

/** A query worker's heap, in MiB: room for four times the result-size limit, and at least 128. */
export function queryWorkerHeapMb(maxResultBytes: number): number {
  return Math.max(MIN_QUERY_WORKER_HEAP_MB, Math.ceil((maxResultBytes * 4) / 2 ** 20));
}

/**
 * What a request came to: the answer to send (with its HTTP status, 200 unless said), or a failure
 * to log and answer 500 for.
 */
export type QueryOutcome = { body: string; status?: number } | { failure: Error };

/** A GraphQL answer holding one error with `message`, as JSON text. */
const errorAnswer = (message: string): string => JSON.stringify({ errors: [{ message }] });

/** The answer to requests the service has not run when it closes: no fault, nothing to log. */
const STOPPING: QueryOutcome = {
  status: 503,
  body: errorAnswer('the query service is stopping; try again once it is back'),
};

interface QueryWorkersOptions {
  data: Omit<QueryWorkerData, 'queryWorker'>;
  /** how many run at once: one is kept; more start while requests wait, and end once idle */
  workers: number;
  /** how long a worker beyond the first stays idle before it ends (default EXTRA_WORKER_IDLE_MS) */
  extraIdleMs?: number;
  /** each worker's heap, in MiB (default queryWorkerHeapMb of the result-size limit) */
  heapMb?: number;
  /** the most a request may take from its arrival to its answer */
  timeoutMs: number;
  /** the indexer's state, handed to the index-node API with each request */
  transientFailure?: () => string | null;
}

interface PendingJob {
  job: QueryJob;
  deadline: number;
  settle(outcome: QueryOutcome): void;
}

/** graph-node's words for a query past its time (QueryExecutionError::Timeout), and what to do. */
function timedOutAnswer(timeoutMs: number): string {
  return errorAnswer(
    `Query timed out: it was not answered within the limit of ${timeoutMs} ms; ask for less: a smaller \`first\`, fewer nested collections, a narrower \`where\`, or pages by key rather than a deep \`skip\``,
  );
}

/** What a query that ran its worker out of memory is told (it is the query's doing, not a fault). */
function outOfMemoryAnswer(heapMb: number): string {
  return errorAnswer(
    `the query needs more memory than a query worker has (${heapMb} MiB); ask for less: a smaller \`first\`, fewer nested collections, fewer fields or a narrower \`where\``,
  );
}

// The worker runs build/indexer-query-worker.mjs, the bundle of query-worker.ts, also when this
// module runs from source (see common/thread-bundle.ts); from source the bundle is two folders up.
const WORKER_SCRIPT = import.meta.url.endsWith('.ts')
  ? new URL('../../build/indexer-query-worker.mjs', import.meta.url)
  : new URL('./indexer-query-worker.mjs', import.meta.url);

function startWorker(data: QueryWorkerData, heapMb: number): Worker {
  return new Worker(WORKER_SCRIPT, {
    workerData: data,
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
  });
}

/** One worker thread and the job it runs, if any. */
interface Slot {
  worker: Worker;
  ready: boolean;
  running: PendingJob | null;
  /** ends the request's time (running) or the worker's idle time (not running) */
  timer: NodeJS.Timeout | null;
}

export class QueryWorkers {
  private readonly slots = new Set<Slot>();
  private readonly queue: PendingJob[] = [];
  private closed = false;
  private readonly heapMb: number;

  constructor(private readonly options: QueryWorkersOptions) {
    this.heapMb = options.heapMb ?? queryWorkerHeapMb(options.data.maxResultBytes);
  }

  /** The workers running or starting. */
  get size(): number {
    return this.slots.size;
  }

  /** Starts the first worker; rejects, having ended it, if it cannot read the store. */
  async start(): Promise<void> {
    checkThreadBundle(WORKER_SCRIPT, "the query worker's bundle", 'npm start, npm test and npm run indexer');
    const failure = await this.addWorker();
    if (failure) throw failure;
  }

  /**
   * Executes `requestJson`, a GraphQLRequest as JSON text, against `api` on the next free worker.
   * Text, since a structured clone of variables nested deep enough would overflow the stack.
   */
  run(api: QueryApiName, requestJson: string): Promise<QueryOutcome> {
    if (this.closed) return Promise.resolve(STOPPING);
    return new Promise((settle) => {
      const job: QueryJob = {
        api,
        requestJson,
        transientFailure: this.options.transientFailure?.() ?? null,
      };
      this.queue.push({ job, deadline: performance.now() + this.options.timeoutMs, settle });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.settle(STOPPING);
    await Promise.all([...this.slots].map((slot) => this.endWorker(slot)));
  }

  /** A new worker in the pool; resolves with null once it is ready, or with why it could not start. */
  private addWorker(): Promise<Error | null> {
    const worker = startWorker({ ...this.options.data, queryWorker: true }, this.heapMb);
    const slot: Slot = { worker, ready: false, running: null, timer: null };
    this.slots.add(slot);
    return new Promise((resolveStart) => {
      worker.on('message', (message: QueryWorkerMessage) => {
        if ('ready' in message) {
          slot.ready = true;
          resolveStart(null);
          this.dispatch();
        } else if ('startFailure' in message) {
          resolveStart(new Error(`the query service cannot read the store: ${message.startFailure}`));
          void this.endWorker(slot);
        } else {
          const finished = this.finish(slot);
          if (!finished) return;
          finished.settle(
            'body' in message ? { body: message.body } : { failure: new Error(message.failure) },
          );
          this.dispatch();
        }
      });
      worker.on('error', (error: NodeJS.ErrnoException) => {
        resolveStart(error);
        const running = this.finish(slot);
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY')
          running?.settle({ body: outOfMemoryAnswer(this.heapMb) });
        else running?.settle({ failure: error });
      });
      worker.on('exit', () => {
        resolveStart(new Error('the query worker stopped as it started'));
        const lost = this.finish(slot);
        if (this.closed) lost?.settle(STOPPING);
        else lost?.settle({ failure: new Error('the query worker stopped while running the request') });
        // a worker ended on purpose has left the pool already; one that never started has told
        // whoever started it, and is not started again (it would fail again, forever)
        if (this.slots.delete(slot) && slot.ready) this.refill();
      });
    });
  }

  /** Ends a worker; one that was running a request has already answered it. */
  private async endWorker(slot: Slot): Promise<void> {
    this.slots.delete(slot);
    if (slot.timer) clearTimeout(slot.timer);
    await slot.worker.terminate();
  }

  /**
   * Another worker for waiting requests, up to `workers`. If it cannot start (the store is gone,
   * say) and no other worker is left, the waiting requests are answered so; the next request tries
   * again.
   */
  private grow(): void {
    void this.addWorker().then((failure) => {
      if (!failure || this.slots.size > 0) return;
      for (const pending of this.queue.splice(0)) pending.settle({ failure });
    });
  }

  /**
   * After a worker ended before its time: one in its place if none is left, so that the next request
   * does not wait for one to start; else the waiting requests go to the others (or a new one).
   */
  private refill(): void {
    if (this.closed) return;
    if (this.slots.size === 0) this.grow();
    else this.dispatch();
  }

  /** The slot's job, which it no longer runs. */
  private finish(slot: Slot): PendingJob | null {
    const running = slot.running;
    slot.running = null;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    return running;
  }

  /**
   * Hands waiting requests to free workers, answering those whose time is up; starts another
   * worker while requests still wait, and ends the extra ones that stay idle.
   */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.running) continue;
      const next = this.nextInTime();
      if (!next) break;
      if (slot.timer) clearTimeout(slot.timer);
      slot.running = next;
      slot.timer = setTimeout(() => this.timeOut(slot), Math.max(0, next.deadline - performance.now()));
      slot.worker.postMessage(next.job);
    }
    const starting = [...this.slots].some((slot) => !slot.ready);
    if (this.queue.length > 0 && !starting && this.slots.size < this.options.workers && !this.closed) {
      this.grow();
    }
    if (this.slots.size < 2) return;
    const idleMs = this.options.extraIdleMs ?? EXTRA_WORKER_IDLE_MS;
    for (const slot of this.slots) {
      if (slot.ready && !slot.running && !slot.timer) {
        slot.timer = setTimeout(() => this.endIdle(slot), idleMs).unref();
      }
    }
  }

  /** Ends a worker that stayed idle, unless it is the last. */
  private endIdle(slot: Slot): void {
    slot.timer = null;
    if (this.slots.size > 1) void this.endWorker(slot);
  }

  /** The first waiting request that still has time; those without are answered that they timed out. */
  private nextInTime(): PendingJob | undefined {
    const now = performance.now();
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      if (next.deadline > now) return next;
      next.settle({ body: timedOutAnswer(this.options.timeoutMs) });
    }
    return undefined;
  }

  /**
   * A request past its time: answered, and its worker ended. Its replacement need not wait for the
   * end, which comes once SQLite returns from the statement under way.
   */
  private timeOut(slot: Slot): void {
    this.finish(slot)?.settle({ body: timedOutAnswer(this.options.timeoutMs) });
    void this.endWorker(slot);
    this.refill();
  }
}
