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
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { Hex } from 'viem';
import { callKey } from '../runtime/declared-calls.ts';
import { ChainAccessError, type ChainReader } from '../runtime/host-context.ts';
import { rpcEndpoint } from '../../common/url.ts';
import { BatchLimit, batchRefusal } from './rpc-fetch.ts';

export interface ChainReaderOptions {
  rpcUrl: string;
  /** how long one request may take before it is a ChainAccessError (default 10 s) */
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
const signal = new Int32Array(workerData.signal);
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
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
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

export interface RpcError {
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
  id: number;
  params: unknown[];
}

/** What the worker posts back for one HTTP request. */
interface WorkerAnswer {
  status?: number;
  text?: string;
  failure?: string;
}

class WorkerChainReader implements ClosableChainReader {
  /** started on the first read: a subgraph that never reads the chain costs no thread */
  private connection: { worker: Worker; port: MessagePort } | null = null;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly timeoutMs: number;
  private readonly cache = new Map<string, unknown>();
  /** the answers to the declared calls of the latest block that had some, by callKey */
  private prefetched: { blockHash: Hex; answers: Map<string, Hex | null> } | null = null;
  private nextId = 0;
  /** declared calls per batch; lowered while the node refuses batches that large (0: single calls) */
  private readonly maxBatch: BatchLimit;

  constructor(private readonly options: ChainReaderOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxBatch = new BatchLimit(CALLS_PER_BATCH, (limit, words) => options.onBatchLimit?.(limit, words));
  }

  private connect(): MessagePort {
    if (this.connection) return this.connection.port;
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(workerSource, {
      eval: true,
      workerData: {
        port: port2,
        ...rpcEndpoint(this.options.rpcUrl),
        timeoutMs: this.timeoutMs,
        signal: this.signal.buffer,
      },
      transferList: [port2],
      // nothing of the parent's flags (a TypeScript loader among them) and a small heap
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    worker.unref();
    port1.unref();
    this.connection = { worker, port: port1 };
    return port1;
  }

  /** One JSON-RPC request, answered synchronously: the result, or the node's error object. */
  private request(method: string, params: unknown[]): { result: unknown } | { error: RpcError } {
    const id = this.nextId++;
    const [answer] = this.exchange([JSON.stringify({ jsonrpc: '2.0', id, method, params })], method);
    return this.interpret(method, answer!);
  }

  /**
   * HTTP requests with the JSON bodies `bodies`, all in flight at once, answered synchronously in
   * the same order. The worker's own timeout answers first; this one only guards against a stuck
   * worker.
   */
  private exchange(bodies: readonly string[], what: string): WorkerAnswer[] {
    const port = this.connect();
    const first = this.nextId;
    this.nextId += bodies.length;
    Atomics.store(this.signal, 0, 0);
    bodies.forEach((body, i) => port.postMessage({ id: first + i, body }));
    const answers: WorkerAnswer[] = [];
    let pending = bodies.length;
    const deadline = Date.now() + this.timeoutMs + 2_000;
    while (pending > 0) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new ChainAccessError(`${what}: no answer within ${this.timeoutMs} ms`);
      Atomics.wait(this.signal, 0, 0, remaining);
      Atomics.store(this.signal, 0, 0);
      // an answer to an earlier request that timed out here may come first: it is dropped
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
        const answer = m.message as WorkerAnswer & { id: number };
        const at = answer.id - first;
        if (at >= 0 && at < bodies.length && answers[at] === undefined) {
          answers[at] = answer;
          pending--;
        }
      }
    }
    return answers;
  }

  /** The worker's answer as a JSON-RPC reply: one object, or an array for a batch. */
  private static replyOf(method: string, answer: WorkerAnswer): unknown {
    const reply = WorkerChainReader.parsedReply(method, answer);
    if (reply === undefined) {
      throw new ChainAccessError(
        `${method}: HTTP ${answer.status}: ${String(answer.text ?? '').slice(0, 200)}`,
      );
    }
    return reply;
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
      throw new ChainAccessError(
        `${method}: HTTP ${answer.status}: ${String(answer.text ?? '').slice(0, 200)}`,
      );
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
      throw new ChainAccessError(`${method}: ${error.message ?? JSON.stringify(error)}`);
    };
  }

  private static callAnswer(to: Hex, error: RpcError): null {
    if (isRevert(error)) return null;
    throw new ChainAccessError(
      `the node returned an error for eth_call to ${to}: ${error.message ?? JSON.stringify(error)}`,
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
      id: this.nextId++,
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
      const bodies = wave.map((batch) => {
        const payload = batch.map(({ id, params }) => ({ jsonrpc: '2.0', id, method, params }));
        return JSON.stringify(single ? payload[0] : payload);
      });
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
        const refusal = batchRefusal(answer.status ?? 0, reply, batch);
        if (refusal !== null) {
          this.maxBatch.refused(batch.length, refusal);
          refused.push(...batch);
          return;
        }
        if (!Array.isArray(reply)) {
          const error = (reply as { error?: RpcError } | null | undefined)?.error;
          throw new ChainAccessError(
            `${method}: the node did not answer a batch of ${batch.length} declared calls: ${error?.message ?? `HTTP ${answer.status}: ${String(answer.text ?? '').slice(0, 200)}`}`,
          );
        }
        const byId = new Map(
          (reply as { id?: unknown }[]).map((r) => [r.id, r as { result?: unknown; error?: RpcError }]),
        );
        for (const { key, to, id } of batch) {
          const one = byId.get(id);
          if (one?.error) answers.set(key, WorkerChainReader.callAnswer(to, one.error));
          else if (one && typeof one.result === 'string') answers.set(key, one.result as Hex);
          else
            throw new ChainAccessError(`${method}: the node's batch answer has no result for request ${id}`);
        }
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
    this.connection.port.close();
    await this.connection.worker.terminate();
    this.connection = null;
  }
}

/** A ChainReader for `rpcUrl`; its worker thread runs until close(). */
export function createChainReader(options: ChainReaderOptions): ClosableChainReader {
  return new WorkerChainReader(options);
}
