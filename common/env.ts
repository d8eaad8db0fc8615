// How every process of the project reads an environment variable: the service (rest/service-config.ts),
// the indexer (indexer/config.ts), the devnet scenario (devnet/scenario-params.ts), the benchmarks
// (bench/settings.ts) and the deploy scripts (subgraph/scripts/deploy-plan.ts). They used to carry a
// copy each, and the copies drifted (the service took PORT=" 8081 " as 8081, the indexer refused it).
// It lives in common/ because the service and the indexer are separate processes, neither of which may
// import the other (loading indexer/ pulls in SQLite and the wasm runtime), and the scripts need it too.
// It imports nothing, so importing it costs nothing.
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
// The wording of each refusal stays with its caller (each process words its messages its own way and
// throws its own error class, which its entry point reports as a configuration error).

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

export interface IntegerBounds {
  min: number;
  /** Number.MAX_SAFE_INTEGER when not given */
  max?: number;
}

/**
 * `name` as an integer within `bounds`, `fallback` when it is unset (see envValue); any other value
 * throws what `refuse` makes of the value as read (trimmed), which should name the variable.
 */
export function envInteger(
  env: Env,
  name: string,
  fallback: number,
  bounds: IntegerBounds,
  refuse: (value: string) => Error,
): number {
  const raw = envValue(env, name);
  if (raw === undefined) return fallback;
  const value = decimalInteger(raw);
  if (value === undefined || value < bounds.min || value > (bounds.max ?? Number.MAX_SAFE_INTEGER)) {
    throw refuse(raw);
  }
  return value;
}
