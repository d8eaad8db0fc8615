// The fault proxy in a process of its own, for code under test that blocks its thread while it waits
// for the upstream: the indexer's synchronous chain reads (ethereum.call) would otherwise wait for a
// proxy that cannot answer until they give up. Faults cross the process boundary as data, so only
// the kinds without functions can be set.
import { fork, type ChildProcess } from 'node:child_process';
import { startFaultProxy, type Fault, type RpcRequest } from './fault-proxy.ts';

export type DataFault = Exclude<Fault, { kind: 'rewrite' | 'flaky' }>;

export interface FaultProxyProcess {
  url: string;
  set(fault: DataFault): Promise<void>;
  /** requests the fault made fail so far */
  failed(): Promise<number>;
  /** the JSON-RPC requests received so far (see FaultProxy.rpcRequests) */
  rpcRequests(): Promise<RpcRequest[]>;
  /** see FaultProxy.peakInFlight */
  peakInFlight(method: string): Promise<number>;
  close(): Promise<void>;
}

type Command = { id: number; set?: DataFault; failed?: true; rpcRequests?: true; peakInFlight?: string };

/** Forks this module as a proxy process in front of `target`. */
export async function startFaultProxyProcess(target: string): Promise<FaultProxyProcess> {
  const child: ChildProcess = fork(import.meta.filename, ['--serve', target], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const replies = new Map<number, (value: unknown) => void>();
  let nextId = 0;
  const url = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fault proxy process exited with ${code}`)));
    child.on('message', (message: { url?: string; id?: number; value?: unknown }) => {
      if (message.url) resolve(message.url);
      else replies.get(message.id!)?.(message.value);
    });
  });
  const ask = (command: Omit<Command, 'id'>) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      replies.set(id, resolve);
      child.send({ ...command, id });
    });
  return {
    url,
    set: async (fault) => void (await ask({ set: fault })),
    failed: async () => (await ask({ failed: true })) as number,
    rpcRequests: async () => (await ask({ rpcRequests: true })) as RpcRequest[],
    peakInFlight: async (method) => (await ask({ peakInFlight: method })) as number,
    close: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit');
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

if (process.argv[2] === '--serve') {
  const proxy = await startFaultProxy(process.argv[3]!);
  process.on('message', (command: Command) => {
    if (command.set) proxy.set(command.set);
    const value = command.failed
      ? proxy.failed
      : command.rpcRequests
        ? proxy.rpcRequests()
        : command.peakInFlight
          ? proxy.peakInFlight(command.peakInFlight)
          : null;
    process.send!({ id: command.id, value });
  });
  process.send!({ url: proxy.url });
}
