// A proxy that answers 401 to any request without `user:s@cret` as Basic authorization, as hosted
// nodes and indexers that hand out credentials in their URLs do, and forwards the rest to
// `target`; its URL carries those credentials. It counts what it refused.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AuthenticatingProxy {
  /** http://user:s%40cret@127.0.0.1:<port>, with `path` appended */
  url: string;
  refused(): number;
  close(): void;
}

export async function authenticatingProxy(target: string, path = ''): Promise<AuthenticatingProxy> {
  const expected = `Basic ${Buffer.from('user:s@cret').toString('base64')}`;
  let refused = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.headers.authorization !== expected) {
      refused++;
      res.writeHead(401).end();
      return;
    }
    const answer = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://user:s%40cret@127.0.0.1:${port}${path}`,
    refused: () => refused,
    close: () => server.close(),
  };
}
