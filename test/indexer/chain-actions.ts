// Transactions the indexer end-to-end tests make on their own anvil: NAV drafts from the operator
// and module pauses from a fund's multisig, each mined as one block, plus anvil snapshots to build
// alternative histories.
import { encodeFunctionData, type Address } from 'viem';
import { abiOf, type Deployment } from '../../devnet/deploy.ts';
import { createRpcClient, type RpcClient } from '../../devnet/rpc.ts';
import { createTxQueue, type TxRequest } from '../../devnet/tx-queue.ts';

export class ChainActions {
  readonly rpc: RpcClient;

  constructor(
    rpcUrl: string,
    private readonly deployment: Deployment,
  ) {
    this.rpc = createRpcClient(rpcUrl);
  }

  async head(): Promise<{ number: number; timestamp: number; hash: string }> {
    const block = await this.rpc.request<{ number: string; timestamp: string; hash: string }>(
      'eth_getBlockByNumber',
      ['latest', false],
    );
    return { number: Number(block.number), timestamp: Number(block.timestamp), hash: block.hash };
  }

  /** Mines one block holding `requests` (a fresh queue, so nonces follow any snapshot revert). */
  private async mine(requests: TxRequest[]): Promise<number> {
    const queue = createTxQueue(this.rpc);
    const { timestamp } = await this.head();
    await queue.send(requests);
    const block = await queue.mine(BigInt(timestamp + 60));
    return Number(block.number);
  }

  /** One block with a NavDrafted event per fund for `epoch`. */
  draftAll(epoch: number, navPerShare: bigint): Promise<number> {
    const abi = abiOf('NavOracle');
    return this.mine(
      this.deployment.funds.map((f) => ({
        from: this.deployment.accounts.navOperator,
        to: this.deployment.contracts.navOracle,
        data: encodeFunctionData({
          abi,
          functionName: 'draft',
          args: [f.vault, BigInt(epoch), navPerShare, navPerShare * 1000n, 1000n],
        }),
        label: `draft ${f.slug} ${epoch}`,
      })),
    );
  }

  /** One block pausing `module` (0 subscriptions, 1 redemptions, 2 claims) of fund `index`. */
  pause(index: number, module: number): Promise<number> {
    const fund = this.deployment.funds[index]!;
    return this.mine([
      {
        from: fund.multisig as Address,
        to: fund.vault,
        data: encodeFunctionData({ abi: abiOf('FundVault'), functionName: 'pause', args: [module] }),
        label: `pause ${fund.slug} ${module}`,
      },
    ]);
  }

  snapshot(): Promise<string> {
    return this.rpc.request<string>('evm_snapshot', []);
  }

  async revert(id: string): Promise<void> {
    const ok = await this.rpc.request<boolean>('evm_revert', [id]);
    if (!ok) throw new Error(`evm_revert ${id} failed`);
  }
}
