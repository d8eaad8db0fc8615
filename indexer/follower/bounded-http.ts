// HTTP reads bounded in time, shared by the clients file data sources read their files with
// (ipfs-client.ts, arweave-client.ts): a server that never answers cannot hold the indexer, and a
// failure says what the server answered. Their size is bounded by common/bounded-fetch.ts's
// readAtMost, which every read of an upstream's answer shares.
import { inBrief } from './rpc-errors.ts';

/**
 * How much of a refusal's body statusError reads: enough for an HTML page's title past its head's
 * styles and scripts, and for kubo's JSON, of which a log line quotes at most 200 characters.
 */
const BODY_CHARS_READ = 4096;

/** A failure carrying the status line (and what the body says, which often says why). */
class HttpStatusError extends Error {}

/**
 * Runs `run` with a signal that aborts after `timeoutMs` (then `timeout()` is thrown) or when
 * `signal` does; the request is aborted once `run` settles, so a body left unread is dropped.
 */
export async function bounded<T>(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  timeout: () => Error,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal?.aborted) throw signal.reason;
    return await run(controller.signal);
  } catch (error) {
    if (timedOut) throw timeout();
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    controller.abort();
  }
}

/**
 * The status line, and what the body says, in brief (inBrief: a proxy's HTML page by its title):
 * kubo says why in a JSON `Message`.
 */
export async function statusError(response: Response): Promise<HttpStatusError> {
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  let text = '';
  try {
    text = await readPrefix(response, BODY_CHARS_READ);
  } catch {
    // the status says enough
  }
  try {
    const message = (JSON.parse(text) as { Message?: unknown }).Message;
    if (typeof message === 'string') text = message;
  } catch {
    // not kubo's JSON: the text as it is
  }
  text = inBrief(text);
  return new HttpStatusError(text === '' ? status : `${status}: ${text}`);
}

async function readPrefix(response: Response, maxChars: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (text.length < maxChars) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel().catch(() => undefined);
  return text.slice(0, maxChars);
}

/** Why a request failed; undici reports a refused connection as "fetch failed", the reason in `cause`. */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  if (cause && typeof cause === 'object') {
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (typeof message === 'string' && message !== '') return message;
    if (typeof code === 'string') return code;
  }
  return error.message;
}
