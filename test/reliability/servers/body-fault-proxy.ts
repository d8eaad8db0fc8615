// A real HTTP server on loopback in front of an upstream (anvil's JSON-RPC, the indexer's GraphQL
// endpoint) whose faults come after good headers: an answer that stalls, one that trickles, one far
// larger than any real answer. The fault proxy (fault-proxy.ts) reads its upstream's answer whole
// and sends it at once, so it cannot make these. With no fault it forwards each request, streaming
// both ways. Tests switch its fault between requests; faults are made on the wire, never by
// patching the service's modules.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type BodyFault =
  /** forward unchanged */
  | { kind: 'pass' }
  /** 200, application/json, the start of a JSON-RPC answer, then nothing */
  | { kind: 'stall' }
  /** 200, application/json, the start of a JSON-RPC answer, then a space every `everyMs` */
  | { kind: 'trickle'; everyMs: number }
  /** 200, application/json, a JSON object of `bytes` bytes, sent as fast as the client takes it */
  | { kind: 'huge'; bytes: number };

export interface BodyFaultProxy {
  url: string;
  /** how many bytes of each huge answer were sent so far, in order: what the client has taken */
  hugeAnswersSent(): number[];
  set(fault: BodyFault): void;
  close(): Promise<void>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const MiB = 2 ** 20;

/** Sends `bytes` of a JSON object, writing as fast as the client takes it; counts in `sent.bytes`. */
function sendHuge(res: ServerResponse, bytes: number, sent: { bytes: number }): void {
  const open = Buffer.from('{"padding":"');
  const close = Buffer.from('"}');
  const padding = Buffer.alloc(MiB, 'a');
  const write = (chunk: Buffer) => {
    sent.bytes += chunk.length;
    return res.write(chunk);
  };
  const pump = () => {
    if (res.destroyed) return;
    while (sent.bytes + close.length < bytes) {
      const room = bytes - sent.bytes - close.length;
      if (!write(room < MiB ? padding.subarray(0, room) : padding)) {
        res.once('drain', pump);
        return;
      }
    }
    write(close);
    res.end();
  };
  res.writeHead(200, JSON_HEADERS);
  write(open);
  pump();
}

/** Starts the proxy on an OS-assigned loopback port in front of `target` (its path is kept). */
export async function startBodyFaultProxy(target: string): Promise<BodyFaultProxy> {
  const upstream = new URL(target);
  let fault: BodyFault = { kind: 'pass' };
  const hugeAnswers: { bytes: number }[] = [];
  const sockets = new Set<Socket>();

  function forward(req: IncomingMessage, res: ServerResponse): void {
    const sent = request(
      new URL(req.url ?? '/', upstream.origin),
      { method: req.method, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    sent.on('error', () => res.destroy());
    req.pipe(sent);
  }

  const server = createServer((req, res) => {
    const current = fault;
    if (current.kind === 'pass') return forward(req, res);
    // the request is read whole first, as an upstream does before it answers
    req.resume();
    req.once('end', () => {
      if (current.kind === 'huge') {
        const sent = { bytes: 0 };
        hugeAnswers.push(sent);
        sendHuge(res, current.bytes, sent);
        return;
      }
      res.writeHead(200, JSON_HEADERS);
      res.write('{"jsonrpc":"2.0","id":1,');
      if (current.kind === 'trickle') {
        const trickle = setInterval(() => res.write(' '), current.everyMs);
        res.once('close', () => clearInterval(trickle));
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/$/, '')}`,
    hugeAnswersSent: () => hugeAnswers.map((sent) => sent.bytes),
    set(next) {
      fault = next;
      // a fault takes effect on the next request; answers under way (stalled ones too) end here
      for (const socket of sockets) socket.destroy();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
