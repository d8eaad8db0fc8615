// How every process of the project reads an environment variable: the service (rest/service-config.ts),
// the indexer (indexer/config.ts), the devnet scenario (devnet/scenario-params.ts), the benchmarks
// (bench/settings.ts) and the deploy scripts (subgraph/scripts/deploy-plan.ts). They used to carry a
// copy each, and the copies drifted (the service took PORT=" 8081 " as 8081, the indexer refused it;
// the service printed a refused RPC_URL whole, key and password included, the indexer redacted it).
// It lives in common/ because the service and the indexer are separate processes, neither of which may
// import the other (loading indexer/ pulls in SQLite and the wasm runtime), and the scripts need it too.
//
// The one rule: a value is read with its surrounding whitespace removed, and a value that is empty
// after that (unset, "", "  ") is unset: the variable's default applies. Why trim rather than refuse:
// whitespace is never part of a value these processes read (decimal numbers, URLs, host names, enum
// words, network and subgraph names, paths, keys), so removing it cannot change what a value means;
// what puts it there is a quoted value in a .env or compose file, a CRLF line ending or a paste.
// A value that is only whitespace looks empty, and empty already means unset everywhere (shells,
// docker compose and .env.example write `NAME=`), so it means the same. What is left is checked as
// strictly as before, and a refusal names the variable: numbers are decimal digits only (Number()
// would take "1e3" as 1000 and "0x10" as 16), within the variable's bounds.
//
// Refusals are worded here, so a value refused by two processes reads the same in both: an integer's
// names its bounds and the value as read; a URL's (urlRefusal) shows the value as redactUrl prints
// it, because a URL that is refused may still carry an API key or a password. Each process throws
// its own error class, which its entry point reports as a configuration error. It imports only
// common/url.ts, which imports nothing.
import { redactUrl } from './url.ts';

/** The environment, or any record of variables standing for it (tests pass literals). */
export type Env = Readonly<Record<string, string | undefined>>;

/** `name`'s value with its surrounding whitespace removed, or undefined when that leaves nothing. */
export function envValue(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
}

/** `text` as an integer if it is decimal digits only and a safe integer, else undefined. */
export function decimalInteger(text: string): number | undefined {
  if (!/^[0-9]+$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

interface IntegerBounds {
  min: number;
  /** Number.MAX_SAFE_INTEGER when not given */
  max?: number;
}

/**
 * `name` as an integer within `bounds`, `fallback` when it is unset (see envValue); any other value
 * throws a `Refusal` naming the variable, its bounds and the value as read (trimmed).
 */
export function envInteger(
  env: Env,
  name: string,
  fallback: number,
  bounds: IntegerBounds,
  Refusal: new (message: string) => Error,
): number {
  const raw = envValue(env, name);
  if (raw === undefined) return fallback;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  const value = decimalInteger(raw);
  if (value === undefined || value < bounds.min || value > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER ? `of at least ${bounds.min}` : `from ${bounds.min} to ${max}`;
    throw new Refusal(`${name} must be an integer ${range} in decimal digits, got "${raw}"`);
  }
  return value;
}

/** `protocols` as a refusal names them: "http(s)" for http: and https:, else each with its "//". */
function protocolNames(protocols: readonly string[]): string {
  if (protocols.length === 2 && protocols.includes('http:') && protocols.includes('https:')) return 'http(s)';
  return protocols.map((protocol) => `${protocol}//`).join(' or ');
}

/**
 * Why `value` cannot be `name`'s URL, undefined when it is a URL of one of `protocols` (each as URL
 * gives it: "http:"). `what` says what the URL should point at. The refusal shows the value as
 * redactUrl prints it (scheme and host): enough to see a wrong scheme or host, never a key.
 */
export function urlRefusal(
  name: string,
  value: string,
  protocols: readonly string[],
  what?: string,
): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // refused below
  }
  if (url && protocols.includes(url.protocol)) return undefined;
  const shown = url ? `"${redactUrl(value)}"` : 'a value that is not a URL (not shown: it may hold a key)';
  const names = protocolNames(protocols);
  // "an http(s) URL", "a redis:// or rediss:// URL"
  const article = names.startsWith('http') ? 'an' : 'a';
  return `${name} must be ${article} ${names} URL${what ? ` (${what})` : ''}, got ${shown}`;
}
