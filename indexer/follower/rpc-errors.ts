// What a node's failed answers say, read from viem's errors: a refusal of a range as too large (and
// the block span or number of logs it states as the node's limit), a node behind the head, a rate
// limit (and its Retry-After), a refusal that is neither, and a one-line description for logs. Kept
// apart from the chain source, which acts on them, since providers word them in many ways.

/** What a node answers when a getLogs range holds too much (geth, erigon, alchemy, infura, quicknode...). */
const rangeTooLarge =
  /too many|more than \d+|limit exceeded|exceed|response size|range|query timeout|-32005|block range|10000 results|blocks distance/i;

/**
 * What a node behind the head answers for a range past its own head (geth and reth: "block range
 * extends beyond current head block"; Avalanche: "… after last accepted block …"): a load-balanced
 * provider's lagging node, not a limit on the span, so the range is asked for again after a wait.
 */
export const behindTheHead = /beyond current head|after last accepted block/i;

/**
 * The block span a refused range's error states as the node's limit, worded as hosted providers
 * word it: "range 1000000 exceeds limit of 10000" (Infura), "eth_getLogs is limited to a 10,000
 * range" (QuickNode), "up to a 2K block range" (Alchemy), "exceed maximum block range: 5000" (geth
 * forks), "max block range = 5000", "max range: 5000", "range limit 2000", "maximum is set to 2048"
 * (Avalanche, Flare), "ranges over 10000 blocks are not supported" (dRPC), "maximum [from, to] blocks
 * distance: 2000" (Cronos, Kava); null when it states none.
 */
export function statedBlockLimit(reason: string): number | null {
  const stated =
    /(?:limit of|limited to an?|up to an?|max(?:imum)?(?: block)? range\s*[:=]?|range limit|maximum is set to|ranges over|blocks distance\s*:)\s*(\d[\d,]*)\s*(k?)\b/i.exec(
      reason,
    );
  if (!stated) return null;
  const blocks = Number(stated[1]!.replace(/,/g, '')) * (stated[2] ? 1000 : 1);
  return Number.isSafeInteger(blocks) && blocks > 0 ? blocks : null;
}

/**
 * The most logs a refused range's error states the node answers with, worded as providers word it:
 * "query returned more than 10000 results" (Infura, geth), "a cap of 10K logs in the response"
 * (Alchemy), "exceeds max results 1000"; null when it states none.
 */
export function statedResultLimit(reason: string): number | null {
  const stated =
    /(\d[\d,]*)\s*(k?)\s+(?:results|logs)\b|\b(?:results|logs)\s*(?:limit|cap)?\s*(?:of|is|=|:)?\s*(\d[\d,]*)\s*(k?)\b/i.exec(
      reason,
    );
  if (!stated) return null;
  const logs = Number((stated[1] ?? stated[3])!.replace(/,/g, '')) * (stated[2] || stated[4] ? 1000 : 1);
  return Number.isSafeInteger(logs) && logs > 0 ? logs : null;
}

/** A refusal about the block span itself, not about how many logs the answer holds. */
const blockSpanRefusal = /block range|range (?:is )?too (?:wide|large|high)|range is (?:bigger|larger)/i;
// whole words: "eth_getLogs", which many refusals name, is not about the number of logs
const answerSizeRefusal = /\bresults\b|\blogs\b|response size/i;

/**
 * The upper bound a refusal of `width` blocks sets on the span: the limit it states, or half the
 * refused width when it is about the span but states no number; null when it is about the answer's
 * size (the density, which the span follows anyway).
 */
export function refusedSpanLimit(reason: string, width: number): number | null {
  const stated = statedBlockLimit(reason);
  if (stated !== null && stated < width) return stated;
  if (blockSpanRefusal.test(reason) && !answerSizeRefusal.test(reason)) return Math.max(1, width >> 1);
  return null;
}

/** What viem's errors (an HttpRequestError, a JSON-RPC error and their causes) may carry. */
interface ChainedError {
  shortMessage?: unknown;
  message?: unknown;
  code?: unknown;
  status?: unknown;
  details?: unknown;
  data?: unknown;
  headers?: unknown;
  cause?: unknown;
}

/** The most causes read of one error: viem wraps a failure in three or four. */
const CAUSES_READ = 8;

/**
 * `error` and its causes, outermost first, as far as they are objects: every reading of a failure
 * below walks the chain through this.
 */
function errorChain(error: unknown): ChainedError[] {
  const chain: ChainedError[] = [];
  for (let e = error; e && typeof e === 'object' && chain.length < CAUSES_READ; ) {
    chain.push(e as ChainedError);
    e = (e as ChainedError).cause;
  }
  return chain;
}

/**
 * What the node said of a failed request: its message and any data it attached (Tenderly, for one,
 * answers "invalid params" and gives the reason in the data), from viem's chain of errors.
 */
export function nodeWords(error: unknown): string {
  const words: string[] = [];
  for (const { details, data } of errorChain(error)) {
    if (typeof details === 'string' && !words.includes(details)) words.push(details);
    if (data !== undefined) words.push(typeof data === 'string' ? data : JSON.stringify(data));
  }
  return words.join('; ') || String((error as Error)?.message ?? error);
}

/** The node's words when `error` refuses a request as too large (see rangeTooLarge); else null. */
export function refusalAsTooLarge(error: unknown): string | null {
  // a rate limit ("project ID request rate exceeded") or a proxy's HTML page (Cloudflare's 524
  // "… exceeds its limit …") says nothing of the range: a smaller one would not help, and the
  // span and the logs aimed at would stay lowered for good
  if (rateLimit(error) !== null || errorChain(error).some((e) => isHtml(e.details))) return null;
  // viem's message also holds the request; the node's own words are its details and data
  const reason = nodeWords(error);
  return rangeTooLarge.test(String((error as Error)?.message ?? error)) || rangeTooLarge.test(reason)
    ? reason
    : null;
}

/**
 * What providers answer when asked too often: HTTP 429 (nginx's HTML page, "Too Many Requests"),
 * Infura's -32005 "project ID request rate exceeded", Alchemy's "exceeded its compute units per
 * second capacity".
 */
const rateLimitWords = /too many requests|rate limit|request rate|rate exceeded|compute units|throughput/i;

/** Retry-After is honoured up to this long; a longer one is waited this long, then asked again. */
const MAX_RETRY_AFTER_MS = 60_000;

const isHtml = (words: unknown): boolean =>
  typeof words === 'string' && /^\s*(?:"\s*)?<(?:!doctype|html|head|body)/i.test(words);

/**
 * Whether `error` is a provider's rate limit: null when it is not, else how long its Retry-After
 * header says to wait (seconds or an HTTP date, at most MAX_RETRY_AFTER_MS; null when it says none).
 */
export function rateLimit(error: unknown): { retryAfterMs: number | null } | null {
  const chain = errorChain(error);
  if (!chain.some((e) => e.status === 429) && !rateLimitWords.test(nodeWords(error))) return null;
  for (const { headers } of chain) {
    const value = headers instanceof Headers ? headers.get('retry-after') : null;
    if (value === null) continue;
    const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
    if (Number.isFinite(ms)) return { retryAfterMs: Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) };
  }
  return { retryAfterMs: null };
}

/**
 * Whether `error` is the node's refusal of the request (a JSON-RPC error) that is no rate limit:
 * one the chain source does not read as a range too large is retried as it stands.
 */
export function isNodeRefusal(error: unknown): boolean {
  return errorChain(error).some((e) => typeof e.code === 'number') && rateLimit(error) === null;
}

/**
 * An RPC failure in one line: viem's short message, then what it says went wrong (an HTTP status
 * and body, a JSON-RPC error) and the innermost cause (e.g. `ECONNREFUSED`), which its own message
 * (`HTTP request failed.`) leaves out.
 */
export function describeRpcError(error: unknown): string {
  const chain = errorChain(error);
  if (chain.length === 0) return String(error);
  const parts: string[] = [];
  for (const e of chain) {
    const { shortMessage, message, status, code, details } = e;
    const text = String(shortMessage ?? message ?? e)
      .split('\n')[0]!
      .replace(/\.$/, '');
    const said = [
      typeof status === 'number' ? `HTTP ${status}` : '',
      typeof code === 'string' ? code : '',
      typeof details === 'string' && details !== text ? inBrief(details) : '',
    ].filter((part) => part && !parts.some((seen) => seen.includes(part)));
    if (!parts.some((seen) => seen.includes(text))) parts.push(text);
    parts.push(...said);
  }
  return parts.join(': ');
}

/** The most characters of a node's or a proxy's words a log line quotes, the ellipsis included. */
const WORDS_QUOTED = 200;

/**
 * `words` (a server's answer, or a node's error message) short enough for a log line, on one line:
 * an HTML page (a proxy's error page) as its title or text, anything longer than WORDS_QUOTED cut
 * there. Every message that quotes what a node or a file server answered quotes it through this.
 */
export function inBrief(words: string): string {
  const text = isHtml(words)
    ? (/<title[^>]*>([^<]*)</i.exec(words)?.[1] ?? words.replace(/<[^>]*>/g, ' '))
    : words;
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > WORDS_QUOTED ? `${flat.slice(0, WORDS_QUOTED - 1)}…` : flat;
}
