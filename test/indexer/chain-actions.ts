// Transactions the indexer end-to-end tests make on their own anvil: NAV drafts from the operator,
// module pauses and unpauses from a fund's multisig and new funds deployed (and registered) by the
// deployer, each mined as one block, plus anvil snapshots to build alternative histories.
import { encodeFunctionData, getContractAddress, type Address, type Hex } from 'viem';
import { abiOf, deployData, type Deployment } from '../../devnet/deploy.ts';
import { createRpcClient, type RpcClient } from '../../devnet/rpc.ts';
import { createTxQueue, type TxRequest } from '../../devnet/tx-queue.ts';

/** A fund vault deployed by a test, outside the deployment's fund list. */
export interface TestFund {
  slug: string;
  vault: Address;
  shareToken: Address;
  multisig: Address;
  /** the block that deployed (and maybe registered) it */
  block: number;
}

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
    return this.draft(
      this.deployment.funds.map((f) => f.vault),
      epoch,
      navPerShare,
    );
  }

  /** One block with a NavDrafted event for `epoch` per vault of `vaults`. */
  draft(vaults: Address[], epoch: number, navPerShare: bigint): Promise<number> {
    const abi = abiOf('NavOracle');
    return this.mine(
      vaults.map((vault) => ({
        from: this.deployment.accounts.navOperator,
        to: this.deployment.contracts.navOracle,
        data: encodeFunctionData({
          abi,
          functionName: 'draft',
          args: [vault, BigInt(epoch), navPerShare, navPerShare * 1000n, 1000n],
        }),
        label: `draft ${vault} ${epoch}`,
      })),
    );
  }

  /** One block pausing `module` (0 subscriptions, 1 redemptions, 2 claims) of fund `index`. */
  pause(index: number, module: number): Promise<number> {
    const fund = this.deployment.funds[index]!;
    return this.pauseVault(fund.vault, fund.multisig, module);
  }

  /** One block unpausing `module` of fund `index`. */
  unpause(index: number, module: number): Promise<number> {
    const fund = this.deployment.funds[index]!;
    return this.mine([moduleChange(fund.vault, fund.multisig, 'unpause', module)]);
  }

  /** One block pausing `module` of `vault`, sent by its owner. */
  pauseVault(vault: Address, owner: Address, module: number): Promise<number> {
    return this.mine([moduleChange(vault, owner, 'pause', module)]);
  }

  /**
   * One block deploying a ThreePoolPolicy fund vault owned by `multisig` and, when `register`, registering
   * it in the FundRegistry (which makes indexers start a FundVault data source for it). Its address
   * follows from the deployer's nonce, so after a snapshot revert the same call deploys at the same address.
   */
  async deployFund(slug: string, multisig: Address, register: boolean): Promise<TestFund> {
    const { deployer } = this.deployment.accounts;
    const c = this.deployment.contracts;
    const nonce = await this.rpc.request<Hex>('eth_getTransactionCount', [deployer, 'pending']);
    const vault = getContractAddress({ from: deployer, nonce: BigInt(nonce) });
    const requests: TxRequest[] = [
      {
        from: deployer,
        data: deployData('FundVault', [
          c.baseAsset,
          c.threePoolPolicy,
          c.dividendDistributor,
          multisig,
          `${slug} Share`,
          'tSHR',
        ]),
        label: `deploy FundVault ${slug}`,
      },
    ];
    if (register) requests.push(this.registerRequest(vault, slug));
    const block = await this.mine(requests);
    // as in devnet/deploy.ts: the share token is the vault's first creation
    return { slug, vault, shareToken: getContractAddress({ from: vault, nonce: 1n }), multisig, block };
  }

  /** One block registering an already deployed vault in the FundRegistry. */
  registerFund(vault: Address, slug: string): Promise<number> {
    return this.mine([this.registerRequest(vault, slug)]);
  }

  private registerRequest(vault: Address, slug: string): TxRequest {
    return {
      from: this.deployment.accounts.deployer,
      to: this.deployment.contracts.fundRegistry,
      data: encodeFunctionData({ abi: abiOf('FundRegistry'), functionName: 'register', args: [vault, slug] }),
      label: `register ${slug}`,
    };
  }

  snapshot(): Promise<string> {
    return this.rpc.request<string>('evm_snapshot', []);
  }

  async revert(id: string): Promise<void> {
    const ok = await this.rpc.request<boolean>('evm_revert', [id]);
    if (!ok) throw new Error(`evm_revert ${id} failed`);
  }
}

/** `vault`'s owner pausing or unpausing one of its modules. */
function moduleChange(
  vault: Address,
  owner: Address,
  change: 'pause' | 'unpause',
  module: number,
): TxRequest {
  return {
    from: owner,
    to: vault,
    data: encodeFunctionData({ abi: abiOf('FundVault'), functionName: change, args: [module] }),
    label: `${change} ${vault} ${module}`,
  };
}
