// The node's JSON-RPC answers for blocks, transactions and traces, and what the chain source makes of
// them: headers with the fields handlers see in ethereum.Block, transactions as in
// ethereum.Transaction (with graph-node's effective gas price), and the calls call handlers get from
// trace_filter. Kept apart from the chain source, which requests them, as plain conversions.
import type { Hex } from 'viem';
import type { ContractCall } from '../runtime/ethereum-call.ts';
import type { BlockHeaderInfo, TransactionInfo } from '../runtime/ethereum-event.ts';
import type { BlockHeader } from '../store/meta-tables.ts';

/** A call as a trace reports it, with its block (whether its transaction succeeded is not known). */
export interface TracedCall extends Omit<ContractCall, 'transactionSucceeded'> {
  blockNumber: number;
  /** lowercase */
  blockHash: Hex;
}

/** One trace of trace_filter's answer (OpenEthereum's format: erigon, reth and anvil serve it). */
export interface RpcTrace {
  type: string;
  action: { from?: Hex; to?: Hex; input?: Hex; value?: Hex };
  result?: { output?: Hex; gasUsed?: Hex } | null;
  error?: string;
  blockHash: Hex;
  blockNumber: number;
  transactionHash?: Hex | null;
  transactionPosition?: number | null;
  traceAddress: number[];
}

/**
 * The call a trace reports, as graph-node takes it (EthereumCall::try_from_trace): a call (not a
 * creation, reward or self-destruct) that did not fail, carrying at least a selector (a plain value
 * transfer has none), made in a transaction; null for any other trace.
 */
export function callFromTrace(trace: RpcTrace): TracedCall | null {
  const { action, result } = trace;
  if (trace.type !== 'call' || trace.error !== undefined || !result) return null;
  if (!action.input || action.input.length < 10 || !action.from || !action.to) return null;
  if (trace.transactionPosition == null || !trace.transactionHash) return null;
  return {
    from: action.from.toLowerCase() as Hex,
    to: action.to.toLowerCase() as Hex,
    value: BigInt(action.value ?? 0),
    gasUsed: BigInt(result.gasUsed ?? 0),
    input: action.input,
    output: result.output ?? '0x',
    transactionHash: trace.transactionHash.toLowerCase() as Hex,
    transactionIndex: trace.transactionPosition,
    traceAddress: trace.traceAddress,
    blockNumber: trace.blockNumber,
    blockHash: trace.blockHash.toLowerCase() as Hex,
  };
}

export interface RpcBlock {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  sha3Uncles?: Hex;
  miner?: Hex;
  stateRoot?: Hex;
  transactionsRoot?: Hex;
  receiptsRoot?: Hex;
  gasUsed?: Hex;
  gasLimit?: Hex;
  difficulty?: Hex;
  totalDifficulty?: Hex;
  size?: Hex;
  baseFeePerGas?: Hex;
  logsBloom?: Hex;
  /** hashes, or whole transactions when asked for */
  transactions?: (Hex | RpcTransaction)[];
}

/** A transaction of a block as eth_getBlockByNumber(n, true) gives it (the fields graph-ts exposes). */
export interface RpcTransaction {
  hash: Hex;
  from: Hex;
  to: Hex | null;
  value: Hex;
  gas: Hex;
  gasPrice?: Hex;
  maxFeePerGas?: Hex;
  maxPriorityFeePerGas?: Hex;
  nonce: Hex;
  input: Hex;
  transactionIndex: Hex;
  /** in eth_getTransactionByHash answers */
  blockHash?: Hex;
}

/** A header as the node gave it: what the store keeps, and the fields handlers see in ethereum.Block. */
export interface ChainHeader extends BlockHeader {
  info: BlockHeaderInfo;
  /** the bloom of the block's logs, when the node gives it (see bloomMayHold) */
  logsBloom?: Hex;
  /** the block's transactions by (lowercase) hash, when they were fetched with it */
  transactions?: Map<Hex, TransactionInfo>;
}

const optionalBigInt = (hex: Hex | undefined) => (hex === undefined ? undefined : BigInt(hex));

/**
 * The price per gas a transaction paid, as graph-node gives handlers (`effective_gas_price`): the
 * gas price of legacy and access-list transactions; for fee-market ones the base fee plus the
 * priority fee, capped by the fee cap (the fee cap alone when the block has no base fee).
 */
export function effectiveGasPrice(
  tx: Pick<RpcTransaction, 'gasPrice' | 'maxFeePerGas' | 'maxPriorityFeePerGas'>,
  baseFeePerGas: bigint | undefined,
): bigint {
  if (tx.maxFeePerGas === undefined) return BigInt(tx.gasPrice ?? 0);
  const cap = BigInt(tx.maxFeePerGas);
  if (baseFeePerGas === undefined) return cap;
  const priority = BigInt(tx.maxPriorityFeePerGas ?? 0);
  return cap - baseFeePerGas > priority ? baseFeePerGas + priority : cap;
}

function transactionFromRpc(tx: RpcTransaction, baseFeePerGas: bigint | undefined): TransactionInfo {
  return {
    from: tx.from.toLowerCase() as Hex,
    to: tx.to ? (tx.to.toLowerCase() as Hex) : null, // a contract creation's is null (or absent)
    value: BigInt(tx.value),
    gasLimit: BigInt(tx.gas),
    gasPrice: effectiveGasPrice(tx, baseFeePerGas),
    nonce: BigInt(tx.nonce),
    input: tx.input,
    index: BigInt(tx.transactionIndex),
  };
}

/** The header of `block`, with those of its transactions whose (lowercase) hashes are in `keep`. */
export function headerFromRpc(block: RpcBlock, keep?: ReadonlySet<Hex>): ChainHeader {
  const header: ChainHeader = {
    number: Number(BigInt(block.number)),
    hash: block.hash.toLowerCase(),
    parentHash: block.parentHash.toLowerCase(),
    timestamp: Number(BigInt(block.timestamp)),
    info: {
      unclesHash: block.sha3Uncles,
      author: block.miner,
      stateRoot: block.stateRoot,
      transactionsRoot: block.transactionsRoot,
      receiptsRoot: block.receiptsRoot,
      gasUsed: optionalBigInt(block.gasUsed),
      gasLimit: optionalBigInt(block.gasLimit),
      difficulty: optionalBigInt(block.difficulty),
      totalDifficulty: optionalBigInt(block.totalDifficulty),
      size: optionalBigInt(block.size),
      baseFeePerGas: optionalBigInt(block.baseFeePerGas),
    },
    logsBloom: block.logsBloom,
  };
  if (keep) {
    // a node that gave hashes where whole ones were asked for gives none
    const whole = (block.transactions ?? []).filter((tx): tx is RpcTransaction => typeof tx === 'object');
    header.transactions = transactionsByHash(whole, header.info.baseFeePerGas, keep);
  }
  return header;
}

/** Those of `txs` whose (lowercase) hashes are in `keep`, by hash, as handlers get them. */
export function transactionsByHash(
  txs: readonly RpcTransaction[],
  baseFeePerGas: bigint | undefined,
  keep: ReadonlySet<Hex>,
): Map<Hex, TransactionInfo> {
  const kept = new Map<Hex, TransactionInfo>();
  for (const tx of txs) {
    const hash = tx.hash.toLowerCase() as Hex;
    if (keep.has(hash)) kept.set(hash, transactionFromRpc(tx, baseFeePerGas));
  }
  return kept;
}
