// What an answer's data reflects, told in headers on /v1 answers and /graphql's alike: the indexed
// block and its time, how many blocks it lags the chain head, and how many seconds it lags now;
// and for values read live from the chain, the block they were read at. The lag in blocks is left
// out when the chain head cannot be read, at once while the node is failing (see headUnlessFailing).
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from './context.ts';
import { isoFromSeconds } from './format.ts';

/** The headers fixed when the data is read; X-Data-Lag-Seconds is set as each answer is sent. */
export async function freshnessHeaders(context: GatewayContext): Promise<Record<string, string>> {
  const { indexedBlock, indexedAt } = context.subgraph.freshness;
  const readsFrom = context.chain?.readsFrom;
  const headers: Record<string, string> = {};
  if (readsFrom != null) headers['X-Chain-Block'] = String(readsFrom);
  if (indexedBlock === null) return headers;
  headers['X-Indexed-Block'] = String(indexedBlock);
  if (indexedAt !== null) headers['X-Indexed-At'] = isoFromSeconds(indexedAt);
  if (context.chain) {
    try {
      // not waited for while the node is failing: an answer of indexed data need not wait on it
      const head = await context.chain.headUnlessFailing();
      if (head !== null) headers['X-Indexed-Block-Lag'] = String(Math.max(0, Number(head) - indexedBlock));
    } catch {
      // the head is unknown right now; the other freshness headers still hold
    }
  }
  return headers;
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
      for (const [name, value] of Object.entries(await freshnessHeaders(context))) {
        response.headers.set(name, value);
      }
      const { indexedAt } = context.subgraph.freshness;
      if (indexedAt !== null) response.headers.set('X-Data-Lag-Seconds', dataLagSeconds(indexedAt));
    },
  };
}
