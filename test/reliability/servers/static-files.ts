// A plain file server on loopback: serves a directory over HTTP, the way dividend distribution
// files are published in production (DISTRIBUTIONS_BASE as an http(s) base URL). Unknown paths
// and paths leaving the directory answer 404.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve, sep } from 'node:path';

export async function startStaticFiles(root: string): Promise<{ url: string; close(): Promise<void> }> {
  const base = resolve(root);
  const server = createServer((req, res) => {
    const file = resolve(base, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).slice(1));
    if (!file.startsWith(base + sep)) {
      res.writeHead(404).end();
      return;
    }
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body),
      () => res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
