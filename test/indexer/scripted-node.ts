// A JSON-RPC endpoint on loopback in front of a node that answers chosen HTTP requests itself, as
// providers and the proxies before them refuse requests: a 429 with Retry-After, an HTML error
// page, a non-2xx status with a JSON-RPC body, a refused batch. The rest are forwarded unchanged.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The JSON-RPC calls of one HTTP request (one for a single call, several for a batch). */
export interface ScriptedRequest {
  calls: { id: number; method: string; params: unknown[] }[];
  /** whether it came as a batch (a JSON array) */
  batch: boolean;
}

/** What the endpoint answers itself. */
export interface ScriptedAnswer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export interface ScriptedNode {
  url: string;
  /** every request received, in order */
  readonly requests: ScriptedRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString()));
    req.on('error', reject);
  });
}

/** Forwards to `upstream` each request `script` returns null for; answers the others itself. */
export async function startScriptedNode(
  upstream: string,
  script: (request: ScriptedRequest, ordinal: number) => ScriptedAnswer | null,
): Promise<ScriptedNode> {
  const requests: ScriptedRequest[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then(async (text) => {
      const json = JSON.parse(text) as ScriptedRequest['calls'][number] | ScriptedRequest['calls'];
      const request = { calls: [json].flat(), batch: Array.isArray(json) };
      requests.push(request);
      const scripted = script(request, requests.length - 1);
      if (scripted) {
        res
          .writeHead(scripted.status, { 'content-type': 'application/json', ...scripted.headers })
          .end(scripted.body);
        return;
      }
      const answer = await fetch(upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
