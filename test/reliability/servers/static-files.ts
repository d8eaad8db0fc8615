// A plain file server on loopback: serves a directory over HTTP, the way dividend distribution
// files are published in production (DISTRIBUTIONS_BASE as an http(s) base URL). Unknown paths
// and paths leaving the directory answer 404. Files are streamed, so a huge (or sparse) file costs
// the server nothing; like nginx's gzip_static, a file's `.gz` sibling, when there is one, is
// sent in its place with Content-Encoding: gzip. With `chunked`, no Content-Length is sent, as
// a server generating its answer would; with `delayMs`, each answer starts that late, as a distant
// or busy server's would, so that the requests a client has in flight at once overlap and show.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { resolve, sep } from 'node:path';

export interface StaticFiles {
  url: string;
  /** how many requests asked for `path` (as requested, e.g. '/distributions/f/30.json') */
  requestsFor(path: string): number;
  /**
   * the most requests at once that had arrived and were not yet being answered (waiting out
   * `delayMs`): an answer's last bytes and the client's next request may arrive in either order, so
   * answers under way are not counted
   */
  peakUnanswered(): number;
  close(): Promise<void>;
}

export async function startStaticFiles(
  root: string,
  options: { chunked?: boolean; delayMs?: number } = {},
): Promise<StaticFiles> {
  const base = resolve(root);
  const requests = new Map<string, number>();
  let unanswered = 0;
  let peak = 0;
  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    requests.set(pathname, (requests.get(pathname) ?? 0) + 1);
    let file: string;
    try {
      file = resolve(base, decodeURIComponent(pathname).slice(1));
    } catch {
      file = base; // a malformed escape names no file
    }
    if (!file.startsWith(base + sep)) {
      res.writeHead(404).end();
      return;
    }
    const regularFile = (path: string) =>
      stat(path).then(
        (s) => (s.isFile() ? s : undefined),
        () => undefined,
      );
    void (async () => {
      unanswered++;
      peak = Math.max(peak, unanswered);
      if (options.delayMs) await sleep(options.delayMs);
      unanswered--;
      const gzipped = await regularFile(`${file}.gz`);
      const found = gzipped ?? (await regularFile(file));
      if (!found) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      const headers: Record<string, string | number> = { 'content-type': 'application/json' };
      if (gzipped) headers['content-encoding'] = 'gzip';
      if (!options.chunked) headers['content-length'] = found.size;
      res.writeHead(200, headers);
      // a client that stops reading (a refused body) closes the connection: the stream goes with it
      createReadStream(gzipped ? `${file}.gz` : file)
        .on('error', () => res.destroy())
        .pipe(res);
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requestsFor: (path) => requests.get(path) ?? 0,
    peakUnanswered: () => peak,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
