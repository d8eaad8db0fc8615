// The seeding transaction queue fails loudly: a reverted transaction anywhere in a mined block
// stops the run with the transaction's label, and good blocks come back with their receipts.
import { encodeFunctionData } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abiOf, type Deployment } from '../../devnet/deploy.ts';
import { devAccount } from '../../devnet/protocol-config.ts';
import { createRpcClient } from '../../devnet/rpc.ts';
import { createTxQueue } from '../../devnet/tx-queue.ts';
import { startPrivateDevnet, type PrivateDevnet } from '../harness/private-devnet.ts';

describe('the seeding transaction queue', () => {
  let devnet: PrivateDevnet;
  let deployment: Deployment;

  beforeAll(async () => {
    devnet = await startPrivateDevnet();
    deployment = devnet.deployment;
  });
  afterAll(async () => devnet?.stop());

  const settle = (from: `0x${string}`) => ({
    from,
    to: deployment.funds[0]!.vault,
    data: encodeFunctionData({ abi: abiOf('FundVault'), functionName: 'settle', args: [0n] }),
    label: `settle from ${from}`,
  });

  it('mines queued transactions into one block at the given timestamp', async () => {
    const queue = createTxQueue(createRpcClient(devnet.rpcUrl));
    const owner = deployment.funds[0]!.multisig;
    await queue.send([settle(owner), settle(owner)]);
    const block = await queue.mine(BigInt(deployment.deployedAt) + 86_400n);
    expect(block.timestamp).toBe(BigInt(deployment.deployedAt) + 86_400n);
    expect(block.txs.map((t) => [t.receipt.status, BigInt(t.receipt.blockNumber)])).toEqual([
      ['0x1', block.number],
      ['0x1', block.number],
    ]);
  });

  it('throws with the label of a transaction that reverted', async () => {
    const queue = createTxQueue(createRpcClient(devnet.rpcUrl));
    const owner = deployment.funds[0]!.multisig;
    const stranger = devAccount(9);
    await queue.send([settle(owner), settle(stranger)]);
    await expect(queue.mine(BigInt(deployment.deployedAt) + 2n * 86_400n)).rejects.toThrow(
      `settle from ${stranger}: reverted`,
    );
  });
});
