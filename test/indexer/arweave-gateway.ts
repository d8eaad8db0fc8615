// An Arweave gateway on loopback for tests: GET /<transaction id>[/<path>] answers the bytes added
// under that id, with their Content-Length, or 404; told to, it streams them without announcing
// their size, which graph-node's client refuses. It records the paths asked for.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ArweaveGateway {
  url: string;
  /** serves `content` at /`id` */
  add(id: string, content: string): void;
  /** serves the files of these ids chunked, without Content-Length */
  withoutLength: Set<string>;
  /** the paths asked for, in order */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startArweaveGateway(): Promise<ArweaveGateway> {
  const files = new Map<string, Buffer>();
  const withoutLength = new Set<string>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const id = decodeURIComponent((req.url ?? '/').slice(1));
    requests.push(id);
    const content = files.get(id);
    if (req.method !== 'GET' || !content) {
      res.writeHead(404).end('not found');
      return;
    }
    if (withoutLength.has(id)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(content);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-length': content.length }).end(content);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    add: (id, content) => files.set(id, Buffer.from(content)),
    withoutLength,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
