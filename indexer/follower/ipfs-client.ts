// Reads files for file data sources from one IPFS server, which may be a path gateway or a kubo RPC
// API: like graph-node (graph/src/ipfs), the client probes both on first use and keeps the first
// that answers. Every request is bounded in time and size, body included, so a server that never
// finds the content or streams too much cannot hold the indexer.
import { urlRefusal } from '../../common/env.ts';
import { redactUrl, httpEndpoint } from '../../common/url.ts';
import { bounded, describeFailure, readLimited, statusError } from './bounded-http.ts';

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

// Any CID does for the gateway probe: with only-if-cached a gateway answers at once from its local
// store, 200 if it has the block and 412 if not, which no other kind of server says.
const PROBE_CID = 'QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn';

export function createIpfsClient(options: IpfsClientOptions): IpfsClient {
  const { timeoutMs, maxFileBytes } = options;
  const refusal = urlRefusal('the IPFS server URL', options.url, ['http:', 'https:']);
  if (refusal) throw new Error(refusal);
  // fetch refuses URLs with credentials: they go in an Authorization header, and stay out of messages
  const { url, headers } = httpEndpoint(options.url);
  const { origin, pathname } = new URL(url);
  const base = `${origin}${pathname.replace(/\/+$/, '')}`;
  const displayUrl = redactUrl(url);

  let api: Api | null = null;
  let detection: { promise: Promise<Api>; waiters: number; controller: AbortController } | null = null;

  // One detection serves every cat() that arrives while it runs; it is abandoned (and its probes
  // aborted) only when all of them have been aborted, so close() leaves no request behind.
  async function detect(signal: AbortSignal | undefined): Promise<Api> {
    if (api) return api;
    if (!detection) {
      const controller = new AbortController();
      const current = {
        controller,
        waiters: 0,
        promise: runDetection(controller.signal).then((found) => {
          api = found;
          return found;
        }),
      };
      const clear = () => {
        if (detection === current) detection = null;
      };
      current.promise.then(clear, clear);
      detection = current;
    }
    const current = detection;
    current.waiters++;
    try {
      return await raceAbort(current.promise, signal);
    } finally {
      current.waiters--;
      if (current.waiters === 0 && signal?.aborted) {
        current.controller.abort();
        if (detection === current) detection = null;
      }
    }
  }

  async function runDetection(signal: AbortSignal): Promise<Api> {
    // the probe that loses is not left running
    const probing = new AbortController();
    const onAbort = () => probing.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const probes: [Api, Promise<void>][] = [
      ['gateway', probeGateway(probing.signal)],
      ['rpc', probeRpc(probing.signal)],
    ];
    // graph-node keeps whichever API answers first; a refusal waits for the other probe
    const reasons: Partial<Record<Api, string>> = {};
    const found = await new Promise<Api | null>((resolve) => {
      let pending = probes.length;
      for (const [kind, probe] of probes) {
        probe.then(
          () => resolve(kind),
          (error: unknown) => {
            reasons[kind] = describeFailure(error);
            if (--pending === 0) resolve(null);
          },
        );
      }
    });
    signal.removeEventListener('abort', onAbort);
    probing.abort();
    if (found) return found;
    if (signal.aborted) throw signal.reason;
    throw new IpfsInvalidServerError(
      displayUrl,
      `gateway probe: ${reasons.gateway}; RPC probe: ${reasons.rpc}`,
    );
  }

  async function probeGateway(signal: AbortSignal): Promise<void> {
    await bounded(
      timeoutMs,
      signal,
      () => new Error('request timed out'),
      async (requestSignal) => {
        const response = await fetch(`${base}/ipfs/${PROBE_CID}`, {
          method: 'HEAD',
          headers: { ...headers, 'cache-control': 'only-if-cached' },
          redirect: 'manual',
          signal: requestSignal,
        });
        if (response.status !== 200 && response.status !== 412) throw await statusError(response);
      },
    );
  }

  async function probeRpc(signal: AbortSignal): Promise<void> {
    await bounded(
      timeoutMs,
      signal,
      () => new Error('request timed out'),
      async (requestSignal) => {
        const response = await fetch(`${base}/api/v0/version`, {
          method: 'POST',
          headers: { ...headers, 'content-length': '0' },
          redirect: 'manual',
          signal: requestSignal,
        });
        if (response.status !== 200) throw await statusError(response);
        await response.body?.cancel();
      },
    );
  }

  async function cat(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    const kind = await detect(signal);
    try {
      return await bounded(
        timeoutMs,
        signal,
        () => new IpfsTimeoutError(path),
        async (requestSignal) => {
          const response =
            kind === 'gateway'
              ? await getFromGateway(path, requestSignal)
              : await catFromRpc(path, requestSignal);
          if (response.status !== 200) throw await statusError(response);
          // kubo announces the size of a cat in X-Content-Length, a gateway in Content-Length
          const announced =
            response.headers.get('content-length') ?? response.headers.get('x-content-length');
          return await readLimited(
            response,
            maxFileBytes,
            announced === null ? null : Number(announced),
            () => new IpfsTooLargeError(path, maxFileBytes),
          );
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
  async function getFromGateway(path: string, signal: AbortSignal): Promise<Response> {
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

  function catFromRpc(path: string, signal: AbortSignal): Promise<Response> {
    return fetch(`${base}/api/v0/cat?arg=${escapePath(path)}`, {
      method: 'POST',
      headers: { ...headers, 'content-length': '0' },
      redirect: 'manual',
      signal,
    });
  }

  return {
    cat,
    get api() {
      return api;
    },
  };
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
