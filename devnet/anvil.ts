// Starts a local anvil (from the @foundry-rs/anvil npm package) for the devnet and the tests:
// loopback only, an OS-assigned port, a fixed mnemonic, chain id and genesis timestamp so that the
// same deployment and scenario always produce the same chain. Mining is manual: the scenario
// queues a day's transactions and mines them with evm_mine at the day's timestamp. Anvil logs every
// request to its stdout, which goes to a drainer process rather than to this one: the indexer's
// thread blocks while it waits for a chain read, and a pipe it drained itself would fill during a
// batch of logged calls, leaving anvil stuck writing and the read unanswered.
//
// Anvil keeps the states of older blocks on disk, under $HOME/.foundry/anvil/tmp, and deletes them
// only when it returns from main, which it does not do on a signal: every stopped anvil left its
// states behind (77 MB for the test scenario, 20 GB for the benchmark's) until the disk filled and
// SQLite failed a test with "database or disk is full". Each anvil therefore gets a home of its own,
// removed when it stops. A process killed outright (SIGKILL, the OOM killer) takes its anvil down
// with it but removes nothing, so a home is named after the process that owns it, and an anvil
// started in a data directory first removes the homes there whose owner is gone.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRpcClient } from './rpc.ts';

const require = createRequire(import.meta.url);

export const DEVNET_MNEMONIC = 'test test test test test test test test test test test junk';
export const DEVNET_CHAIN_ID = 31337;
/** 2025-01-01T00:00:00Z: genesis of the devnet; scenario day d is mined at GENESIS + d days. */
export const DEVNET_GENESIS_TIMESTAMP = 1_735_689_600;

/** An anvil home's name: this, its owner's process id, a dash and mkdtemp's random part. */
const HOME_PREFIX = 'anvil-home-';

/** Whether process `pid` exists (one of another user's, which may not be signalled, does). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the anvil homes under `parent` whose owner process is gone. */
function removeOrphanedHomes(parent: string): void {
  for (const name of readdirSync(parent)) {
    const owner = new RegExp(`^${HOME_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (owner !== undefined && !exists(Number(owner)))
      rmSync(join(parent, name), { recursive: true, force: true });
  }
}

interface AnvilOptions {
  /** Mine every transaction at once (default false: blocks are mined explicitly with evm_mine). */
  automine?: boolean;
  /**
   * Where anvil's own home is made (default the OS temp directory): the service keeps to DATA_DIR.
   * The homes left there by processes killed outright are removed first (only where it is given: the
   * OS temp directory may be shared with processes this one cannot see).
   */
  homeParent?: string;
  /**
   * How many older blocks' states anvil may write to its home (default: no limit). A devnet that
   * runs for hours needs a limit: each state is a file of the whole chain state (about 1 MB for
   * the scenario's), so an unlimited home grew by about 2 GB an hour at a block every 5 s. Reads at
   * blocks older than those states then fail; the service and the subgraph read only the latest.
   */
  maxPersistedStates?: number;
}

/** The states a long-running devnet (npm start, npm run devnet) keeps on disk: about 150 MB. */
export const LONG_RUNNING_PERSISTED_STATES = 128;

export interface AnvilInstance {
  rpcUrl: string;
  pid: number;
  /** The home anvil runs with: it keeps older blocks' states under it; removed when anvil stops. */
  home: string;
  stop(): Promise<void>;
}

/**
 * The native anvil binary from the platform package @foundry-rs/anvil installed; spawning it
 * directly (rather than the node wrapper in node_modules/.bin) leaves one process to stop.
 * Falls back to the wrapper on platforms without a matching package.
 */
function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const executable = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  try {
    const platformPackage = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`);
    const binary = join(dirname(platformPackage), 'bin', executable);
    if (existsSync(binary)) return binary;
  } catch {
    // no platform package: use the wrapper
  }
  const wrapperPackage = require.resolve('@foundry-rs/anvil/package.json');
  return join(dirname(wrapperPackage), '..', '..', '.bin', 'anvil');
}

/** util-linux's setpriv, where Debian and most Linux systems install it */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/**
 * The command that runs `binary` so that the kernel ends it when this process dies, SIGKILL and
 * the OOM killer included, which no exit handler sees: an anvil left running would keep answering,
 * and its data dir would be refused as a running devnet's. setpriv sets the parent-death signal
 * and becomes anvil (exec), so the pid is anvil's. Elsewhere anvil runs as it is.
 */
function endedWithThisProcess(binary: string, args: string[]): [string, string[]] {
  if (process.platform !== 'linux' || SETPRIV === undefined) return [binary, args];
  return [SETPRIV, ['--pdeathsig', 'KILL', '--', binary, ...args]];
}

/** How long anvil may take to answer before the start gives up. */
const START_TIMEOUT_MS = 20_000;

/** Starts anvil and resolves once it answers eth_chainId. */
export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilInstance> {
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--mnemonic',
    DEVNET_MNEMONIC,
    '--chain-id',
    String(DEVNET_CHAIN_ID),
    '--timestamp',
    String(DEVNET_GENESIS_TIMESTAMP),
    '--order',
    'fifo',
    '--auto-impersonate',
    // Fees play no part in the protocol: zero base fee and a block gas limit no day can reach keep
    // every queued transaction in its day's block.
    '--block-base-fee-per-gas',
    '0',
    '--gas-price',
    '0',
    '--gas-limit',
    '1000000000000',
    '--disable-code-size-limit',
    '--accounts',
    '10',
    ...(options.automine ? [] : ['--no-mining']),
    ...(options.maxPersistedStates === undefined
      ? []
      : ['--max-persisted-states', String(options.maxPersistedStates)]),
  ];
  // `sed` passes on the line with the port and quits; `cat` then discards the rest as it comes
  const drainer = spawn('sh', ['-c', 'sed -n "/Listening on/{p;q;}"; exec cat > /dev/null'], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  if (options.homeParent !== undefined) removeOrphanedHomes(options.homeParent);
  const home = mkdtempSync(join(options.homeParent ?? tmpdir(), `${HOME_PREFIX}${process.pid}-`));
  const removeHome = (): void => rmSync(home, { recursive: true, force: true });
  const [command, commandArgs] = endedWithThisProcess(anvilBinary(), args);
  const child = spawn(command, commandArgs, {
    stdio: ['ignore', drainer.stdin, 'pipe'],
    env: { ...process.env, HOME: home },
  });
  // anvil holds the drainer's input now; with this end closed, the drainer ends when anvil does
  drainer.stdin.destroy();
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      removeHome();
      resolve(code);
    }),
  );
  // If this process ends without stop() (a crash, process.exit), take anvil down with it.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
    removeHome();
  };
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const rpcUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`anvil did not start within ${START_TIMEOUT_MS} ms:\n${output}`));
    }, START_TIMEOUT_MS);
    let listening = '';
    drainer.stdout.on('data', (chunk: Buffer) => {
      listening += chunk.toString();
      const match = /Listening on (127\.0\.0\.1:\d+)/.exec(listening);
      if (match) {
        clearTimeout(timer);
        resolve(`http://${match[1]}`);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited with code ${code} before listening:\n${output}`));
    });
  });

  const rpc = createRpcClient(rpcUrl);
  const chainId = await rpc.request<string>('eth_chainId', []);
  if (Number(chainId) !== DEVNET_CHAIN_ID) throw new Error(`anvil answered chain id ${chainId}`);

  let stopped: Promise<void> | undefined;
  return {
    rpcUrl,
    pid: child.pid ?? -1,
    home,
    stop(): Promise<void> {
      stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(timer);
        }
      })();
      return stopped;
    },
  };
}
