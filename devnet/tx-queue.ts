// Sends transactions to a manually mined anvil and mines them as one block. Every transaction
// carries an explicit nonce and gas limit so a whole batch can be queued without estimation (the
// pending state is not what the transaction will run against), and every receipt is checked: a
// revert anywhere fails the run loudly instead of leaving a silently different chain.
import type { Address, Hex } from 'viem';
import type { RpcClient } from './rpc.ts';

export interface TxRequest {
  from: Address;
  /** Omitted for a contract creation. */
  to?: Address;
  data: Hex;
  /** Human-readable description used in failure messages. */
  label: string;
  gas?: bigint;
  /** wei sent with the call (none when omitted) */
  value?: bigint;
}

export interface TxLog {
  address: Address;
  topics: Hex[];
  data: Hex;
  logIndex: Hex;
  transactionHash: Hex;
  blockNumber: Hex;
}

export interface TxReceipt {
  transactionHash: Hex;
  blockNumber: Hex;
  status: Hex;
  contractAddress: Address | null;
  gasUsed: Hex;
  logs: TxLog[];
}

interface MinedTx {
  request: TxRequest;
  hash: Hex;
  receipt: TxReceipt;
}

export interface MinedBlock {
  number: bigint;
  timestamp: bigint;
  txs: MinedTx[];
}

const DEFAULT_GAS = 30_000_000n;

export interface TxQueue {
  /** Queues transactions in order (one JSON-RPC batch); they run in the next mined block. */
  send(requests: TxRequest[]): Promise<Hex[]>;
  /** Mines the queued transactions into one block at `timestamp` and checks every receipt. */
  mine(timestamp: bigint): Promise<MinedBlock>;
  /** Transactions sent since the queue was created. */
  readonly sentCount: number;
}

export function createTxQueue(rpc: RpcClient): TxQueue {
  const nonces = new Map<string, number>();
  let pending: { request: TxRequest; hash: Hex }[] = [];
  let sentCount = 0;

  async function loadNonces(senders: Address[]): Promise<void> {
    const unknown = [...new Set(senders.map((s) => s.toLowerCase()))].filter((s) => !nonces.has(s));
    const counts = await rpc.batch<Hex>(
      unknown.map((address) => ({ method: 'eth_getTransactionCount', params: [address, 'pending'] })),
    );
    unknown.forEach((address, i) => nonces.set(address, Number(counts[i])));
  }

  return {
    get sentCount() {
      return sentCount;
    },
    async send(requests) {
      if (requests.length === 0) return [];
      await loadNonces(requests.map((r) => r.from));
      const calls = requests.map((request) => {
        const sender = request.from.toLowerCase();
        const nonce = nonces.get(sender) ?? 0;
        nonces.set(sender, nonce + 1);
        const tx: Record<string, string> = {
          from: request.from,
          data: request.data,
          gas: `0x${(request.gas ?? DEFAULT_GAS).toString(16)}`,
          gasPrice: '0x0',
          nonce: `0x${nonce.toString(16)}`,
        };
        if (request.to) tx.to = request.to;
        if (request.value) tx.value = `0x${request.value.toString(16)}`;
        return { method: 'eth_sendTransaction', params: [tx] };
      });
      const hashes = await rpc.batch<Hex>(calls);
      hashes.forEach((hash, i) => pending.push({ request: requests[i]!, hash }));
      sentCount += hashes.length;
      return hashes;
    },
    async mine(timestamp) {
      const queued = pending;
      pending = [];
      await rpc.request('evm_mine', [Number(timestamp)]);
      const block = await rpc.request<{ number: Hex; timestamp: Hex }>('eth_getBlockByNumber', [
        'latest',
        false,
      ]);
      // One call for the whole block's receipts instead of one per transaction.
      const receipts = await rpc.request<TxReceipt[]>('eth_getBlockReceipts', [block.number]);
      const byHash = new Map(receipts.map((receipt) => [receipt.transactionHash, receipt]));
      const failures: string[] = [];
      const txs = queued.map(({ request, hash }) => {
        const receipt = byHash.get(hash);
        if (!receipt) failures.push(`${request.label}: not mined in block ${BigInt(block.number)} (${hash})`);
        else if (receipt.status !== '0x1') failures.push(`${request.label}: reverted (${hash})`);
        return { request, hash, receipt: receipt! };
      });
      if (failures.length > 0) {
        throw new Error(`block ${BigInt(block.number)} failed:\n${failures.slice(0, 20).join('\n')}`);
      }
      return { number: BigInt(block.number), timestamp: BigInt(block.timestamp), txs };
    },
  };
}
