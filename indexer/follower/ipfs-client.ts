// Reads files for file data sources from one IPFS server, which may be a path gateway or a kubo RPC
// API: like graph-node (graph/src/ipfs), the client probes both on first use and keeps the first
// that answers. Every request is bounded in time and size, body included, so a server that never
// finds the content or streams too much cannot hold the indexer.
import { urlRefusal } from '../../common/env.ts';
import { redactUrl, httpEndpoint } from '../../common/url.ts';
import { readAtMost } from '../../common/bounded-fetch.ts';
import { bounded, describeFailure, statusError } from './bounded-http.ts';

export interface IpfsClientOptions {
  /** a path gateway (`https://ipfs.io`) or a kubo RPC API base (`http://127.0.0.1:5001`) */
  url: string;
  /** bound on one request, its body included */
  timeoutMs: number;
  /** content larger than this is refused (graph-node's GRAPH_MAX_IPFS_FILE_BYTES) */
  maxFileBytes: number;
}

export interface IpfsClient {
  /** the bytes at a canonical content path (`<cid>` or `<cid>/<path>`) */
  cat(path: string, signal?: AbortSignal): Promise<Uint8Array>;
  /** the kind of server, null until the first cat() has detected it */
  readonly api: 'gateway' | 'rpc' | null;
}

export class IpfsTimeoutError extends Error {
  constructor(readonly path: string) {
    super(`IPFS request to '${path}' timed out`);
    this.name = 'IpfsTimeoutError';
  }
}

export class IpfsTooLargeError extends Error {
  constructor(
    readonly path: string,
    readonly maxBytes: number,
  ) {
    super(`IPFS content from '${path}' exceeds the ${maxBytes} bytes limit`);
    this.name = 'IpfsTooLargeError';
  }
}

export class IpfsUnavailableError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`IPFS content from '${path}' is not available: ${reason}`);
    this.name = 'IpfsUnavailableError';
  }
}

/** The URL answered neither as a gateway nor as an RPC API (the next cat() probes again). */
export class IpfsInvalidServerError extends Error {
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(`'${url}' is neither an IPFS gateway nor an IPFS RPC API (${reason})`);
    this.name = 'IpfsInvalidServerError';
  }
}

type Api = 'gateway' | 'rpc';

/** The block the gateway probe asks for (see probeGateway). */
const PROBE_CID = 'QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn';

/** The server a client reads from, and the bounds of its requests. */
interface IpfsServer {
  /** the URL without credentials or a trailing slash; the API paths are appended to it */
  base: string;
  /** credentials taken from the URL (fetch refuses URLs with them), for every request */
  headers: Record<string, string>;
  /** the URL as messages show it, its credentials hidden */
  displayUrl: string;
  timeoutMs: number;
  maxFileBytes: number;
}

/**
 * A client of the IPFS server at `options.url`. Each cat() detects the kind of server first, until
 * a detection succeeds (sharedDetection, detectApi), then reads the content from it (catContent).
 */
export function createIpfsClient(options: IpfsClientOptions): IpfsClient {
  const server = ipfsServer(options);
  const detect = sharedDetection((signal) => detectApi(server, signal));
  return {
    async cat(path, signal) {
      return catContent(server, await detect.api(signal), path, signal);
    },
    get api() {
      return detect.found;
    },
  };
}

/** The server of `options`, its URL refused unless it is http(s). */
function ipfsServer(options: IpfsClientOptions): IpfsServer {
  const refusal = urlRefusal('the IPFS server URL', options.url, ['http:', 'https:']);
  if (refusal) throw new Error(refusal);
  // fetch refuses URLs with credentials: they go in an Authorization header, and stay out of messages
  const { url, headers } = httpEndpoint(options.url);
  const { origin, pathname } = new URL(url);
  return {
    base: `${origin}${pathname.replace(/\/+$/, '')}`,
    headers,
    displayUrl: redactUrl(url),
    timeoutMs: options.timeoutMs,
    maxFileBytes: options.maxFileBytes,
  };
}

/**
 * The kind of server, detected once by `run`: `api(signal)` resolves with it. One detection serves
 * every caller that arrives while it runs; it is abandoned (its probes aborted) only when all of
 * them have been aborted, so that close() leaves no request behind, and the next caller starts
 * another. A failed detection is not kept either: the next caller probes again.
 */
function sharedDetection(run: (signal: AbortSignal) => Promise<Api>): {
  api(signal: AbortSignal | undefined): Promise<Api>;
  readonly found: Api | null;
} {
  let found: Api | null = null;
  let running: { promise: Promise<Api>; waiters: number; controller: AbortController } | null = null;

  function start(): NonNullable<typeof running> {
    const controller = new AbortController();
    const detection = {
      controller,
      waiters: 0,
      promise: run(controller.signal).then((api) => (found = api)),
    };
    const clear = () => {
      if (running === detection) running = null;
    };
    detection.promise.then(clear, clear);
    return detection;
  }

  return {
    async api(signal) {
      if (found) return found;
      const detection = (running ??= start());
      detection.waiters++;
      try {
        return await raceAbort(detection.promise, signal);
      } finally {
        detection.waiters--;
        if (detection.waiters === 0 && signal?.aborted) {
          detection.controller.abort();
          if (running === detection) running = null;
        }
      }
    },
    get found() {
      return found;
    },
  };
}

/**
 * Probes `server` as a gateway and as an RPC API at once and keeps whichever answers first, as
 * graph-node does; the probe that loses is aborted. Throws IpfsInvalidServerError, with both
 * probes' reasons, when neither answers.
 */
async function detectApi(server: IpfsServer, signal: AbortSignal): Promise<Api> {
  const probing = new AbortController();
  const onAbort = () => probing.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const { found, reasons } = await firstToAnswer({
    gateway: probeGateway(server, probing.signal),
    rpc: probeRpc(server, probing.signal),
  });
  signal.removeEventListener('abort', onAbort);
  probing.abort();
  if (found) return found;
  if (signal.aborted) throw signal.reason;
  throw new IpfsInvalidServerError(
    server.displayUrl,
    `gateway probe: ${reasons.gateway}; RPC probe: ${reasons.rpc}`,
  );
}

/**
 * The kind whose probe succeeds first; a refusal waits for the other probe. When both fail, null
 * and why each failed.
 */
function firstToAnswer(
  probes: Record<Api, Promise<void>>,
): Promise<{ found: Api | null; reasons: Partial<Record<Api, string>> }> {
  const reasons: Partial<Record<Api, string>> = {};
  const kinds = Object.keys(probes) as Api[];
  return new Promise((resolve) => {
    let pending = kinds.length;
    for (const kind of kinds) {
      probes[kind].then(
        () => resolve({ found: kind, reasons }),
        (error: unknown) => {
          reasons[kind] = describeFailure(error);
          if (--pending === 0) resolve({ found: null, reasons });
        },
      );
    }
  });
}

// Any CID does for the gateway probe: with only-if-cached a gateway answers at once from its local
// store, 200 if it has the block and 412 if not, which no other kind of server says.
async function probeGateway(server: IpfsServer, signal: AbortSignal): Promise<void> {
  await boundedProbe(server, signal, async (requestSignal) => {
    const response = await fetch(`${server.base}/ipfs/${PROBE_CID}`, {
      method: 'HEAD',
      headers: { ...server.headers, 'cache-control': 'only-if-cached' },
      redirect: 'manual',
      signal: requestSignal,
    });
    if (response.status !== 200 && response.status !== 412) throw await statusError(response);
  });
}

/** kubo's RPC API answers its version. */
async function probeRpc(server: IpfsServer, signal: AbortSignal): Promise<void> {
  await boundedProbe(server, signal, async (requestSignal) => {
    const response = await fetch(`${server.base}/api/v0/version`, {
      method: 'POST',
      headers: { ...server.headers, 'content-length': '0' },
      redirect: 'manual',
      signal: requestSignal,
    });
    if (response.status !== 200) throw await statusError(response);
    await response.body?.cancel();
  });
}

function boundedProbe(
  server: IpfsServer,
  signal: AbortSignal,
  probe: (requestSignal: AbortSignal) => Promise<void>,
): Promise<void> {
  return bounded(server.timeoutMs, signal, () => new Error('request timed out'), probe);
}

/**
 * The bytes at `path` from a server of kind `api`, bounded in time and size: IpfsTimeoutError,
 * IpfsTooLargeError, or IpfsUnavailableError saying why (the reason `signal` was aborted with when
 * it was).
 */
async function catContent(
  server: IpfsServer,
  api: Api,
  path: string,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  const { timeoutMs, maxFileBytes } = server;
  try {
    return await bounded(
      timeoutMs,
      signal,
      () => new IpfsTimeoutError(path),
      async (requestSignal) => {
        const response =
          api === 'gateway'
            ? await getFromGateway(server, path, requestSignal)
            : await catFromRpc(server, path, requestSignal);
        if (response.status !== 200) throw await statusError(response);
        // kubo announces the size of a cat in X-Content-Length, a gateway in Content-Length
        const announced = response.headers.get('content-length') ?? response.headers.get('x-content-length');
        return await readAtMost(response, {
          maxBytes: maxFileBytes,
          tooLarge: () => new IpfsTooLargeError(path, maxFileBytes),
          announced: announced === null ? null : Number(announced),
        });
      },
    );
  } catch (error) {
    if (error instanceof IpfsTimeoutError || error instanceof IpfsTooLargeError) throw error;
    if (signal?.aborted) throw signal.reason;
    throw new IpfsUnavailableError(path, describeFailure(error));
  }
}

// Gateways may redirect a directory to its canonical URL before listing it; graph-node follows
// one redirect and no more.
async function getFromGateway(server: IpfsServer, path: string, signal: AbortSignal): Promise<Response> {
  const { base, headers } = server;
  const url = `${base}/ipfs/${escapePath(path)}`;
  const first = await fetch(url, { headers, redirect: 'manual', signal });
  const location = first.headers.get('location');
  if (first.status < 300 || first.status >= 400 || location === null) return first;
  await first.body?.cancel();
  const second = await fetch(new URL(location, url), { headers, redirect: 'manual', signal });
  if (second.status >= 300 && second.status < 400) {
    await second.body?.cancel();
    throw new Error(`redirected more than once (HTTP ${second.status})`);
  }
  return second;
}

function catFromRpc(server: IpfsServer, path: string, signal: AbortSignal): Promise<Response> {
  return fetch(`${server.base}/api/v0/cat?arg=${escapePath(path)}`, {
    method: 'POST',
    headers: { ...server.headers, 'content-length': '0' },
    redirect: 'manual',
    signal,
  });
}

// The path goes into the URL as graph-node puts it there: as is (a path taken from a gateway URL
// keeps its %-escapes), escaping only what would change the URL's structure: `#` would start a
// fragment, `&` and `+` would change the RPC's `arg`, a stray `%` is not an escape.
function escapePath(path: string): string {
  return path.replace(/%(?![0-9A-Fa-f]{2})/g, '%25').replace(/[#&+]/g, (c) => encodeURIComponent(c));
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
