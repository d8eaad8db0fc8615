// How the indexer meets the node at RPC_URL: once at start-up, to refuse a node that does not answer
// or serves another chain than NETWORK names, then as the ChainSource the follower reads it through
// and the ChainReader the handlers' calls go through, whose retries and the limits they learn from
// the node's refusals go to the operator's log.
import { NETWORK_CHAIN_IDS } from './network-chains.ts';
import { createChainReader, type ClosableChainReader } from './follower/chain-reader.ts';
import { ChainSource } from './follower/chain-source.ts';
import { describeRpcError, inBrief, isNodeRefusal } from './follower/rpc-errors.ts';
import type { IndexerConfig } from './indexer.ts';

/**
 * The node at `rpcUrl` answers, and is on the chain `network` names (when its chain id is known):
 * a node that cannot be reached at start-up, or one of another chain, is a misconfiguration to
 * report at once, not an outage to retry forever nor a chain to index on the wrong addresses.
 */
export async function checkChain(rpcUrl: string, network: string): Promise<void> {
  let chainId: number;
  try {
    chainId = await new ChainSource({ rpcUrl }).chainId();
  } catch (error) {
    throw new Error(`the node at RPC_URL does not answer eth_chainId: ${describeRpcError(error)}`, {
      cause: error,
    });
  }
  const expected = NETWORK_CHAIN_IDS[network];
  if (expected !== undefined && chainId !== expected)
    throw new Error(
      `the node at RPC_URL is on chain ${chainId}, but network ${network} is chain ${expected}: point RPC_URL at a ${network} node, or set NETWORK to the network it serves`,
    );
}

/** The follower's ChainSource for one start(), stopped by `signal`, telling `log` what it retries and learns. */
export function createChainSource(
  config: Pick<IndexerConfig, 'rpcUrl' | 'maxRange' | 'maxAddressesPerRequest' | 'rpcTimeoutMs'>,
  signal: AbortSignal,
  log: (line: string) => void,
): ChainSource {
  return new ChainSource({
    rpcUrl: config.rpcUrl,
    maxRange: config.maxRange,
    maxAddressesPerRequest: config.maxAddressesPerRequest,
    requestTimeoutMs: config.rpcTimeoutMs,
    signal,
    onRetry: (what, error, delay) =>
      log(
        `rpc ${what} failed (${describeRpcError(error)}); retrying in ${delay} ms${
          // a range limit worded in a way the refusal parser does not know is retried as it
          // stands: the operator can state the limit
          what === 'eth_getLogs' && isNodeRefusal(error)
            ? '; if the node limits the blocks an eth_getLogs range spans, INDEXER_MAX_BLOCK_RANGE can set that limit'
            : ''
        }`,
      ),
    onRangeLimit: (blocks, reason) =>
      log(
        `rpc eth_getLogs: the node refused a range ("${reason}"); ranges hold at most ${blocks} blocks from now on`,
      ),
    onBatchLimit: (limit, words) => log(batchLimitLine('requests', limit, words)),
    onLogLimit: (logs, reason) =>
      log(
        `rpc eth_getLogs: the node refused an answer that large ("${reason}"); ranges aim at ${logs} logs from now on`,
      ),
  });
}

/** The handlers' ChainReader for one start(), telling `log` the batch limit it learns. */
export function createHandlerChainReader(
  config: Pick<IndexerConfig, 'rpcUrl' | 'rpcTimeoutMs'>,
  log: (line: string) => void,
): ClosableChainReader {
  return createChainReader({
    rpcUrl: config.rpcUrl,
    timeoutMs: config.rpcTimeoutMs,
    onBatchLimit: (limit, words) => log(batchLimitLine("handlers' declared calls", limit, words)),
  });
}

function batchLimitLine(what: string, limit: number, words: string): string {
  return `rpc: the node refused a JSON-RPC batch ("${inBrief(words)}"); ${what} go out ${limit === 0 ? 'one call at a time' : `in batches of at most ${limit} calls (fewer while the node refuses those too)`} from now on`;
}
