// A JSON-RPC node on loopback that answers eth_getLogs with a chosen number of logs per block and,
// like hosted providers, refuses a range whose answer would exceed a cap: what the chain source's
// adaptive span is tested against (anvil cannot cheaply hold thousands of logs per block). It
// records every range asked for.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LogDensityNode {
  url: string;
  /** [fromBlock, toBlock] of every eth_getLogs request, refused ones included */
  readonly ranges: [number, number][];
  close(): Promise<void>;
}

interface RpcCall {
  id: number;
  method: string;
  params: [{ fromBlock: string; toBlock: string; topics: string[][] }];
}

const hex = (n: number) => `0x${n.toString(16)}`;
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

/** `logsInBlock(n)` logs in block n; a range holding more than `cap` logs is refused with a -32005 error. */
export async function startLogDensityNode(
  logsInBlock: (block: number) => number,
  cap = Number.POSITIVE_INFINITY,
): Promise<LogDensityNode> {
  const ranges: [number, number][] = [];
  function answer(call: RpcCall): object {
    if (call.method !== 'eth_getLogs') return { error: { code: -32601, message: 'method not found' } };
    const from = Number(call.params[0].fromBlock);
    const to = Number(call.params[0].toBlock);
    ranges.push([from, to]);
    let total = 0;
    for (let n = from; n <= to; n++) total += logsInBlock(n);
    if (total > cap) return { error: { code: -32005, message: `query returned more than ${cap} results` } };
    const logs = [];
    for (let n = from; n <= to; n++) {
      for (let i = 0; i < logsInBlock(n); i++) {
        logs.push({
          address: '0x00000000000000000000000000000000000000aa',
          blockHash: word(n),
          blockNumber: hex(n),
          data: '0x',
          logIndex: hex(i),
          transactionHash: word(n * 100_000 + i),
          transactionIndex: hex(i),
          topics: [call.params[0].topics[0]![0]],
          removed: false,
        });
      }
    }
    return { result: logs };
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // viem sends a batch (an array) when batching is on
      const body = JSON.parse(Buffer.concat(chunks).toString()) as RpcCall | RpcCall[];
      const reply = (call: RpcCall) => ({ jsonrpc: '2.0', id: call.id, ...answer(call) });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(body) ? body.map(reply) : reply(body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ranges,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
