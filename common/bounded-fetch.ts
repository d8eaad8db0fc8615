// Reading an upstream's answer whole, within the request's time limit and up to a size. A client
// that reads the body after its fetch resolved waits on it with no limit of its own: viem's HTTP
// transport ends its timeout once the headers arrive, so a node that stalled or trickled after them
// held the request (and every request sharing viem's in-flight head) for minutes. And an answer read
// without a size limit is held whole however large: a misrouted URL or a proxy's page of hundreds of
// MiB took the service's memory by as much, where it promises that memory is bounded. boundedFetch
// hands its caller an answer already read, so the caller's signal covers the body too, and stops
// reading past MAX_ANSWER_BYTES. An error that quotes what an upstream sent quotes an excerpt of it
// (excerpt; boundedFetch's quotedOnly), not the whole. The gateway's chain and subgraph sources read
// their upstreams through boundedFetch; every other read of an answer that may be large goes through
// its size bound, readAtMost: the indexer's node and file servers, the gateway's distribution files.
// It imports nothing.

/**
 * The most the service reads of one upstream answer. Its largest legitimate answers are far below:
 * a page of 101 events was 54 KB on the devnet scenario, 500 NAV records 44 KB, a multicall of
 * every fund's live reads 8 KB (about 540 bytes a call, so a full 500-call multicall some 270 KB);
 * and the embedded indexer refuses a result past 20,000,000 bytes of entities.
 */
export const MAX_ANSWER_BYTES = 32 * 2 ** 20;

/** How many characters of what an upstream sent an error or a log line quotes. */
export const MAX_QUOTED_CHARS = 500;

/** An answer longer than the most the service reads of one. */
class AnswerTooLargeError extends Error {
  /** what the upstream did, after "it": a reason a 503 can give its client */
  readonly reason: string;

  constructor(readonly upstream: string) {
    const did = `answered more than ${MAX_ANSWER_BYTES / 2 ** 20} MiB, the most the service reads of one answer`;
    super(
      `the ${upstream} ${did}; none of the service's requests asks for that much, so check that its URL is the ${upstream}'s`,
    );
    this.name = 'AnswerTooLargeError';
    this.reason = `it ${did}`;
  }
}

/** The AnswerTooLargeError in `error`'s chain of causes (clients such as viem wrap it), if any. */
export function answerTooLarge(error: unknown): AnswerTooLargeError | undefined {
  const walked = new Set<unknown>();
  for (let current = error; current instanceof Error && !walked.has(current); current = current.cause) {
    if (current instanceof AnswerTooLargeError) return current;
    walked.add(current);
  }
  return undefined;
}

/** `text`, or its first MAX_QUOTED_CHARS characters and how long it was. */
export function excerpt(text: string): string {
  return text.length <= MAX_QUOTED_CHARS
    ? text
    : `${text.slice(0, MAX_QUOTED_CHARS)}… (${text.length} characters in all)`;
}

/** `chunks` as one array of `size` bytes. */
function joined(chunks: readonly Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** The bounds readAtMost reads a body within. */
export interface BodyLimits {
  maxBytes: number;
  /** the error an answer over maxBytes is refused with, told what showed it (for its cause) */
  tooLarge: (seen: string) => Error;
  /** the size the server announced, where it announces it elsewhere than in Content-Length */
  announced?: number | null;
  /** stops the read when it aborts (fetch errors its body then; a fetch that did not is stopped too) */
  signal?: AbortSignal | null;
}

/**
 * The body of `response`, refused with `tooLarge` as soon as it is over `maxBytes`: before reading
 * it when the size announced is, else while it streams. The body is cancelled on a refusal, which
 * closes the connection: nothing more of it is received. Every read of an upstream's answer that
 * may be large goes through this.
 */
export async function readAtMost(response: Response, limits: BodyLimits): Promise<Uint8Array<ArrayBuffer>> {
  const { maxBytes, tooLarge, signal } = limits;
  const body = response.body;
  if (!body) return new Uint8Array(0);
  const header = response.headers.get('content-length');
  const announced =
    limits.announced !== undefined ? limits.announced : header === null ? null : Number(header);
  if (announced !== null && announced > maxBytes) {
    await body.cancel().catch(() => {});
    throw tooLarge(`${announced} bytes announced`);
  }
  const reader = body.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', stop, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) return joined(chunks, size);
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge(`more than ${maxBytes} bytes received`);
      }
      chunks.push(value);
    }
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}

/** `response`'s status and headers with `body` (none for an empty one: 204 and 304 may have none). */
function answerWith(
  response: Response,
  body: Uint8Array<ArrayBuffer> | string,
  headers = response.headers,
): Response {
  return new Response(body.length === 0 ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** `response` with an excerpt of `body` as its body, as text. */
function excerptAnswer(response: Response, body: Uint8Array<ArrayBuffer>): Response {
  const text = new TextDecoder().decode(body);
  if (text.length <= MAX_QUOTED_CHARS) return answerWith(response, body);
  const headers = new Headers(response.headers);
  headers.set('content-type', 'text/plain; charset=utf-8');
  return answerWith(response, excerpt(text), headers);
}

export interface BoundedFetchOptions {
  /** the fetch that sends the request; the global one by default */
  fetch?: typeof fetch;
  /**
   * whether the client reads this answer for nothing but the words of an error it raises (a refusal,
   * a page that is no answer): its body is then cut to an excerpt (text/plain), since clients
   * (viem, graphql-request) quote a body they refuse whole
   */
  quotedOnly?: (response: Response, body: Uint8Array) => boolean;
}

/**
 * A fetch to `upstream` (its name, for errors) whose answer has its body read already: within the
 * request's signal, which so bounds the body's time as well as the headers', and rejecting with
 * AnswerTooLargeError past MAX_ANSWER_BYTES.
 */
export function boundedFetch(upstream: string, options: BoundedFetchOptions = {}): typeof fetch {
  const { fetch: fetchFn = fetch, quotedOnly } = options;
  return async (input, init) => {
    const response = await fetchFn(input, init);
    const body = await readAtMost(response, {
      maxBytes: MAX_ANSWER_BYTES,
      tooLarge: () => new AnswerTooLargeError(upstream),
      signal: init?.signal,
    });
    return quotedOnly?.(response, body) ? excerptAnswer(response, body) : answerWith(response, body);
  };
}
