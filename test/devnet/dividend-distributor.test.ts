// Dividend claims against StandardMerkleTree rounds: a valid proof pays once, an invalid proof
// or a second claim reverts, paused claims revert, and only the fund's owner posts funded rounds.
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { abiOf, type DeployedFund } from '../../devnet/deploy.ts';
import { startPrivateProtocol, type PrivateProtocol } from './private-protocol.ts';

const USDC = 1_000_000n;
const EPOCH = 30n;

describe('DividendDistributor', () => {
  let chain: PrivateProtocol;
  let snapshot: Hex;
  let fund: DeployedFund;
  let distributor: Address;
  let tree: StandardMerkleTree<[string, string]>;
  const usdcAbi = abiOf('MockUSDC');
  const distributorAbi = abiOf('DividendDistributor');
  const vaultAbi = abiOf('FundVault');

  const leaf = (i: number) => {
    const [account, amount] = tree.at(i)!;
    return { account: account as Address, amount: BigInt(amount), proof: tree.getProof(i) as Hex[] };
  };
  const claimCall = (account: Address, amount: bigint, proof: Hex[], from: Address = account) => ({
    from,
    address: distributor,
    abi: distributorAbi,
    functionName: 'claim',
    args: [fund.vault, EPOCH, account, amount, proof],
  });
  const balanceOf = (account: Address) =>
    chain.read<bigint>({
      address: chain.deployment.contracts.baseAsset,
      abi: usdcAbi,
      functionName: 'balanceOf',
      args: [account],
    });

  beforeAll(async () => {
    chain = await startPrivateProtocol();
    fund = chain.deployment.funds[0]!;
    distributor = chain.deployment.contracts.dividendDistributor;
    const [payer, ...holders] = chain.investors as [Address, ...Address[]];
    const values: [string, string][] = holders.map((h, i) => [h, String(BigInt(i + 1) * 100n * USDC)]);
    values.push(['0x00000000000000000000000000000000000000aa', String(7n * USDC)]);
    tree = StandardMerkleTree.of(values, ['address', 'uint256']);
    const total = values.reduce((sum, [, amount]) => sum + BigInt(amount), 0n);
    // Fund the round the way a vault does: deposit into the fund's unallocated balance.
    const usdc = chain.deployment.contracts.baseAsset;
    await chain.write({
      from: payer,
      address: usdc,
      abi: usdcAbi,
      functionName: 'mint',
      args: [payer, total],
    });
    await chain.write({
      from: payer,
      address: usdc,
      abi: usdcAbi,
      functionName: 'approve',
      args: [distributor, total],
    });
    await chain.write({
      from: payer,
      address: distributor,
      abi: distributorAbi,
      functionName: 'deposit',
      args: [fund.vault, total],
    });
    await chain.write({
      from: fund.multisig,
      address: distributor,
      abi: distributorAbi,
      functionName: 'postRound',
      args: [fund.vault, EPOCH, tree.root, total, values.length, 'distributions/test/30.json'],
    });
  });
  afterAll(async () => chain?.stop());
  beforeEach(async () => {
    snapshot = await chain.snapshot();
  });
  afterEach(async () => chain.revertTo(snapshot));

  it('pays a valid claim to the account and marks it claimed', async () => {
    const { account, amount, proof } = leaf(1);
    const before = await balanceOf(account);
    const receipt = await chain.write(claimCall(account, amount, proof));
    expect(await balanceOf(account)).toBe(before + amount);
    expect(
      await chain.read<boolean>({
        address: distributor,
        abi: distributorAbi,
        functionName: 'isClaimed',
        args: [fund.vault, EPOCH, account],
      }),
    ).toBe(true);
    expect(receipt.logs.some((log) => log.address.toLowerCase() === distributor.toLowerCase())).toBe(true);
  });

  it('pays a claim submitted by someone else to the account in the leaf', async () => {
    const { account, amount, proof } = leaf(3);
    const before = await balanceOf(account);
    await chain.write(claimCall(account, amount, proof, chain.investors[0]!));
    expect(await balanceOf(account)).toBe(before + amount);
  });

  it('rejects a double claim', async () => {
    const { account, amount, proof } = leaf(0);
    await chain.write(claimCall(account, amount, proof));
    expect(await chain.revertOf(claimCall(account, amount, proof))).toEqual({
      errorName: 'AlreadyClaimed',
      args: [fund.vault, EPOCH, account],
    });
  });

  it('rejects a proof for a different amount', async () => {
    const { account, amount, proof } = leaf(0);
    expect(await chain.revertOf(claimCall(account, amount + 1n, proof))).toEqual({
      errorName: 'InvalidProof',
      args: [],
    });
  });

  it("rejects another leaf's proof", async () => {
    const { account, amount } = leaf(0);
    expect(await chain.revertOf(claimCall(account, amount, leaf(1).proof))).toEqual({
      errorName: 'InvalidProof',
      args: [],
    });
  });

  it('rejects a claim for an epoch without a round', async () => {
    const { account, amount, proof } = leaf(0);
    const call = claimCall(account, amount, proof);
    expect(await chain.revertOf({ ...call, args: [fund.vault, 31n, account, amount, proof] })).toEqual({
      errorName: 'UnknownRound',
      args: [fund.vault, 31n],
    });
  });

  it("rejects claims while the fund's claims module is paused, and accepts them after", async () => {
    const pause = { from: fund.multisig, address: fund.vault, abi: vaultAbi, args: [2] };
    await chain.write({ ...pause, functionName: 'pause' });
    const { account, amount, proof } = leaf(2);
    expect(await chain.revertOf(claimCall(account, amount, proof))).toEqual({
      errorName: 'ClaimsPaused',
      args: [fund.vault],
    });
    await chain.write({ ...pause, functionName: 'unpause' });
    await chain.write(claimCall(account, amount, proof));
  });

  it('lets only the fund owner post a round', async () => {
    const post = {
      from: chain.investors[0]!,
      address: distributor,
      abi: distributorAbi,
      functionName: 'postRound',
      args: [fund.vault, 60n, tree.root, 1n, 1, 'x'],
    };
    expect(await chain.revertOf(post)).toEqual({
      errorName: 'NotFundOwner',
      args: [fund.vault, chain.investors[0]],
    });
  });

  it('rejects a round larger than the unallocated dividends, and a second round for an epoch', async () => {
    const post = (epoch: bigint, total: bigint) => ({
      from: fund.multisig,
      address: distributor,
      abi: distributorAbi,
      functionName: 'postRound',
      args: [fund.vault, epoch, tree.root, total, 1, 'x'],
    });
    expect(await chain.revertOf(post(60n, 1n))).toEqual({ errorName: 'InsufficientFunds', args: [0n, 1n] });
    expect(await chain.revertOf(post(EPOCH, 0n))).toEqual({
      errorName: 'RoundExists',
      args: [fund.vault, EPOCH],
    });
  });
});
