// The runtime's ChainReader over JSON-RPC. Host functions cannot wait for a promise, so each request
// goes to a worker thread that makes the HTTP round trip while the indexing thread blocks in
// Atomics.wait, then takes the answer with receiveMessageOnPort. Reads are pinned to the handler's
// block by hash (EIP-1898), as graph-node's are: if that block left the chain the node errors rather
// than answer from another chain. Node errors that say the call reverted (graph-node's list in
// chain/ethereum/src/call_helper.rs) make a null result; anything else is a ChainAccessError, and
// the follower runs the range again. Answers are kept per (block hash, request), so a block run
// again (new data sources, immutable checks, a retried range) asks the node once. A block's declared
// calls (those the follower did not make ahead) come in JSON-RPC batches, several HTTP requests in
// flight at once, and are kept apart from the other answers until the next block's, however many.
// A node that refuses batches that large gets smaller ones from then on, as the chain source's
// requests do (rpc-fetch.ts), down to single calls: otherwise the range would fail the same way
// at every retry.
//
// While the indexing thread blocks, nothing else runs on it: not a SIGTERM's handler (Node hands
// signals to the main thread's event loop only, never to a worker), not a stop, not the query
// server. So the blocking wait is cut short after a second (READ_WAIT_MS): the read goes on in the
// worker, and the handler fails with ChainReadPending, whose answered() the follower awaits before
// it runs the block again from its start; by then the answer is here, and the read takes none of the
// node's time again. A stop meanwhile ends the wait, and the block is never committed, as
// graph-node commits nothing of a block its subgraph was stopped in.
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { Hex } from 'viem';
import { callKey } from '../runtime/declared-calls.ts';
import { ChainAccessError, type ChainReader } from '../runtime/host-context.ts';
import { httpEndpoint } from '../../common/url.ts';
import { DEFAULT_RPC_TIMEOUT_MS } from './chain-source.ts';
import { inBrief } from './rpc-errors.ts';
import { BatchLimit, batchRefusal } from './rpc-fetch.ts';

interface ChainReaderOptions {
  rpcUrl: string;
  /** how long one request may take before it is a ChainAccessError (default DEFAULT_RPC_TIMEOUT_MS) */
  timeoutMs?: number;
  /**
   * Called the first time the node refuses a batch of declared calls, with the calls per batch
   * from then on (0: single calls) and the node's words.
   */
  onBatchLimit?: (limit: number, words: string) => void;
}

export interface ClosableChainReader extends ChainReader {
  close(): Promise<void>;
}

// Plain CommonJS so the worker needs no TypeScript loader.
const workerSource = `
const { workerData } = require('node:worker_threads');
const { port, url, headers, timeoutMs } = workerData;
const arrival = new Int32Array(workerData.arrival);
port.on('message', async ({ id, body }) => {
  let answer;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    answer = { id, status: response.status, text: await response.text() };
  } catch (error) {
    answer = { id, failure: String((error && error.cause && error.cause.message) || (error && error.message) || error) };
  }
  port.postMessage(answer);
  Atomics.store(arrival, 0, 1);
  Atomics.notify(arrival, 0);
});
`;

/** What a node answers for a reverted eth_call, lowercased substrings (graph-node's list). */
const REVERT_MESSAGES = [
  'revert',
  'invalid jump destination',
  'invalid opcode',
  'stack limit reached 1024',
  'out of gas',
  'stack underflow',
  'vm execution error',
  'invalidjump',
  'notactivated',
  'invalidfeopcode',
  'stackunderflow',
  'stackoverflow',
  'opcodenotfound',
];
/** Parity and Nethermind: a VM execution error whose data says what stopped it */
const PARITY_VM_EXECUTION_ERROR = -32015;
const PARITY_REVERT_DATA = /^(revert|bad jump|out of stack)|^(bad instruction f[ed]|out of gas)$/i;

/** graph-node's gas for eth_call (more would be silently capped by geth) */
export const ETH_CALL_GAS = '0x2faf080'; // 50,000,000

/** Answers kept, across blocks; the oldest go first. */
const CACHE_ENTRIES = 4096;
/** Declared calls per JSON-RPC batch (one HTTP request), as the follower batches its requests */
const CALLS_PER_BATCH = 100;
/** Batches of declared calls in flight at once */
const BATCHES_IN_FLIGHT = 8;

/**
 * How long the indexing thread blocks for an answer before the read goes on without it (see the top
 * of this file): a stop waits no longer than this for a chain read.
 */
export const READ_WAIT_MS = 1_000;

/**
 * A chain read the node has not answered within READ_WAIT_MS. The handler that made it is cut short,
 * and its block must run again from the start once `answered` resolves: when every request of the
 * read has its answer (or has failed), or `signal` is aborted. A ChainAccessError, so that the block
 * processor hands it on as it is, and one that reaches the follower's range makes it run again.
 */
export class ChainReadPending extends ChainAccessError {
  constructor(
    what: string,
    readonly answered: (signal: AbortSignal) => Promise<void>,
  ) {
    super(`${what}: no answer after ${READ_WAIT_MS} ms; the block runs again once the node has answered`);
  }
}

interface RpcError {
  code?: number;
  message?: string;
  data?: unknown;
}

/** Whether a node's error for an eth_call says the call reverted (rather than failed to be made). */
export function isRevert(error: RpcError): boolean {
  const message = String(error.message ?? '').toLowerCase();
  if (REVERT_MESSAGES.some((m) => message.includes(m))) return true;
  return (
    error.code === PARITY_VM_EXECUTION_ERROR &&
    typeof error.data === 'string' &&
    PARITY_REVERT_DATA.test(error.data)
  );
}

/** A declared call as it goes into a batch: `key` is its callKey. */
interface DeclaredCallRequest {
  key: string;
  to: Hex;
  params: unknown[];
}

/** What the worker posts back for one HTTP request. */
interface WorkerAnswer {
  status?: number;
  text?: string;
  failure?: string;
}

/** An HTTP request posted to the worker: the id its answer comes back with, and when it was posted. */
interface Posted {
  id: number;
  at: number;
}

/**
 * JSON-RPC ids number the calls of one HTTP request only (1, 2, ...): the same read is then the same
 * body, so one asked again after its wait was cut short is known, and not sent again.
 */
const rpcCall = (id: number, method: string, params: unknown[]) => ({ jsonrpc: '2.0', id, method, params });

class WorkerChainReader implements ClosableChainReader {
  /** started on the first read: a subgraph that never reads the chain costs no thread */
  private connection: { worker: Worker; port: MessagePort } | null = null;
  /** set by the worker when it has posted an answer, for a wait in Atomics.wait */
  private readonly arrival = new Int32Array(new SharedArrayBuffer(4));
  private readonly timeoutMs: number;
  /** the requests of the last wait that was cut short, by body: the answers the block runs again for */
  private cutShort = new Map<string, Posted>();
  /** the ids of the answers waited for (the exchange's, or those of the requests cut short) */
  private wanted = new Set<number>();
  /** the answers of `wanted` that have come */
  private readonly arrived = new Map<number, WorkerAnswer>();
  /** ends the wait of answered(), while one is under way */
  private endWait: (() => void) | null = null;
  private readonly cache = new Map<string, unknown>();
  /** the answers to the declared calls of the latest block that had some, by callKey */
  private prefetched: { blockHash: Hex; answers: Map<string, Hex | null> } | null = null;
  /** the id of the next request posted to the worker */
  private nextId = 0;
  /** declared calls per batch; lowered while the node refuses batches that large (0: single calls) */
  private readonly maxBatch: BatchLimit;

  constructor(private readonly options: ChainReaderOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    this.maxBatch = new BatchLimit(CALLS_PER_BATCH, (limit, words) => options.onBatchLimit?.(limit, words));
  }

  private connect(): MessagePort {
    if (this.connection) return this.connection.port;
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(workerSource, {
      eval: true,
      workerData: {
        port: port2,
        ...httpEndpoint(this.options.rpcUrl),
        timeoutMs: this.timeoutMs,
        arrival: this.arrival.buffer,
      },
      transferList: [port2],
      // nothing of the parent's flags (a TypeScript loader among them) and a small heap
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    // answers that come while the thread is free (answered() waits for them) are taken here; in a
    // blocking wait, off the port by receiveMessageOnPort
    port1.on('message', (answer: WorkerAnswer & { id: number }) => this.receive(answer));
    worker.unref();
    port1.unref();
    this.connection = { worker, port: port1 };
    return port1;
  }

  /** One JSON-RPC request, answered synchronously: the result, or the node's error object. */
  private request(method: string, params: unknown[]): { result: unknown } | { error: RpcError } {
    const [answer] = this.exchange([JSON.stringify(rpcCall(1, method, params))], method);
    return this.interpret(method, answer!);
  }

  /** Keeps an answer the worker posted if it is waited for; one to a request given up on is dropped. */
  private receive(answer: WorkerAnswer & { id: number }): void {
    if (!this.wanted.has(answer.id)) return;
    this.arrived.set(answer.id, answer);
    if (this.endWait && this.allArrived()) this.endWait();
  }

  /** Whether every answer waited for has come. */
  private allArrived(): boolean {
    for (const id of this.wanted) if (!this.arrived.has(id)) return false;
    return true;
  }

  private receiveQueued(port: MessagePort): void {
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
      this.receive(m.message as WorkerAnswer & { id: number });
    }
  }

  /**
   * HTTP requests with the JSON bodies `bodies`, all in flight at once, answered synchronously in
   * the same order; those of a wait cut short are not sent again. After READ_WAIT_MS without all
   * the answers, throws ChainReadPending. The worker's own timeout answers first; the one here only
   * guards against a stuck worker.
   */
  private exchange(bodies: readonly string[], what: string): WorkerAnswer[] {
    const port = this.connect();
    const posted = bodies.map((body) => this.cutShort.get(body) ?? this.post(port, body));
    // requests cut short that this read does not ask again are given up
    this.cutShort = new Map();
    this.wanted = new Set(posted.map((p) => p.id));
    for (const id of this.arrived.keys()) if (!this.wanted.has(id)) this.arrived.delete(id);
    const deadline = Math.min(...posted.map((p) => p.at)) + this.timeoutMs + 2_000;
    const cutAt = performance.now() + READ_WAIT_MS;
    for (;;) {
      // cleared before the port is read: an answer posted after that sets it again
      Atomics.store(this.arrival, 0, 0);
      this.receiveQueued(port);
      if (this.allArrived()) break;
      const now = performance.now();
      if (now >= deadline) throw new ChainAccessError(`${what}: no answer within ${this.timeoutMs} ms`);
      if (now >= cutAt) {
        bodies.forEach((body, i) => this.cutShort.set(body, posted[i]!));
        throw new ChainReadPending(what, (signal) => this.answered(signal, deadline));
      }
      Atomics.wait(this.arrival, 0, 0, Math.min(cutAt, deadline) - now);
    }
    const answers = posted.map((p) => this.arrived.get(p.id)!);
    this.wanted = new Set();
    this.arrived.clear();
    return answers;
  }

  private post(port: MessagePort, body: string): Posted {
    const id = this.nextId++;
    port.postMessage({ id, body });
    return { id, at: performance.now() };
  }

  /**
   * Resolves once the requests of the wait cut short have their answers, `deadline` (the stuck
   * worker guard's) has passed, or `signal` is aborted; the event loop turns meanwhile.
   */
  private answered(signal: AbortSignal, deadline: number): Promise<void> {
    const port = this.connection?.port;
    if (!port || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const end = () => {
        if (this.endWait !== end) return;
        this.endWait = null;
        clearTimeout(timer);
        signal.removeEventListener('abort', end);
        resolve();
      };
      const timer = setTimeout(end, Math.max(0, deadline - performance.now()));
      signal.addEventListener('abort', end, { once: true });
      this.endWait = end;
      // the answers may have come already
      this.receiveQueued(port);
      if (this.allArrived()) end();
    });
  }

  /** The worker's answer as a JSON-RPC reply: one object, or an array for a batch. */
  private static replyOf(method: string, answer: WorkerAnswer): unknown {
    const reply = WorkerChainReader.parsedReply(method, answer);
    if (reply === undefined) {
      throw new ChainAccessError(`${method}: ${WorkerChainReader.httpAnswer(answer)}`);
    }
    return reply;
  }

  /** An HTTP answer that is no JSON-RPC reply, for a message: its status and what it says, in brief. */
  private static httpAnswer(answer: WorkerAnswer): string {
    const said = inBrief(String(answer.text ?? ''));
    return said === '' ? `HTTP ${answer.status}` : `HTTP ${answer.status}: ${said}`;
  }

  /** A node's JSON-RPC error, for a message: its message (else the whole error), in brief. */
  private static nodeError(error: RpcError): string {
    return inBrief(error.message ?? JSON.stringify(error));
  }

  /** The worker's answer parsed as JSON; undefined when it is not JSON (an HTML error page). */
  private static parsedReply(method: string, answer: WorkerAnswer): unknown {
    if (answer.failure !== undefined) throw new ChainAccessError(`${method}: ${answer.failure}`);
    try {
      return JSON.parse(answer.text ?? '') as unknown;
    } catch {
      return undefined;
    }
  }

  private interpret(method: string, answer: WorkerAnswer): { result: unknown } | { error: RpcError } {
    const body = WorkerChainReader.replyOf(method, answer);
    const reply = (body !== null && typeof body === 'object' ? body : {}) as {
      result?: unknown;
      error?: RpcError;
    };
    if (reply.error) return { error: reply.error };
    if (answer.status !== 200 || !('result' in reply)) {
      throw new ChainAccessError(`${method}: ${WorkerChainReader.httpAnswer(answer)}`);
    }
    return { result: reply.result };
  }

  /** The cached answer of (method, params), else the node's; node errors other than reverts throw. */
  private cached<T>(method: string, params: unknown[], onError: (e: RpcError) => T): T {
    const key = JSON.stringify([method, params]);
    if (this.cache.has(key)) return this.cache.get(key) as T;
    const answer = this.request(method, params);
    const value = 'error' in answer ? onError(answer.error) : (answer.result as T);
    if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, value);
    return value;
  }

  private static failed(method: string) {
    return (error: RpcError): never => {
      throw new ChainAccessError(`${method}: ${WorkerChainReader.nodeError(error)}`);
    };
  }

  private static callAnswer(to: Hex, error: RpcError): null {
    if (isRevert(error)) return null;
    throw new ChainAccessError(
      `the node returned an error for eth_call to ${to}: ${WorkerChainReader.nodeError(error)}`,
    );
  }

  call(to: Hex, data: Hex, blockHash: Hex): Hex | null {
    const prefetched = this.prefetched?.blockHash === blockHash ? this.prefetched.answers : null;
    const key = callKey(to, data);
    if (prefetched?.has(key)) return prefetched.get(key)!;
    return this.cached<Hex | null>('eth_call', [{ to, data, gas: ETH_CALL_GAS }, { blockHash }], (error) =>
      WorkerChainReader.callAnswer(to, error),
    );
  }

  prefetchCalls(
    calls: readonly { to: Hex; data: Hex }[],
    blockHash: Hex,
    known?: ReadonlyMap<string, Hex | null>,
  ): (Hex | null)[] {
    if (this.prefetched?.blockHash !== blockHash) this.prefetched = { blockHash, answers: new Map() };
    const answers = this.prefetched.answers;
    if (known) for (const [key, answer] of known) answers.set(key, answer);
    const missing = new Map<string, { to: Hex; data: Hex }>();
    for (const call of calls) {
      const key = callKey(call.to, call.data);
      if (!answers.has(key)) missing.set(key, call);
    }
    let pending: DeclaredCallRequest[] = [...missing].map(([key, { to, data }]) => ({
      key,
      to,
      params: [{ to, data, gas: ETH_CALL_GAS }, { blockHash }],
    }));
    while (pending.length > 0) pending = this.sendDeclaredCalls(pending, answers);
    return calls.map((call) => answers.get(callKey(call.to, call.data))!);
  }

  /**
   * Sends `requests` as batches, a few at once, and keeps their answers in `answers`; returns the
   * requests of the batches the node refused as too large, to be sent again in smaller ones.
   */
  private sendDeclaredCalls(
    requests: readonly DeclaredCallRequest[],
    answers: Map<string, Hex | null>,
  ): DeclaredCallRequest[] {
    const method = 'eth_call';
    const single = this.maxBatch.calls === 0;
    const batches: DeclaredCallRequest[][] = [];
    const size = Math.max(1, this.maxBatch.calls);
    for (let i = 0; i < requests.length; i += size) batches.push(requests.slice(i, i + size));
    const refused: DeclaredCallRequest[] = [];
    for (let first = 0; first < batches.length; first += BATCHES_IN_FLIGHT) {
      const wave = batches.slice(first, first + BATCHES_IN_FLIGHT);
      const payloads = wave.map((batch) => batch.map(({ params }, i) => rpcCall(i + 1, method, params)));
      const bodies = payloads.map((payload) => JSON.stringify(single ? payload[0] : payload));
      this.exchange(bodies, method).forEach((answer, b) => {
        const batch = wave[b]!;
        if (single) {
          const [{ key, to }] = batch as [DeclaredCallRequest];
          const one = this.interpret(method, answer);
          answers.set(
            key,
            'error' in one ? WorkerChainReader.callAnswer(to, one.error) : (one.result as Hex),
          );
          return;
        }
        const reply = WorkerChainReader.parsedReply(method, answer);
        const refusal = batchRefusal(answer.status ?? 0, reply, payloads[b]!);
        if (refusal !== null) {
          this.maxBatch.refused(batch.length, refusal);
          refused.push(...batch);
          return;
        }
        if (!Array.isArray(reply)) {
          const error = (reply as { error?: RpcError } | null | undefined)?.error;
          throw new ChainAccessError(
            `${method}: the node did not answer a batch of ${batch.length} declared calls: ${error ? WorkerChainReader.nodeError(error) : WorkerChainReader.httpAnswer(answer)}`,
          );
        }
        const byId = new Map(
          (reply as { id?: unknown }[]).map((r) => [r.id, r as { result?: unknown; error?: RpcError }]),
        );
        batch.forEach(({ key, to }, i) => {
          const one = byId.get(i + 1);
          if (one?.error) answers.set(key, WorkerChainReader.callAnswer(to, one.error));
          else if (one && typeof one.result === 'string') answers.set(key, one.result as Hex);
          else
            throw new ChainAccessError(
              `${method}: the node's batch answer has no result for request ${i + 1}`,
            );
        });
      });
    }
    return refused;
  }

  balance(address: Hex, blockHash: Hex): bigint {
    const method = 'eth_getBalance';
    return BigInt(this.cached<Hex>(method, [address, { blockHash }], WorkerChainReader.failed(method)));
  }

  code(address: Hex, blockHash: Hex): Hex {
    const method = 'eth_getCode';
    return this.cached<Hex>(method, [address, { blockHash }], WorkerChainReader.failed(method));
  }

  async close(): Promise<void> {
    if (!this.connection) return;
    this.endWait?.();
    this.cutShort = new Map();
    this.wanted = new Set();
    this.arrived.clear();
    this.connection.port.close();
    await this.connection.worker.terminate();
    this.connection = null;
  }
}

/** A ChainReader for `rpcUrl`; its worker thread runs until close(). */
export function createChainReader(options: ChainReaderOptions): ClosableChainReader {
  return new WorkerChainReader(options);
}
