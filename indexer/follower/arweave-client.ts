// Reads files for file/arweave data sources from an Arweave gateway (ARWEAVE_URL; graph-node's
// default is https://arweave.net): GET <gateway>/<transaction id>. As graph-node's client, an answer
// must announce its size (Content-Length), one over the limit is refused before its body is read,
// and every request is bounded in time.
import { readAtMost } from '../../common/bounded-fetch.ts';
import { bounded, describeFailure, statusError } from './bounded-http.ts';

/** graph-node's default Arweave gateway */
export const ARWEAVE_GATEWAY = 'https://arweave.net';

interface ArweaveClientOptions {
  url: string;
  /** bound on one request, its body included */
  timeoutMs: number;
  /** files larger than this are refused (graph-node applies GRAPH_MAX_IPFS_FILE_BYTES to Arweave too) */
  maxFileBytes: number;
}

class ArweaveFileError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`Arweave file '${file}' is not available: ${reason}`);
    this.name = 'ArweaveFileError';
  }
}

export function createArweaveClient(options: ArweaveClientOptions): {
  cat(file: string, signal?: AbortSignal): Promise<Uint8Array>;
} {
  const { timeoutMs, maxFileBytes } = options;
  const base = new URL(options.url.endsWith('/') ? options.url : `${options.url}/`);
  return {
    async cat(file, signal) {
      try {
        return await bounded(
          timeoutMs,
          signal,
          () => new Error('request timed out'),
          async (requestSignal) => {
            const response = await fetch(new URL(file, base), { signal: requestSignal });
            if (response.status !== 200) throw await statusError(response);
            const announced = response.headers.get('content-length');
            if (announced === null) throw new Error('the gateway did not announce its size (Content-Length)');
            return await readAtMost(response, {
              maxBytes: maxFileBytes,
              tooLarge: () => new Error(`larger than the ${maxFileBytes} bytes limit`),
            });
          },
        );
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw new ArweaveFileError(file, describeFailure(error));
      }
    },
  };
}
