// How the chain source's requests reach the node: the fetch viem's HTTP transport calls. viem sends
// every request as a JSON-RPC batch (an array, even for one call) and reads a failed answer's
// error only from an object body; nodes and the proxies before them answer batches in ways it does
// not expect. A non-2xx answer whose body is a batch answer (an array) has its first error handed
// to viem as the body's error, so that the node's words (a span limit a proxy sends with HTTP 413)
// reach the refusal parser instead of the status text alone. A node that refuses batches, or
// batches that large (geth's "batch too large", "batch size exceeds the limit of 10", an HTTP 413
// for the batch, "Batch requests are not supported"), or answers only some of a batch's calls, has
// the batch sent again in smaller ones (the limit its words state, else half as many calls), down
// to single calls, and later batches split the same way: viem would wait forever for the calls
// left unanswered, or fail reading an object as a list. A stop signal aborts every request under
// way, as viem's timeout does: a node that stops answering would otherwise hold a stop for that
// timeout (60 s), past the 10 s Docker gives a container before SIGKILL. A 2xx answer that is no
// JSON-RPC answer (a GraphQL server's {"errors": …}, a page) is refused quoting it: viem would read
// it as one and fail with a TypeError ("Cannot read properties of undefined (reading 'error')").
// An answer is read up to a size (common/bounded-fetch.ts's MAX_ANSWER_BYTES by default), as the
// gateway's upstreams are: a batch whose answer is larger is sent again in halves, and a single
// call's is refused in words the chain source reads as a refusal of the answer's size, so that an
// eth_getLogs range that dense is asked for in smaller ones. Before, a range spanning a dense
// stretch was read whole however large (a 2,000-block range of 100 logs a block is some 200 MB of
// JSON, and several times that once parsed).
import { MAX_ANSWER_BYTES, readAtMost } from '../../common/bounded-fetch.ts';
import { inBrief } from './rpc-errors.ts';

/** A JSON-RPC call as viem sends it. */
interface RpcCall {
  id: number | string;
}

/** A JSON-RPC answer as a node sends it. */
interface RpcAnswer {
  id?: unknown;
  error?: { message?: unknown } | unknown;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The calls of a request body that is a JSON-RPC batch; null for any other body. */
function batchOf(body: unknown): RpcCall[] | null {
  if (typeof body !== 'string' || !body.startsWith('[')) return null;
  try {
    const calls = JSON.parse(body) as unknown;
    return Array.isArray(calls) && calls.length > 0 ? (calls as RpcCall[]) : null;
  } catch {
    return null;
  }
}

/** `response` with `body` in place of the body already read from it. */
function answerOf(response: Response, body: string): Response {
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Throws, quoting it, where a 2xx answer is neither a list of JSON-RPC answers nor one (an object
 * with a result or an error); viem's HTTP transport reports the throw as the request's failure.
 */
function refuseUnlessJsonRpc(response: Response, text: string, body: unknown): void {
  if (!response.ok || Array.isArray(body)) return;
  if (typeof body === 'object' && body !== null && ('result' in body || 'error' in body)) return;
  const quoted = text === '' ? 'an empty body' : inBrief(text);
  // the message as a whole within inBrief's bound: describeRpcError quotes viem's details (this
  // message) through inBrief, and a message it cut would be printed again after the cut one
  throw new Error(inBrief(`the node answered something that is no JSON-RPC answer: ${quoted}`));
}

/** What an error of a JSON-RPC answer says. */
function wordsOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : JSON.stringify(error);
}

/**
 * Why the node refused `calls` as a batch (its words), or null when it answered them: a list
 * lacking some calls, an object (no list) answering 2xx or whose error names batches, or an HTTP
 * 413 without a JSON-RPC answer.
 */
export function batchRefusal(status: number, body: unknown, calls: readonly RpcCall[]): string | null {
  if (Array.isArray(body)) {
    const answered = new Set((body as RpcAnswer[]).map((answer) => answer?.id));
    if (calls.every((call) => answered.has(call.id))) return null;
    const said = (body as RpcAnswer[]).find((answer) => answer?.error !== undefined)?.error;
    return said === undefined
      ? `the node answered ${answered.size} of a batch of ${calls.length} calls`
      : wordsOf(said);
  }
  const error = (body as RpcAnswer | undefined)?.error;
  // a bare 413 (a proxy's body size limit) refuses the batch's size
  if (error === undefined) return status === 413 ? 'HTTP 413' : null;
  const words = wordsOf(error);
  return (status >= 200 && status < 300) || /\bbatch/i.test(words) ? words : null;
}

/**
 * The most calls per batch after a refusal of `refused` calls: none where batches are refused
 * altogether, else the limit `words` state, else half as many.
 */
function loweredLimit(refused: number, words: string): number {
  if (/not (?:supported|allowed|enabled)|disabled/i.test(words)) return 0;
  const stated = /(?:limit(?: of)?|exceeds(?: the limit of)?|max(?:imum)?(?: of)?|up to)\s*:?\s*(\d+)/i.exec(
    words,
  );
  const limit = stated ? Number(stated[1]) : Math.floor(refused / 2);
  return limit < refused ? limit : Math.floor(refused / 2);
}

/**
 * The most calls one JSON-RPC batch to a node carries: `initial` until the node refuses a batch, then
 * lower while it refuses (0: calls go out alone, as objects). `onLowered` hears the first lowering
 * only: a limit found by halving would otherwise take a line per halving.
 */
export class BatchLimit {
  private lowered = false;

  constructor(
    private limit: number,
    private readonly onLowered: (limit: number, words: string) => void,
  ) {}

  get calls(): number {
    return this.limit;
  }

  /** Lowers the limit after the node refused a batch of `refused` calls, saying `words`. */
  refused(refused: number, words: string): void {
    const limit = loweredLimit(refused, words);
    if (limit >= this.limit) return;
    if (!this.lowered) this.onLowered(limit, words);
    this.lowered = true;
    this.limit = limit;
  }
}

/**
 * `init` with a signal that aborts when its own does (viem's timeout, one per request) or `stop`
 * does, and what forgets it on `stop`, which lives as long as the indexer, once the request is done.
 */
function stoppable(init: RequestInit, stop: AbortSignal): { init: RequestInit; done(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort(stop.aborted ? stop.reason : init.signal?.reason);
  if (stop.aborted || init.signal?.aborted) abort();
  stop.addEventListener('abort', abort, { once: true });
  init.signal?.addEventListener('abort', abort, { once: true });
  return {
    init: { ...init, signal: controller.signal },
    done: () => stop.removeEventListener('abort', abort),
  };
}

interface RpcFetchOptions {
  /**
   * called the first time the node refuses a batch, with the calls per batch from then on (0: single
   * calls, no batches; lower again while the node refuses those) and the node's words
   */
  onBatchLimit: (limit: number, words: string) => void;
  /** aborts every request under way once it aborts */
  stop?: AbortSignal;
  /** the most bytes read of one answer (default MAX_ANSWER_BYTES) */
  maxAnswerBytes?: number;
}

/**
 * An answer over the most read of one. Its words are those providers refuse an answer's size with,
 * which the chain source reads as such (rpc-errors.ts's refusalAsTooLarge), so that an eth_getLogs
 * range refused for it is asked for in smaller ones.
 */
class AnswerOverLimitError extends Error {
  constructor(maxBytes: number) {
    super(
      `the node's answer exceeds ${maxBytes} bytes, the most the indexer reads of one: response size too large`,
    );
    this.name = 'AnswerOverLimitError';
  }
}

/** A fetch for viem's HTTP transport to one node (see the top of this file). */
export function rpcFetch(options: RpcFetchOptions): typeof fetch {
  const { onBatchLimit, stop, maxAnswerBytes = MAX_ANSWER_BYTES } = options;
  /** the most calls one batch carries; 0: calls go out alone, as JSON-RPC objects */
  const maxBatch = new BatchLimit(Number.POSITIVE_INFINITY, onBatchLimit);

  /**
   * `calls` in batches of `size` (by default the most one carries), their answers as one; an
   * answer that is no 2xx is the whole request's.
   */
  async function inParts(
    input: RequestInfo | URL,
    init: RequestInit,
    calls: RpcCall[],
    size = Math.max(1, maxBatch.calls),
  ): Promise<Response> {
    const parts: RpcCall[][] = [];
    for (let i = 0; i < calls.length; i += size) parts.push(calls.slice(i, i + size));
    const responses = await Promise.all(
      parts.map((part) =>
        maxBatch.calls === 0
          ? alone(input, { ...init, body: JSON.stringify(part[0]) })
          : send(input, { ...init, body: JSON.stringify(part) }, part),
      ),
    );
    const failed = responses.find((response) => !response.ok);
    if (failed) return failed;
    const answers = (await Promise.all(responses.map((response) => response.json()))) as unknown[];
    return new Response(JSON.stringify(answers.flat()), { status: 200, headers: JSON_HEADERS });
  }

  /** The text of `response`, refused with AnswerOverLimitError past maxAnswerBytes. */
  async function textOf(response: Response, init: RequestInit): Promise<string> {
    const bytes = await readAtMost(response, {
      maxBytes: maxAnswerBytes,
      tooLarge: () => new AnswerOverLimitError(maxAnswerBytes),
      signal: init.signal,
    });
    return new TextDecoder().decode(bytes);
  }

  async function send(input: RequestInfo | URL, init: RequestInit, calls: RpcCall[]): Promise<Response> {
    if (calls.length > maxBatch.calls) return inParts(input, init, calls);
    const response = await fetch(input, init);
    let text: string;
    try {
      text = await textOf(response, init);
    } catch (error) {
      // too large for what it holds, not for a limit of the node's: halves, the batch limit kept
      if (error instanceof AnswerOverLimitError && calls.length > 1) {
        return inParts(input, init, calls, Math.ceil(calls.length / 2));
      }
      throw error;
    }
    // the common answer, a 2xx list for one call (eth_getLogs' can be megabytes), goes to viem as it
    // came: it answers the call whatever it holds, so parsing it here would only parse it twice
    if (response.ok && calls.length === 1 && text.startsWith('[') && text !== '[]') {
      return answerOf(response, text);
    }
    return checked(response, text, calls, input, init);
  }

  async function checked(
    response: Response,
    text: string,
    calls: RpcCall[],
    input: RequestInfo | URL,
    init: RequestInit,
  ): Promise<Response> {
    const body = parsed(text);
    refuseUnlessJsonRpc(response, text, body);
    const refusal = batchRefusal(response.status, body, calls);
    if (refusal !== null) {
      maxBatch.refused(calls.length, refusal);
      return inParts(input, init, calls);
    }
    const firstError = Array.isArray(body)
      ? (body as RpcAnswer[]).find((answer) => answer?.error !== undefined)?.error
      : undefined;
    // viem reads a failed answer's error from an object body only
    return answerOf(
      response,
      !response.ok && firstError !== undefined ? JSON.stringify({ error: firstError }) : text,
    );
  }

  /** One call, sent as an object. */
  async function alone(input: RequestInfo | URL, init: RequestInit): Promise<Response> {
    // read here, while the stop can still abort it
    const response = await fetch(input, init);
    const text = await textOf(response, init);
    refuseUnlessJsonRpc(response, text, parsed(text));
    return answerOf(response, text);
  }

  async function answer(input: RequestInfo | URL, init: RequestInit): Promise<Response> {
    const calls = batchOf(init.body);
    return calls ? send(input, init, calls) : alone(input, init);
  }

  return async (input, init = {}) => {
    if (!stop) return answer(input, init);
    const request = stoppable(init, stop);
    try {
      return await answer(input, request.init);
    } finally {
      request.done();
    }
  };
}
