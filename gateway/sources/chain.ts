// The live chain source: values that must be current (allocations, reserve, paused modules,
// policy parameters, claimed status) are read at request time with viem. The reads of one
// request are collected by a DataLoader and sent as one multicall (deployless, so it works
// on a bare devnet without a Multicall3 deployment). Not configured -> the caller reports
// `available: false`; configured but failing or slow -> UPSTREAM_UNAVAILABLE, never a guess; a
// registry address without contract code there -> INTERNAL, a misconfiguration no retry mends.
// Every contract read the gateway makes is a named method of ChainLoaders below (the ABIs stay in
// this module): what the gateway reads from the chain is listed there and nowhere else.
import DataLoader from 'dataloader';
import {
  BaseError,
  ContractFunctionZeroDataError,
  createPublicClient,
  http,
  parseAbi,
  numberToHex,
  type Abi,
  type Address,
  type PublicClient,
} from 'viem';
import { boundedFetch } from '../../common/bounded-fetch.ts';
import { httpEndpoint } from '../../common/url.ts';
import { internalError, upstreamUnavailable, type GatewayError } from '../errors.ts';

const vaultAbi = parseAbi([
  'struct StrategyAllocation { address strategy; uint16 targetBps; uint16 capBps; bool active; }',
  'function strategies() view returns (StrategyAllocation[])',
  'function totalAssets() view returns (uint256)',
  'function reserveBalance() view returns (uint256)',
  'function pausedModules() view returns (bool subscriptions, bool redemptions, bool claims)',
  'function closed() view returns (bool)',
]);

const threePoolPolicyAbi = parseAbi([
  'function params() view returns (uint16 annualBaseBps, uint16 profitToHolderBps, uint16 profitToReserveBps, uint16 profitToNavBps, uint16 reserveTargetMaxBps, uint16 reserveTargetMinBps)',
]);

const kellyPolicyAbi = parseAbi([
  'function params() view returns (uint16 kellyFractionBps, uint16 expectedEdgeBps, uint16 varianceBps, uint16 maxExposureBps, uint16 reserveTargetMinBps, uint16 reserveTargetMaxBps)',
]);

const reservePolicyAbi = parseAbi([
  'function reserveTargetMinBps() view returns (uint16)',
  'function reserveTargetMaxBps() view returns (uint16)',
]);

const distributorAbi = parseAbi([
  'function isClaimed(address fund, uint64 epoch, address account) view returns (bool)',
]);

export interface ChainConfig {
  rpcUrl: string;
  timeoutMs: number;
  /** largest number of calls in one multicall */
  maxBatch: number;
  /** injectable for instrumentation (tests count RPC requests); defaults to global fetch */
  fetch?: typeof fetch;
}

/**
 * A block as the node serves it: its hash tells it from a block a reorg put at its height, which
 * its number alone does not.
 */
export interface ChainBlock {
  number: bigint;
  hash: string;
}

export interface ChainSource {
  client: PublicClient;
  config: ChainConfig;
  /** the id of the chain the RPC serves, asked once (a failed ask is asked again next time) */
  chainId(): Promise<number>;
  /** the chain head, asked of the node now (an ask under way shared) */
  readHead(): Promise<ChainBlock>;
  /** the block at `number` on the node's chain; null past its head */
  blockAt(number: bigint): Promise<ChainBlock | null>;
  /** whether the last head readHead asked for failed: the node is down, slow or refusing */
  readonly headFailing: boolean;
}

/** A status a node (or the proxy before it) may answer otherwise on a second try. */
const isTransientStatus = (status: number) => status >= 500 || status === 429;

/**
 * The fetch viem's transport sends each JSON-RPC request with. The answer is read whole before viem
 * gets it (boundedFetch): viem's timeout ends once the headers arrive and it reads the body with none,
 * so a node that stalled or trickled after its headers held the request for minutes, and every other
 * request waiting on viem's one in-flight chain head with it. A request the node refused with a 5xx or
 * 429, or that the network cut (a kept-alive connection the node had closed), is sent once more,
 * within the same timeout. viem's own retries are off: they also retry a timeout, which made a
 * client wait twice RPC_TIMEOUT_MS for its 503. A refusal's body only becomes the words of viem's
 * error, so an excerpt of it is kept.
 */
function rpcFetch(fetchFn?: typeof fetch): typeof fetch {
  const bounded = boundedFetch('chain RPC', { fetch: fetchFn, quotedOnly: (response) => !response.ok });
  return async (input, init) => {
    try {
      const response = await bounded(input, init);
      if (!isTransientStatus(response.status)) return response;
    } catch (error) {
      // fetch's TypeError is the network's failure; an abort is the timeout's, spent already
      if (!(error instanceof TypeError) || init?.signal?.aborted) throw error;
    }
    return bounded(input, init);
  };
}

export function createChainSource(config: ChainConfig): ChainSource {
  // a URL with credentials, which fetch refuses, sends them as Basic authorization instead
  const endpoint = httpEndpoint(config.rpcUrl);
  const client = createPublicClient({
    transport: http(endpoint.url, {
      fetchOptions: { headers: endpoint.headers },
      timeout: config.timeoutMs,
      retryCount: 0,
      fetchFn: rpcFetch(config.fetch),
    }),
  });
  // a node's chain never changes under it (the start-up check compared it with the registry's):
  // health need not ask eth_chainId on every request
  let chainIdRead: Promise<number> | undefined;
  const chainId = (): Promise<number> => {
    chainIdRead ??= client.getChainId().catch((error: unknown) => {
      chainIdRead = undefined;
      throw error;
    });
    return chainIdRead;
  };
  // eth_getBlockByNumber rather than eth_blockNumber: one call tells the head's hash too, which a
  // body's live reads are checked against (a reorg may put another block at the same height)
  const blockAt = async (block: bigint | 'latest'): Promise<ChainBlock | null> => {
    const found = await client.request({
      method: 'eth_getBlockByNumber',
      params: [block === 'latest' ? block : numberToHex(block), false],
    });
    if (found?.number == null || found.hash == null) return null;
    return { number: BigInt(found.number), hash: found.hash };
  };
  let headFailing = false;
  let headRead: Promise<ChainBlock> | null = null;
  const readHead = () =>
    (headRead ??= blockAt('latest')
      .then(
        (block) => {
          if (block === null) throw new Error('the node answered no latest block');
          headFailing = false;
          return block;
        },
        (error: unknown) => {
          headFailing = true;
          throw error;
        },
      )
      .finally(() => {
        headRead = null;
      }));
  return {
    client,
    config,
    chainId,
    readHead,
    blockAt,
    get headFailing() {
      return headFailing;
    },
  };
}

interface ContractRead {
  address: Address;
  abi: Abi;
  functionName: string;
  args?: readonly unknown[];
}

/** one entry of FundVault.strategies() */
interface VaultAllocation {
  strategy: string;
  targetBps: number;
  capBps: number;
  active: boolean;
}

/** FundVault.pausedModules(), in the contract's order */
type PausedModuleFlags = readonly [subscriptions: boolean, redemptions: boolean, claims: boolean];

/** ThreePoolPolicy.params(), in the contract's order */
type ThreePoolPolicyParams = readonly [
  annualBaseBps: number,
  profitToHolderBps: number,
  profitToReserveBps: number,
  profitToNavBps: number,
  reserveTargetMaxBps: number,
  reserveTargetMinBps: number,
];

/** KellyPolicy.params(), in the contract's order */
type KellyPolicyParams = readonly [
  kellyFractionBps: number,
  expectedEdgeBps: number,
  varianceBps: number,
  maxExposureBps: number,
  reserveTargetMinBps: number,
  reserveTargetMaxBps: number,
];

/**
 * The chain reads of one request. Each contract read joins the request's multicall (see
 * createChainLoaders): it rejects with UPSTREAM_UNAVAILABLE when the RPC fails, INTERNAL when the
 * address holds no contract. The same read asked twice in a request is sent once.
 */
export interface ChainLoaders {
  /** FundVault.strategies(): the vault's strategy allocations */
  strategyAllocations(vault: Address): Promise<readonly VaultAllocation[]>;
  /** FundVault.totalAssets(), in base-asset units */
  totalAssets(vault: Address): Promise<bigint>;
  /** FundVault.reserveBalance(), in base-asset units */
  reserveBalance(vault: Address): Promise<bigint>;
  /** FundVault.pausedModules(): which of subscriptions, redemptions and claims are paused */
  pausedModules(vault: Address): Promise<PausedModuleFlags>;
  /** reserveTargetMinBps() of a fund's policy (either kind) */
  reserveTargetMinBps(policy: Address): Promise<number>;
  /** reserveTargetMaxBps() of a fund's policy (either kind) */
  reserveTargetMaxBps(policy: Address): Promise<number>;
  /** ThreePoolPolicy.params(): the parameters of a fixed-plus-float policy */
  threePoolPolicyParams(policy: Address): Promise<ThreePoolPolicyParams>;
  /** KellyPolicy.params(): the parameters of a fractional-kelly policy */
  kellyPolicyParams(policy: Address): Promise<KellyPolicyParams>;
  /** DividendDistributor.isClaimed(fund, epoch, account): whether the account claimed that round */
  isClaimed(distributor: Address, fund: string, epoch: bigint, account: string): Promise<boolean>;
  /**
   * the chain head's number as this request reads it: asked of the node once per request, when first
   * needed (a head cached across requests can be behind the block just indexed), and the block every
   * contract read of the request is made at
   */
  headBlock(): Promise<bigint>;
  /**
   * the head headBlock reads, or null at once while the node failed the last head read this process
   * asked for: what only a header needs is not waited for up to RPC_TIMEOUT_MS from a node that is
   * down. The head is asked all the same, with no one waiting, so that the next request sees a node
   * answering again.
   */
  headUnlessFailing(): Promise<ChainBlock | null>;
  /** the id of the chain the RPC serves (eth_chainId) */
  chainId(): Promise<number>;
  /** the block this request's chain data was read at (headBlock's), once read; null before */
  readonly readsFrom: ChainBlock | null;
}

function keyOf(call: ContractRead): string {
  const args = JSON.stringify(call.args ?? [], (_k, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v,
  );
  return `${call.address.toLowerCase()}|${call.functionName}|${args}`;
}

/**
 * A call that returned no data: the registry names an address without contract code on this chain
 * (start-up checks refuse such a registry, but a contract may self-destruct or the RPC be pointed
 * elsewhere later). Retrying cannot help, so it is an internal error, logged with the address.
 */
function failedRead(call: ContractRead, error: unknown): GatewayError {
  const noData =
    error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionZeroDataError) !== null;
  if (!noData) return upstreamUnavailable('chain RPC', error);
  return internalError(
    new Error(
      `${call.functionName}() at ${call.address} returned no data: the registry names an address that is not a contract on the chain RPC_URL serves`,
      { cause: error },
    ),
  );
}

/** Per request: every read made while resolving one operation goes out in one multicall. */
export function createChainLoaders(source: ChainSource): ChainLoaders {
  let readsFrom: ChainBlock | null = null;
  let head: Promise<ChainBlock> | null = null;
  const headBlock = (): Promise<ChainBlock> =>
    (head ??= source.readHead().then((block) => (readsFrom = block)));
  const checkedHeadBlock = async (): Promise<ChainBlock> => {
    try {
      return await headBlock();
    } catch (error) {
      throw upstreamUnavailable('chain RPC', error);
    }
  };
  const loader = new DataLoader<ContractRead, unknown, string>(
    async (calls) => {
      let results;
      try {
        // every read of the request at one block, the one X-Chain-Block names: a reserve and the
        // total assets it is a percent of come from the same state
        results = await source.client.multicall({
          blockNumber: (await headBlock()).number,
          contracts: calls.map((c) => ({
            address: c.address,
            abi: c.abi,
            functionName: c.functionName,
            args: c.args ?? [],
          })),
          allowFailure: true,
          deployless: true,
        });
      } catch (error) {
        const failure = upstreamUnavailable('chain RPC', error);
        return calls.map(() => failure);
      }
      return results.map((r, i) => (r.status === 'success' ? r.result : failedRead(calls[i]!, r.error)));
    },
    { cacheKeyFn: keyOf, maxBatchSize: source.config.maxBatch },
  );
  // each read is queued on the loader at once (no await before it), so the reads of one tick share
  // a multicall in the order they were asked
  const read = <T>(call: ContractRead) => loader.load(call) as Promise<T>;
  return {
    strategyAllocations: (vault) =>
      read<readonly VaultAllocation[]>({ address: vault, abi: vaultAbi, functionName: 'strategies' }),
    totalAssets: (vault) => read<bigint>({ address: vault, abi: vaultAbi, functionName: 'totalAssets' }),
    reserveBalance: (vault) =>
      read<bigint>({ address: vault, abi: vaultAbi, functionName: 'reserveBalance' }),
    pausedModules: (vault) =>
      read<PausedModuleFlags>({ address: vault, abi: vaultAbi, functionName: 'pausedModules' }),
    reserveTargetMinBps: (policy) =>
      read<number>({ address: policy, abi: reservePolicyAbi, functionName: 'reserveTargetMinBps' }),
    reserveTargetMaxBps: (policy) =>
      read<number>({ address: policy, abi: reservePolicyAbi, functionName: 'reserveTargetMaxBps' }),
    threePoolPolicyParams: (policy) =>
      read<ThreePoolPolicyParams>({ address: policy, abi: threePoolPolicyAbi, functionName: 'params' }),
    kellyPolicyParams: (policy) =>
      read<KellyPolicyParams>({ address: policy, abi: kellyPolicyAbi, functionName: 'params' }),
    isClaimed: (distributor, fund, epoch, account) =>
      read<boolean>({
        address: distributor,
        abi: distributorAbi,
        functionName: 'isClaimed',
        args: [fund, epoch, account],
      }),
    headBlock: async () => (await checkedHeadBlock()).number,
    async headUnlessFailing() {
      if (!source.headFailing || head) return checkedHeadBlock();
      headBlock().catch(() => {});
      return null;
    },
    async chainId() {
      try {
        return await source.chainId();
      } catch (error) {
        throw upstreamUnavailable('chain RPC', error);
      }
    },
    get readsFrom() {
      return readsFrom;
    },
  };
}
