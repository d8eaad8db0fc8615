// A private chain for the devnet suites that change state, with viem clients to act on it: the
// deployment-only private devnet of test/harness/private-devnet.ts (its own anvil, the protocol
// deployed), automining, so that the shared scenario devnet that other suites read is never touched.
// Each test reverts to a snapshot taken before it.
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  http,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import { anvil as anvilChain } from 'viem/chains';
import type { Deployment } from '../../devnet/deploy.ts';
import { devAccount } from '../../devnet/protocol-config.ts';
import { startPrivateDevnet } from '../harness/private-devnet.ts';

export interface ContractCall {
  from: Address;
  address: Address;
  abi: Abi;
  functionName: string;
  args?: readonly unknown[];
}

export interface Revert {
  errorName: string;
  args: readonly unknown[];
}

export interface PrivateProtocol {
  rpcUrl: string;
  deployment: Deployment;
  publicClient: PublicClient;
  /** Dev accounts free for tests to act as investors (funded with ETH by anvil). */
  investors: Address[];
  /** Sends and mines a transaction; throws if it reverts. */
  write(call: ContractCall): Promise<TransactionReceipt>;
  read<T>(call: Omit<ContractCall, 'from'>): Promise<T>;
  /** Simulates the call and returns the custom error it reverts with; throws if it succeeds. */
  revertOf(call: ContractCall): Promise<Revert>;
  snapshot(): Promise<Hex>;
  revertTo(id: Hex): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateProtocol(): Promise<PrivateProtocol> {
  const devnet = await startPrivateDevnet({ automine: true });
  try {
    const { rpcUrl, deployment } = devnet;
    const transport = http(rpcUrl);
    const publicClient = createPublicClient({ chain: anvilChain, transport }) as PublicClient;
    const walletClient: WalletClient = createWalletClient({ chain: anvilChain, transport });

    return {
      rpcUrl,
      deployment,
      publicClient,
      investors: [5, 6, 7, 8].map(devAccount),
      async write({ from, address, abi, functionName, args = [] }) {
        const hash = await walletClient.writeContract({
          account: from,
          chain: anvilChain,
          address,
          abi,
          functionName,
          args,
        });
        const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
        if (receipt.status !== 'success') throw new Error(`${functionName} reverted`);
        return receipt;
      },
      async read<T>({ address, abi, functionName, args = [] }: Omit<ContractCall, 'from'>): Promise<T> {
        return (await publicClient.readContract({ address, abi, functionName, args })) as T;
      },
      async revertOf({ from, address, abi, functionName, args = [] }) {
        try {
          await publicClient.simulateContract({ account: from, address, abi, functionName, args });
        } catch (error) {
          const reverted =
            error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
          if (reverted instanceof ContractFunctionRevertedError && reverted.data) {
            return { errorName: reverted.data.errorName, args: reverted.data.args ?? [] };
          }
          throw error;
        }
        throw new Error(`${functionName} did not revert`);
      },
      async snapshot() {
        return publicClient.request({ method: 'evm_snapshot' } as never) as Promise<Hex>;
      },
      async revertTo(id) {
        const ok = await publicClient.request({ method: 'evm_revert', params: [id] } as never);
        if (ok !== true) throw new Error(`evm_revert ${id} failed`);
      },
      stop: devnet.stop,
    };
  } catch (error) {
    await devnet.stop();
    throw error;
  }
}
