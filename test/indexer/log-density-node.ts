// A JSON-RPC node on loopback that answers eth_getLogs with a chosen number of logs per block and,
// like hosted providers, refuses a range whose answer would exceed a cap or that spans more blocks
// than a limit: what the chain source's adaptive span is tested against (anvil cannot cheaply hold
// thousands of logs per block). It records every range asked for (and, when told to, each
// request's filter) and the methods of every request. The logs come from one address with the
// topic asked for, or, given `logAt`, are the chosen logs, filtered by the request's addresses and
// topics as a node filters them (over a range of blocks, or in one block named by its hash).
// eth_getBlockByNumber answers with a block holding one transaction per log (with the transactions
// whole when asked, and, given `logAt`, the bloom of its logs), after an optional delay, and
// eth_getTransactionByHash with one of those transactions; it records how many blocks each batch
// asked for whole, and the most such batches it held at once. It can replace its later blocks once
// it has served a given one, as a reorg would. Given `traces`, it answers trace_filter with the
// chosen traces of the blocks asked for, filtered by `toAddress`, and refuses too wide a span.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bytesToHex, hexToBytes, keccak256, type Hex } from 'viem';

export interface LogDensityNode {
  url: string;
  /** [fromBlock, toBlock] of every eth_getLogs request of a range, refused ones included */
  readonly ranges: [number, number][];
  /** the block of every eth_getLogs request by block hash, refused ones included */
  readonly blocksByHash: number[];
  /**
   * with `recordFilters`, per eth_getLogs request: its range, addresses (null: any), topic0s, and
   * the topics it asked for at the later positions
   */
  readonly filters: {
    from: number;
    to: number;
    addresses: string[] | null;
    topics: string[];
    laterTopics: (string[] | null)[];
  }[];
  /** per HTTP request asking for whole blocks, how many it asked for */
  readonly fullBlockBatches: number[];
  /** the most HTTP requests asking for whole blocks that were under way at once */
  readonly peakFullBlockBatches: number;
  /** eth_getTransactionByHash calls answered */
  readonly transactionsByHash: number;
  /** per HTTP request answered (a batch is one), the methods it called */
  readonly requestMethods: string[][];
  /** [fromBlock, toBlock] of every trace_filter request, refused ones included */
  readonly traceRanges: [number, number][];
  close(): Promise<void>;
}

type RpcCall =
  | {
      id: number;
      method: 'eth_getLogs';
      params: [LogsFilter];
    }
  | { id: number; method: 'eth_getBlockByNumber'; params: [string, boolean] }
  | { id: number; method: string; params: unknown[] };

interface LogsFilter {
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
  address?: string | string[];
  /** per position, the topics allowed there (null: any) */
  topics: (string[] | null)[];
}

/** One log the node holds, as `logAt` chooses it. */
export interface SyntheticLog {
  address: string;
  topics: string[];
  data: string;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
/** the hash of the transaction of the i-th log of block n */
export const transactionHashOf = (n: number, i: number) => word(n * 100_000 + i);

/** The i-th transaction of block n, whose hash is `hashOf(n)`. */
function transaction(n: number, i: number, hashOf: (n: number) => string): object {
  return {
    hash: transactionHashOf(n, i),
    blockHash: hashOf(n),
    from: `0x${'ab'.repeat(20)}`,
    to: null,
    value: hex(i),
    gas: hex(21_000),
    maxFeePerGas: hex(100),
    maxPriorityFeePerGas: hex(2),
    nonce: hex(n),
    input: '0x',
    transactionIndex: hex(i),
  };
}

/** The bloom bits of each value hashed so far, as [byte, mask] × 3: logs repeat addresses and topics. */
const bloomBitsOf = new Map<string, number[]>();

/** The logs bloom of `logs` (the yellow paper's M3:2048 of each address and topic). */
function bloomOf(logs: readonly SyntheticLog[]): Hex {
  const bloom = new Uint8Array(256);
  for (const log of logs) {
    for (const value of [log.address, ...log.topics]) {
      const key = value.toLowerCase();
      let bits = bloomBitsOf.get(key);
      if (!bits) {
        const hash = hexToBytes(keccak256(key as Hex));
        bits = [];
        for (let i = 0; i < 6; i += 2) {
          const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
          bits.push(255 - (bit >> 3), 1 << (bit & 7));
        }
        bloomBitsOf.set(key, bits);
      }
      for (let i = 0; i < 6; i += 2) bloom[bits[i]!]! |= bits[i + 1]!;
    }
  }
  return bytesToHex(bloom);
}

function block(
  n: number,
  transactions: number,
  whole: boolean,
  hashOf: (n: number) => string,
  logsBloom?: Hex,
): object {
  return {
    number: hex(n),
    ...(logsBloom ? { logsBloom } : {}),
    hash: hashOf(n),
    parentHash: hashOf(n - 1),
    timestamp: hex(1_700_000_000 + 12 * n),
    baseFeePerGas: hex(7),
    transactions: Array.from({ length: transactions }, (_, i) =>
      whole ? transaction(n, i, hashOf) : transactionHashOf(n, i),
    ),
  };
}

export interface LogDensityNodeOptions {
  /** a range holding more logs is refused with a -32005 error, as Infura words it (or with maxLogsMessage) */
  maxLogs?: number;
  maxLogsMessage?: string;
  /** a range of more blocks is refused with `message` (and `data`, when given) */
  maxBlocks?: { blocks: number; message: string; data?: unknown };
  /** block answers wait this long */
  blockDelayMs?: number;
  /** the i-th log of block n (i < logsInBlock(n)); eth_getLogs answers those its filter matches */
  logAt?: (block: number, index: number) => SyntheticLog;
  /** the head eth_blockNumber answers (without it, the method is not served) */
  head?: number;
  /** keep each eth_getLogs request's filter in `filters` */
  recordFilters?: boolean;
  /**
   * a reorg: once an answer has carried block `afterReading`, the blocks from `from` on are
   * replaced by others (new hashes, the same logs)
   */
  reorg?: { afterReading: number; from: number };
  /**
   * trace_filter's traces of block n (OpenEthereum's format, without the block fields, which the
   * node adds), and the widest span it answers
   */
  traces?: { of: (block: number) => { action: { to?: string } }[]; maxBlocks: number };
}

/** `logsInBlock(n)` logs in block n. */
export async function startLogDensityNode(
  logsInBlock: (block: number) => number,
  {
    maxLogs = Number.POSITIVE_INFINITY,
    maxLogsMessage,
    maxBlocks,
    blockDelayMs = 0,
    logAt,
    head,
    recordFilters = false,
    reorg,
    traces,
  }: LogDensityNodeOptions = {},
): Promise<LogDensityNode> {
  const ranges: [number, number][] = [];
  const blocksByHash: number[] = [];
  const traceRanges: [number, number][] = [];
  const filters: LogDensityNode['filters'] = [];
  let reorged = false;
  const hashOf = (n: number) => word(reorged && n >= reorg!.from ? n + 2 ** 40 : n);
  // logAt's answers, worked out once per block (a block is asked for again and again)
  const chosen = new Map<number, SyntheticLog[]>();
  const fullBlockBatches: number[] = [];
  let fullBlockBatchesUnderWay = 0;
  let peakFullBlockBatches = 0;
  let transactionsByHash = 0;
  // each block's bloom, worked out once: hashing its logs for every answer took a benchmark's
  // indexer (in the same process) a third of its time
  const blooms = new Map<number, Hex>();
  const bloomOfBlock = (n: number): Hex => {
    let bloom = blooms.get(n);
    if (bloom === undefined) blooms.set(n, (bloom = bloomOf(chosenLogs(n))));
    return bloom;
  };
  const chosenLogs = (n: number): SyntheticLog[] => {
    let list = chosen.get(n);
    if (!list) {
      list = Array.from({ length: logsInBlock(n) }, (_, i) => logAt!(n, i));
      chosen.set(n, list);
    }
    return list;
  };
  function answer(call: RpcCall): object {
    if (call.method === 'eth_getBlockByNumber') {
      const [number, whole] = call.params as [string, boolean];
      const n = Number(number);
      // the bloom of the chosen logs: those asked for by topic alone have no bloom to give
      return { result: block(n, logsInBlock(n), whole, hashOf, logAt && bloomOfBlock(n)) };
    }
    if (call.method === 'eth_blockNumber' && head !== undefined) return { result: hex(head) };
    // the devnet's chain, as an indexer of network devnet checks at start-up
    if (call.method === 'eth_chainId') return { result: hex(31337) };
    if (call.method === 'eth_getTransactionByHash') {
      transactionsByHash++;
      const id = Number(BigInt((call.params as [string])[0]));
      return { result: transaction(Math.floor(id / 100_000), id % 100_000, hashOf) };
    }
    if (call.method === 'trace_filter' && traces) {
      const { fromBlock, toBlock, toAddress } = (
        call.params as [{ fromBlock: string; toBlock: string; toAddress: string[] }]
      )[0];
      const [from, to] = [Number(fromBlock), Number(toBlock)];
      traceRanges.push([from, to]);
      if (to - from + 1 > traces.maxBlocks)
        return { error: { code: -32602, message: 'block range too large' } };
      const wanted = new Set(toAddress.map((a) => a.toLowerCase()));
      const result = [];
      for (let n = from; n <= to; n++) {
        for (const trace of traces.of(n))
          if (wanted.has(trace.action.to?.toLowerCase() ?? ''))
            result.push({ ...trace, blockNumber: n, blockHash: hashOf(n) });
      }
      return { result };
    }
    if (call.method !== 'eth_getLogs') return { error: { code: -32601, message: 'method not found' } };
    const { fromBlock, toBlock, blockHash, address, topics } = (call.params as [LogsFilter])[0];
    // one block by its hash (EIP-234), which must be one of the chain's now
    const byHash = blockHash === undefined ? null : Number(BigInt(blockHash) & (2n ** 40n - 1n));
    if (byHash !== null) blocksByHash.push(byHash);
    if (byHash !== null && hashOf(byHash) !== blockHash)
      return { error: { code: -32000, message: `unknown block ${blockHash}` } };
    const from = byHash ?? Number(fromBlock);
    const to = byHash ?? Number(toBlock);
    if (byHash === null) ranges.push([from, to]);
    const named = address === undefined ? null : [address].flat().map((a) => a.toLowerCase());
    if (recordFilters)
      filters.push({ from, to, addresses: named, topics: topics[0]!, laterTopics: topics.slice(1) });
    const addresses = named && new Set(named);
    if (maxBlocks && to - from + 1 > maxBlocks.blocks) {
      const { message, data } = maxBlocks;
      return { error: { code: -32602, message, ...(data === undefined ? {} : { data }) } };
    }
    const wantedTopics = new Set(topics[0]);
    const logs = [];
    for (let n = from; n <= to; n++) {
      for (let i = 0; i < logsInBlock(n); i++) {
        const log = logAt
          ? chosenLogs(n)[i]!
          : { address: '0x00000000000000000000000000000000000000aa', topics: [topics[0]![0]!], data: '0x' };
        if (addresses && !addresses.has(log.address.toLowerCase())) continue;
        if (!wantedTopics.has(log.topics[0]!)) continue;
        if (topics.some((allowed, p) => p > 0 && allowed && !allowed.includes(log.topics[p]!))) continue;
        logs.push({
          ...log,
          blockHash: hashOf(n),
          blockNumber: hex(n),
          logIndex: hex(i),
          transactionHash: transactionHashOf(n, i),
          transactionIndex: hex(i),
          removed: false,
        });
      }
      if (logs.length > maxLogs)
        return {
          error: { code: -32005, message: maxLogsMessage ?? `query returned more than ${maxLogs} results` },
        };
    }
    return { result: logs };
  }
  const requestMethods: string[][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // viem sends a batch (an array) when batching is on
      const body = JSON.parse(Buffer.concat(chunks).toString()) as RpcCall | RpcCall[];
      const calls = Array.isArray(body) ? body : [body];
      requestMethods.push(calls.map((c) => c.method));
      const reply = (call: RpcCall) => ({ jsonrpc: '2.0', id: call.id, ...answer(call) });
      const send = () => {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(Array.isArray(body) ? body.map(reply) : reply(body)));
        if (
          reorg &&
          calls.some((c) => c.method === 'eth_getBlockByNumber' && Number(c.params[0]) === reorg.afterReading)
        )
          reorged = true;
      };
      if (!calls.some((c) => c.method === 'eth_getBlockByNumber')) return send();
      const whole = calls.filter((c) => c.method === 'eth_getBlockByNumber' && c.params[1] === true).length;
      if (whole > 0) {
        fullBlockBatches.push(whole);
        peakFullBlockBatches = Math.max(peakFullBlockBatches, ++fullBlockBatchesUnderWay);
      }
      setTimeout(() => {
        if (whole > 0) fullBlockBatchesUnderWay--;
        send();
      }, blockDelayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ranges,
    blocksByHash,
    filters,
    fullBlockBatches,
    get peakFullBlockBatches() {
      return peakFullBlockBatches;
    },
    get transactionsByHash() {
      return transactionsByHash;
    },
    requestMethods,
    traceRanges,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // a connection whose answer the client cut short can stay open until its keep-alive ends
        server.closeAllConnections();
      }),
  };
}
