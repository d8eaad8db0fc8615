// What an answer's data reflects, told in headers on /v1 answers and /graphql's alike: the indexed
// block and its time, how many blocks it lags the chain head, and how many seconds it lags now;
// and for values read live from the chain, the block they were read at. The two lags change while
// the data does not, so a cached /v1 body gets them as each answer is sent (rest/send-cached.ts),
// the blocks from the latest chain head read. The lag in blocks is left out when the chain head
// cannot be read, at once while the node is failing (see headUnlessFailing).
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from './context.ts';
import { isoFromSeconds } from './format.ts';
import type { ChainBlock } from './sources/chain.ts';

/** The headers fixed when the data is read: X-Chain-Block, X-Indexed-Block, X-Indexed-At. */
export function dataBlockHeaders(context: GatewayContext): Record<string, string> {
  const { indexedBlock, indexedAt } = context.subgraph.freshness;
  const readsFrom = context.chain?.readsFrom;
  const headers: Record<string, string> = {};
  if (readsFrom != null) headers['X-Chain-Block'] = String(readsFrom.number);
  if (indexedBlock === null) return headers;
  headers['X-Indexed-Block'] = String(indexedBlock);
  if (indexedAt !== null) headers['X-Indexed-At'] = isoFromSeconds(indexedAt);
  return headers;
}

/**
 * The chain head an answer of indexed data tells its X-Indexed-Block-Lag against: the request's
 * own head read (the block of its live reads, if it made any). Null when the answer reads no
 * indexed data, without an RPC, while the node is failing (not waited for: an answer of indexed
 * data need not wait on it), or when the head cannot be read.
 */
export async function headForLag(context: GatewayContext): Promise<ChainBlock | null> {
  if (!context.chain || context.subgraph.freshness.indexedBlock === null) return null;
  try {
    return await context.chain.headUnlessFailing();
  } catch {
    // the head is unknown right now; the other freshness headers still hold
    return null;
  }
}

/** X-Indexed-Block-Lag: how many blocks the indexed block is behind the chain head, at least 0. */
export function indexedBlockLag(indexedBlock: number, head: number): string {
  return String(Math.max(0, head - indexedBlock));
}

/** Seconds from the indexed block's time (Unix seconds) to now, at least 0. */
export function dataLagSeconds(indexedAt: number): string {
  return String(Math.max(0, Math.floor(Date.now() / 1000) - indexedAt));
}

/** Sets the freshness headers on each /graphql answer whose operation read indexed data. */
export function useFreshnessHeaders(): Plugin<GatewayContext> {
  const executed = new WeakMap<Request, GatewayContext>();
  return {
    onExecute({ args }) {
      // Yoga's context is ours merged into its own, which holds the request
      executed.set(args.contextValue.request, args.contextValue);
    },
    async onResponse({ request, response }) {
      const context = executed.get(request);
      if (!context) return;
      // taken before headForLag reads the chain head, which the data does not reflect
      const headers = dataBlockHeaders(context);
      const head = await headForLag(context);
      const { indexedBlock, indexedAt } = context.subgraph.freshness;
      if (head !== null && indexedBlock !== null)
        headers['X-Indexed-Block-Lag'] = indexedBlockLag(indexedBlock, Number(head.number));
      if (indexedAt !== null) headers['X-Data-Lag-Seconds'] = dataLagSeconds(indexedAt);
      for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    },
  };
}
