// Loopback ports for the tests' own servers and for the refusals they expect.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A loopback port nothing listens on: taken from the OS, then given back. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', ready);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}
