// `npm start`'s entry point run as a child process, as an operator runs it: what the configuration
// gets wrong stops it with one line naming the variable (exit 2 before start-up, exit 1 during),
// never a stack trace; and the URLs it prints hide the credentials and keys they may carry.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
/** network mode against nothing: no devnet is started, so each run takes a second or two */
const NETWORK = { SUBGRAPH_URL: 'http://127.0.0.1:9/subgraphs/name/x', REGISTRY: 'registry/devnet.json' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs main.ts with `env` until it exits, or until it prints that it listens (then stops it). */
function runService(env: Record<string, string>): Promise<Run> {
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
    if (line.startsWith('Ctrl-C to stop')) child.kill('SIGTERM');
  });
  return new Promise((done) => child.once('exit', (code) => done({ code, stdout, stderr })));
}

const occupied: Server[] = [];
afterAll(() => occupied.forEach((server) => server.close()));

async function occupiedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  occupied.push(server);
  return (server.address() as { port: number }).port;
}

/** A loopback port nothing listens on: taken, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
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

  it('stops with one line naming REDIS_URL, its password hidden, when Redis cannot be reached', async () => {
    const port = await closedPort();
    const run = await runService({ ...NETWORK, REDIS_URL: `redis://:hunter2@127.0.0.1:${port}` });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      new RegExp(
        `^start-up error: cannot connect to REDIS_URL \\(redis://127\\.0\\.0\\.1:${port}/…\\): .*ECONNREFUSED`,
      ),
    );
    expect(run.stderr).not.toContain('hunter2');
  });

  it('stops with one line naming REGISTRY when its file cannot be read', async () => {
    const run = await runService({ ...NETWORK, REGISTRY: 'registry/nowhere.json' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^start-up error: cannot load REGISTRY: Cannot read registry .*nowhere\.json: ENOENT/,
    );
  });

  it('refuses a SCENARIO_ value that is not decimal digits as a configuration error', async () => {
    const run = await runService({ SCENARIO_EPOCHS: '1e3' });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'configuration error: SCENARIO_EPOCHS must be an integer >= 20 in decimal digits, got "1e3"',
    );
  });

  it('prints the subgraph and RPC URLs without the credentials and keys they carry', async () => {
    const run = await runService({
      SUBGRAPH_URL: 'http://user:secret@127.0.0.1:9/api/key123/subgraphs/id/Qm',
      REGISTRY: 'registry/devnet.json',
      RPC_URL: 'https://127.0.0.1:9/v3/key456',
    });
    expect(run.stdout).toContain('subgraph      http://127.0.0.1:9/…');
    expect(run.stdout).toContain('chain RPC     https://127.0.0.1:9/…');
    expect(run.stdout + run.stderr).not.toMatch(/secret|key123|key456/);
  });
});
