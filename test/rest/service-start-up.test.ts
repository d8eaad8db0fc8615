// `npm start`'s entry point run as a child process, as an operator runs it: what the configuration
// gets wrong stops it with one line naming the variable (exit 2 before start-up, exit 1 during),
// never a stack trace, including a SUBGRAPH_URL that serves no subgraph and an RPC_URL of another
// chain than REGISTRY's; and the URLs it prints hide the credentials and keys they may carry. A stop
// waits a grace period for the answers under way, then closes their connections.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startAnvil } from '../../devnet/anvil.ts';
import { createRpcClient } from '../../devnet/rpc.ts';
import { closedPort } from '../reliability/servers/ports.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
/** network mode against nothing, for what fails before the upstreams are checked */
const NOWHERE = { SUBGRAPH_URL: 'http://127.0.0.1:9/subgraphs/name/x', REGISTRY: 'registry/devnet.json' };
/** network mode over the harness's indexer and devnet, which the start-up checks accept */
const NETWORK = {
  SUBGRAPH_URL: inject('indexer').queryUrl,
  RPC_URL: inject('devnet').rpcUrl,
  REGISTRY: 'registry/devnet.json',
};
/** devnet mode's shortest history (scenario-params.ts's minimums), for what fails once it is up */
const SMALLEST_SCENARIO = {
  SCENARIO_EPOCHS: '20',
  SCENARIO_INVESTORS: '1',
  SCENARIO_REQUESTS_PER_EPOCH: '0',
  SCENARIO_ONBOARDING_DAYS: '1',
};
/** the harness indexer's index-node status API */
const STATUS_URL = new URL('/graphql', NETWORK.SUBGRAPH_URL).href;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs main.ts with `env` until it exits, or until it prints a line starting with `stopAt` (by
 * default the last of those saying it listens), then stops it with SIGTERM.
 */
function runService(env: Record<string, string>, stopAt = 'Ctrl-C to stop'): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    stdout += `${line}\n`;
    if (line.startsWith(stopAt)) child.kill('SIGTERM');
  });
  return new Promise((done) => child.once('exit', (code) => done({ code, stdout, stderr })));
}

const loopbackServers: Server[] = [];
afterAll(() => loopbackServers.forEach((server) => server.close()));

async function occupiedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  loopbackServers.push(server);
  return (server.address() as { port: number }).port;
}

/**
 * A loopback server passing every POST body on to `target`, whatever the path and credentials it
 * is called with: it stands for a hosted endpoint whose URL carries a key.
 */
async function forwarderTo(target: string): Promise<string> {
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      }).then(async (answer) =>
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()),
      );
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  loopbackServers.push(server);
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** A loopback server answering every request with `body` as JSON; its URL. */
async function answering(body: unknown): Promise<string> {
  const server = createHttpServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
  );
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  loopbackServers.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('the service start-up', () => {
  it('stops with one line naming HOST and PORT when the port is taken', async () => {
    const port = await occupiedPort();
    const run = await runService({ ...NETWORK, PORT: String(port) });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      new RegExp(`^start-up error: cannot listen on HOST 127\\.0\\.0\\.1, PORT ${port}: .*EADDRINUSE`),
    );
  });

  it('stops devnet mode with one line naming HOST and PORT when the port is taken, before it starts a devnet', async () => {
    const port = await occupiedPort();
    const run = await runService({ ...SMALLEST_SCENARIO, PORT: String(port) });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim()).toMatch(
      new RegExp(
        `^start-up error: cannot listen on HOST 127\\.0\\.0\\.1, PORT ${port}: .*EADDRINUSE[^\\n]*$`,
      ),
    );
  });

  it('stops devnet mode quietly on SIGTERM while its indexer catches up with the devnet', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'service-data-dir-'));
    try {
      const run = await runService(
        { ...SMALLEST_SCENARIO, DATA_DIR: dataDir },
        'indexer: catching up with the devnet',
      );
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('stops with one line naming REDIS_URL, its password hidden, when Redis cannot be reached', async () => {
    const port = await closedPort();
    const run = await runService({ ...NOWHERE, REDIS_URL: `redis://:hunter2@127.0.0.1:${port}` });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      new RegExp(
        `^start-up error: cannot connect to REDIS_URL \\(redis://127\\.0\\.0\\.1:${port}/0\\): .*ECONNREFUSED`,
      ),
    );
    expect(run.stderr).not.toContain('hunter2');
  });

  it('stops with one line naming REGISTRY when its file cannot be read', async () => {
    const run = await runService({ ...NOWHERE, REGISTRY: 'registry/nowhere.json' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^start-up error: cannot load REGISTRY: Cannot read registry .*nowhere\.json: ENOENT/,
    );
  });

  it('stops devnet mode with one line naming DATA_DIR when its devnet directory cannot be made', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'service-data-dir-')), 'a-file');
    writeFileSync(file, '');
    try {
      const run = await runService({ DATA_DIR: file });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toMatch(
        new RegExp(
          `^start-up error: cannot use DATA_DIR \\(${file}\\): cannot create ${file}/devnet: ENOTDIR[^\\n]*$`,
        ),
      );
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
    }
  });

  it('stops with one line naming DISTRIBUTIONS_BASE when it is a directory that does not exist', async () => {
    const run = await runService({ ...NETWORK, DISTRIBUTIONS_BASE: '/nonexistent/distributions' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'start-up error: cannot use DISTRIBUTIONS_BASE (/nonexistent/distributions): it cannot be read (no such directory): set it to the directory holding distributions/<fund>/<epoch>.json (the parent of distributions/), or to an http(s) base URL',
    );
  });

  it('stops devnet mode with one line naming DISTRIBUTIONS_BASE when it is a directory that does not exist', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'service-data-dir-'));
    try {
      // the smallest scenario: the check comes once the devnet and its indexer are up
      const run = await runService({
        ...SMALLEST_SCENARIO,
        DATA_DIR: dataDir,
        DISTRIBUTIONS_BASE: '/nonexistent/distributions',
      });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        'start-up error: cannot use DISTRIBUTIONS_BASE (/nonexistent/distributions): it cannot be read (no such directory): set it to the directory holding distributions/<fund>/<epoch>.json (the parent of distributions/), or to an http(s) base URL',
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a SCENARIO_ value that is not decimal digits as a configuration error', async () => {
    const run = await runService({ SCENARIO_EPOCHS: '1e3' });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'configuration error: SCENARIO_EPOCHS must be an integer of at least 20 in decimal digits, got "1e3"',
    );
  });

  it('prints the subgraph and RPC URLs without the credentials and keys they carry', async () => {
    const subgraphHost = await forwarderTo(NETWORK.SUBGRAPH_URL);
    const rpcHost = await forwarderTo(NETWORK.RPC_URL);
    const run = await runService({
      SUBGRAPH_URL: `http://user:secret@${subgraphHost}/api/key123/subgraphs/id/Qm`,
      REGISTRY: 'registry/devnet.json',
      RPC_URL: `http://${rpcHost}/v3/key456`,
    });
    expect(run.stdout).toContain(`subgraph      http://${subgraphHost}/…`);
    expect(run.stdout).toContain(`chain RPC     http://${rpcHost}/…`);
    expect(run.stdout + run.stderr).not.toMatch(/secret|key123|key456/);
  });

  it('stops with one line naming SUBGRAPH_URL, its path hidden, when no subgraph is served there', async () => {
    const typo = NETWORK.SUBGRAPH_URL.replace(/fund-protocol$/, 'fund-protocl');
    const run = await runService({ ...NETWORK, SUBGRAPH_URL: typo });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `start-up error: cannot use SUBGRAPH_URL (${new URL(typo).origin}/…): it answered a _meta query with HTTP 404 and the errors "no subgraph is served at …": it serves no graph-node subgraph there`,
    );
  });

  it("prints the status API it asks whether indexing has halted, once it knows the subgraph's deployment", async () => {
    const statusHost = await forwarderTo(STATUS_URL);
    const run = await runService({ ...NETWORK, SUBGRAPH_STATUS_URL: `http://${statusHost}/key789/graphql` });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`status API    http://${statusHost}/…`);
    expect(run.stdout + run.stderr).not.toContain('key789');
  });

  it("stops with one line naming SUBGRAPH_URL and REGISTRY when the subgraph indexes another network than the registry's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'service-registry-'));
    const registryFile = join(dir, 'sepolia-named.json');
    const devnetRegistry = JSON.parse(
      readFileSync(resolve(repoRoot, 'registry/devnet.json'), 'utf8'),
    ) as object;
    writeFileSync(registryFile, JSON.stringify({ ...devnetRegistry, network: 'sepolia' }));
    try {
      // no RPC_URL, whose chain id would otherwise tell
      const run = await runService({
        SUBGRAPH_URL: NETWORK.SUBGRAPH_URL,
        SUBGRAPH_STATUS_URL: STATUS_URL,
        REGISTRY: registryFile,
      });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toMatch(
        new RegExp(
          `^start-up error: cannot use SUBGRAPH_URL \\(.*\\): its deployment \\S+ indexes network "devnet" \\(SUBGRAPH_STATUS_URL says\\), but REGISTRY ${registryFile} is for network "sepolia" \\(network\\): point SUBGRAPH_URL at the subgraph of sepolia, or REGISTRY at the registry of devnet$`,
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops with one line naming SUBGRAPH_STATUS_URL when it is no index-node status API', async () => {
    // the subgraph's own endpoint: a GraphQL server, but of the subgraph's schema
    const run = await runService({ ...NETWORK, SUBGRAPH_STATUS_URL: NETWORK.SUBGRAPH_URL });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^start-up error: cannot use SUBGRAPH_STATUS_URL \(http:\/\/127\.0\.0\.1:\d+\/…\): it answered an indexingStatuses query with HTTP \d+ and the errors ".*indexingStatuses.*": it is no index-node status API \(graph-node serves one at :8030\/graphql\)$/,
    );
  });

  it('stops with one line naming SUBGRAPH_STATUS_URL when its indexer does not index the subgraph served', async () => {
    const otherIndexer = await answering({ data: { indexingStatuses: [] } });
    const run = await runService({ ...NETWORK, SUBGRAPH_STATUS_URL: otherIndexer });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `start-up error: cannot use SUBGRAPH_STATUS_URL (${otherIndexer}): it does not know deployment ${inject('indexer').deployment}, which SUBGRAPH_URL serves`,
    );
  });

  it('stops with one line naming RPC_URL and REGISTRY when the node serves another chain', async () => {
    const anvil = await startAnvil();
    try {
      await createRpcClient(anvil.rpcUrl).request('anvil_setChainId', [11155111]);
      const run = await runService({ ...NETWORK, RPC_URL: anvil.rpcUrl });
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        `start-up error: cannot use RPC_URL (${anvil.rpcUrl}): it serves chain 11155111, but REGISTRY registry/devnet.json is for chain 31337 (chain.id): point RPC_URL at a node of chain 31337, or REGISTRY at the registry of chain 11155111`,
      );
    } finally {
      await anvil.stop();
    }
  });
});

describe('the service stop', () => {
  it('exits 0 without a word on stderr in devnet mode while its anvil is slow to stop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'service-data-dir-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, ...SMALLEST_SCENARIO },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await new Promise<void>((listening) =>
        createInterface({ input: child.stdout }).on('line', (line) => {
          if (line.startsWith('Ctrl-C to stop')) listening();
        }),
      );
      // anvil, frozen, takes the stop its 5 s until SIGKILL: the stop's steps after the indexer's
      const anvil = Number(execFileSync('pgrep', ['-P', String(child.pid), 'anvil']).toString());
      process.kill(anvil, 'SIGSTOP');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(stderr).toBe('');
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('closes a connection whose request is still arriving once its grace has passed, and exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ...NETWORK },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    let stdout = '';
    const listening = new Promise<URL>((resolve) =>
      createInterface({ input: child.stdout }).on('line', (line) => {
        stdout += `${line}\n`;
        const url = /listening on (http:\/\/\S+)/.exec(line)?.[1];
        if (url) resolve(new URL(url));
      }),
    );
    const url = await listening;
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    const closed = once(socket, 'close');
    // a body that never arrives whole: Node would wait for it until its 30 s request timeout
    socket.write(
      'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    await closed;
    expect(code).toBe(0);
    expect(stdout).toContain('service: closing the connections still open 5 s after the stop');
  });
});
