// A real redis-server (the Debian package .ci/run installs) started on a free loopback port with
// persistence off, for tests that share rate-limit counters between app instances. A missing
// binary is a failure that names it, never a silent skip.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closedPort } from './ports.ts';

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts redis-server on `port` (a free one when not given; given, to restart one where it was). */
export async function startRedisServer(port?: number): Promise<RedisServer> {
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error(
      'redis-server is not installed: the rate-limit tests need it (apt-get install -y redis-server; .ci/run installs it)',
    );
  }
  port ??= await closedPort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`)),
    );
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
