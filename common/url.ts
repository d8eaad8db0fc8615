// What the project does with a URL that may carry a secret (an RPC provider's API key in its path or
// query, a password in its user info): send it (httpEndpoint) and print it (redactUrl; REDIS_URL by
// redactRedisUrl, which names the database its counters go to). The indexer's
// follower, the gateway's chain and subgraph sources, the service's start-up checks and the subgraph
// deploy scripts all need both, and a third: keeping those secrets out of text that quotes URLs
// (scrubUrls; scrubbedExcerpt for an upstream's words in a log line; urlSecretsHidden for a tool's
// output whose links a person must copy). It lives in common/ because
// those are separate processes and scripts that may not import one another: these used to sit in
// indexer/, so the gateway and the deploy scripts imported the indexer (and with indexer/config.ts
// loaded SQLite and the wasm runtime) to redact a URL. It imports nothing.

/** An http(s) URL as a client sends to it: without credentials, which travel in `headers`. */
interface HttpEndpoint {
  url: string;
  headers: Record<string, string>;
}

/**
 * Fetch refuses a URL holding credentials (https://user:secret@host/…), which some hosted nodes,
 * indexers and gateways hand out; as curl and other clients do, they travel instead as an HTTP Basic
 * Authorization header to the URL without them.
 */
export function httpEndpoint(endpointUrl: string): HttpEndpoint {
  const url = new URL(endpointUrl);
  if (url.username === '' && url.password === '') return { url: endpointUrl, headers: {} };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return {
    url: url.href,
    headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
  };
}

/**
 * An http(s) URL as it may be printed: scheme://host[:port], with "/…" standing for a path, query
 * or user info (where providers put API keys and passwords), which are never shown.
 */
export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return '(a value that is not a URL, not shown)';
  }
  const hidden =
    url.username !== '' ||
    url.password !== '' ||
    // a non-http URL without a path (redis://host:port) has an empty one
    (url.pathname !== '/' && url.pathname !== '') ||
    url.search !== '' ||
    url.hash !== '';
  return url.host ? `${url.protocol}//${url.host}${hidden ? '/…' : ''}` : `${url.protocol}…`;
}

/**
 * A Redis URL (REDIS_URL) as it may be printed: the server and database it names,
 * scheme://host:port/database, with Redis's defaults (port 6379, database 0) where it leaves them
 * out, so a replica counting elsewhere shows; its user info (the password) is never shown. A path
 * that is not a database number prints as redactUrl prints it.
 */
export function redactRedisUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return redactUrl(value);
  }
  if (!/^\/?\d*$/.test(url.pathname) || !url.host) return redactUrl(value);
  return `${url.protocol}//${url.hostname}:${url.port || 6379}/${url.pathname.slice(1) || 0}`;
}

/**
 * a URL as it appears in running text: a scheme, "://" and everything up to a space, a quote or an
 * ellipsis (what redactUrl put there: text scrubbed once is left as it is)
 */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)\]…]+/gi;
/** punctuation that ends a sentence after a URL rather than belonging to it */
const TRAILING_PUNCTUATION = /[.,;:!?]+$/;

/** a URL found in text, and the sentence punctuation after it */
function splitFound(found: string): { url: string; punctuation: string } {
  const punctuation = TRAILING_PUNCTUATION.exec(found)?.[0] ?? '';
  return { url: found.slice(0, found.length - punctuation.length), punctuation };
}

/** `url`, found in text, as redactUrl prints it, or as written when that hides nothing. */
function scrubbedUrl(found: string): string {
  const { url, punctuation } = splitFound(found);
  const shown = redactUrl(url);
  return `${shown.endsWith('…') ? shown : url}${punctuation}`;
}

/**
 * `text` with the path and query of each of `known` replaced by "…" wherever they appear, alone or
 * inside another URL: upstreams quote a request's path in their own words (graph-node's errors quote
 * the path, where hosted gateways put keys). User info is not looked for alone: it appears in URLs,
 * and a short user name replaced everywhere would garble the text.
 */
function knownPartsHidden(text: string, known: readonly string[]): string {
  let hidden = text;
  for (const url of known) {
    const { pathname, search } = new URL(url);
    for (const secret of [search, pathname === '/' ? '' : pathname])
      if (secret) hidden = hidden.replaceAll(secret, '…');
  }
  return hidden;
}

/**
 * `text` (a log line, an upstream's error message) without the secrets URLs put in it: every URL
 * written out in it as redactUrl prints it, and the path and query of each of `known` wherever they
 * appear alone.
 */
export function scrubUrls(text: string, known: readonly string[] = []): string {
  return knownPartsHidden(text.replace(URL_IN_TEXT, scrubbedUrl), known);
}

/** what tells a URL from another: all of it but its user info and fragment */
const placeOf = (url: URL) => `${url.protocol}//${url.host}${url.pathname}${url.search}`;

/**
 * `text` (a tool's output, such as graph-cli's) with only what may be secret in its URLs hidden,
 * so that the links a person must copy stay readable (graph-cli's "Queries (HTTP)" URL, which
 * SUBGRAPH_URL takes): each of `known`, the URLs the tool was given (whose path may be a key), as
 * redactUrl prints it, and their paths and queries wherever they appear; of any other URL its user
 * info, query and fragment, where keys and passwords travel, while its host and path stay.
 */
export function urlSecretsHidden(text: string, known: readonly string[] = []): string {
  const knownPlaces = new Set(known.map((url) => placeOf(new URL(url))));
  const shown = text.replace(URL_IN_TEXT, (found) => {
    const { url, punctuation } = splitFound(found);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return found;
    }
    if (knownPlaces.has(placeOf(parsed))) return `${redactUrl(url)}${punctuation}`;
    const secret =
      parsed.username !== '' || parsed.password !== '' || parsed.search !== '' || parsed.hash !== '';
    if (!secret) return found;
    const queryHidden = parsed.search !== '' || parsed.hash !== '' ? '?…' : '';
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}${queryHidden}${punctuation}`;
  });
  return knownPartsHidden(shown, known);
}

/**
 * At most `maxChars` of `text` (an upstream's error message, which may quote its whole answer:
 * graphql-request puts a body of megabytes in its message) on one line, scrubbed as scrubUrls
 * scrubs it, with "…" where it was cut. Only the start is scrubbed, so a long text costs no more
 * than a short one; what it cut through at the end, a part of a secret of `known` that no longer
 * matches, is dropped with the rest.
 */
export function scrubbedExcerpt(text: string, maxChars: number, known: readonly string[] = []): string {
  const window = SCRUBBED_WINDOW_FACTOR * maxChars;
  const cutShort = text.length > window;
  let scrubbed = scrubUrls(cutShort ? text.slice(0, window) : text, known)
    .replace(/\s+/g, ' ')
    .trim();
  if (cutShort)
    scrubbed = scrubbed.slice(0, scrubbed.length - Math.max(0, ...known.map((url) => url.length)));
  return scrubbed.length > maxChars || cutShort ? `${scrubbed.slice(0, maxChars)}…` : scrubbed;
}

/** how much more than an excerpt is scrubbed: the URLs redacted in it shorten it */
const SCRUBBED_WINDOW_FACTOR = 16;
