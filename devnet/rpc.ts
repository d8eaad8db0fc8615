// A minimal JSON-RPC client with batching. The scenario sends thousands of transactions per run;
// JSON-RPC batches (one HTTP request for many calls) are what make seeding fast, and viem's
// transports do not expose explicit batches with per-call results in order.
interface RpcCall {
  method: string;
  params: unknown[];
}

class RpcError extends Error {
  constructor(
    readonly call: RpcCall,
    readonly code: number,
    readonly data: unknown,
    message: string,
  ) {
    super(`${call.method} failed (${code}): ${message}`);
  }
}

interface RpcResponse {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** The most calls one JSON-RPC batch (one HTTP request) carries. */
const BATCH_SIZE = 500;

export interface RpcClient {
  url: string;
  request<T>(method: string, params: unknown[]): Promise<T>;
  /** Sends calls in JSON-RPC batches of at most BATCH_SIZE; results come back in call order. */
  batch<T = unknown>(calls: RpcCall[]): Promise<T[]>;
}

/**
 * A client of the node at `url`. `timeoutMs` bounds each HTTP request (a batch's chunk is one); by
 * default a request waits as long as the node takes, as seeding's large batches may.
 */
export function createRpcClient(url: string, { timeoutMs }: { timeoutMs?: number } = {}): RpcClient {
  let nextId = 1;

  async function post(body: unknown): Promise<unknown> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(timeoutMs !== undefined && { signal: AbortSignal.timeout(timeoutMs) }),
    });
    if (!response.ok)
      throw new Error(`RPC ${url} answered HTTP ${response.status}: ${await response.text()}`);
    return response.json();
  }

  function unwrap<T>(call: RpcCall, response: RpcResponse): T {
    if (response.error) {
      throw new RpcError(call, response.error.code, response.error.data, response.error.message);
    }
    return response.result as T;
  }

  return {
    url,
    async request<T>(method: string, params: unknown[]): Promise<T> {
      const call = { method, params };
      return unwrap<T>(call, (await post({ jsonrpc: '2.0', id: nextId++, ...call })) as RpcResponse);
    },
    async batch<T>(calls: RpcCall[]): Promise<T[]> {
      const results: T[] = [];
      for (let start = 0; start < calls.length; start += BATCH_SIZE) {
        const chunk = calls.slice(start, start + BATCH_SIZE);
        const firstId = nextId;
        nextId += chunk.length;
        const responses = (await post(
          chunk.map((call, i) => ({ jsonrpc: '2.0', id: firstId + i, ...call })),
        )) as RpcResponse[];
        const byId = new Map(responses.map((r) => [r.id, r]));
        chunk.forEach((call, i) => {
          const response = byId.get(firstId + i);
          if (!response) throw new Error(`RPC batch lost the answer to ${call.method}`);
          results.push(unwrap<T>(call, response));
        });
      }
      return results;
    },
  };
}
