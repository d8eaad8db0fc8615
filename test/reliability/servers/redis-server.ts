// A real redis-server (the Debian package .ci/run installs) started on a free loopback port with
// persistence off, for tests that share rate-limit counters between app instances and for those
// that make Redis misbehave: restarted with a password, stopped with SIGSTOP. A missing binary is a
// failure that names it, never a silent skip.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closedPort } from './ports.ts';

export interface RedisServer {
  url: string;
  port: number;
  /** SIGSTOP: connections stay open and every command waits, as on a hung server */
  pause(): void;
  /** SIGCONT: the commands sent while it was paused are answered */
  resume(): void;
  stop(): Promise<void>;
}

/**
 * Starts redis-server on `port` (a free one when not given; given, to restart one where it was),
 * with `args` added to its command line (e.g. ['--requirepass', 'secret']).
 */
export async function startRedisServer(port?: number, args: string[] = []): Promise<RedisServer> {
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error(
      'redis-server is not installed: the rate-limit tests need it (apt-get install -y redis-server; .ci/run installs it)',
    );
  }
  const listenPort = port ?? (await closedPort());
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(listenPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
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
    url: `redis://127.0.0.1:${listenPort}`,
    port: listenPort,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        // a paused server handles the SIGTERM only once it runs again
        child.kill('SIGCONT');
      }),
  };
}
