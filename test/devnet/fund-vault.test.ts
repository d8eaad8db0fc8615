// The fund vault's rules: paused modules reject their requests, a closed fund takes no new
// subscriptions, settlement prices requests at the NAV and splits P&L through the fund's policy,
// and the strategy table keeps active targets within 100%.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { abiOf, type DeployedFund } from '../../devnet/deploy.ts';
import { threePoolParams } from '../../devnet/protocol-config.ts';
import { startPrivateProtocol, type PrivateProtocol } from './private-protocol.ts';

const USDC = 1_000_000n;
const SUBSCRIPTIONS = 0;
const REDEMPTIONS = 1;

describe('FundVault', () => {
  let chain: PrivateProtocol;
  let snapshot: Hex;
  let fund: DeployedFund;
  let investor: Address;
  const vaultAbi = abiOf('FundVault');
  const usdcAbi = abiOf('MockUSDC');
  const shareAbi = abiOf('FundShareToken');

  const vault = (from: Address, functionName: string, args: readonly unknown[] = []) => ({
    from,
    address: fund.vault,
    abi: vaultAbi,
    functionName,
    args,
  });
  const view = <T>(functionName: string, args: readonly unknown[] = []) =>
    chain.read<T>({ address: fund.vault, abi: vaultAbi, functionName, args });
  const shares = (account: Address) =>
    chain.read<bigint>({
      address: fund.shareToken,
      abi: shareAbi,
      functionName: 'balanceOf',
      args: [account],
    });
  const fundAccount = async (account: Address, spender: Address) => {
    const usdc = chain.deployment.contracts.baseAsset;
    await chain.write({
      from: account,
      address: usdc,
      abi: usdcAbi,
      functionName: 'mint',
      args: [account, 10n ** 15n],
    });
    await chain.write({
      from: account,
      address: usdc,
      abi: usdcAbi,
      functionName: 'approve',
      args: [spender, 10n ** 15n],
    });
  };

  beforeAll(async () => {
    chain = await startPrivateProtocol();
    fund = chain.deployment.funds.find((f) => f.policyName === 'ThreePoolPolicy')!;
    investor = chain.investors[0]!;
    await fundAccount(investor, fund.vault);
    await fundAccount(fund.multisig, fund.vault);
  });
  afterAll(async () => chain?.stop());
  beforeEach(async () => {
    snapshot = await chain.snapshot();
  });
  afterEach(async () => chain.revertTo(snapshot));

  it('mints shares at NAV 1.000000 for the first epoch and opens the next', async () => {
    await chain.write(vault(investor, 'requestSubscription', [1_000_000n * USDC]));
    await chain.write(vault(fund.multisig, 'settle', [0n]));
    expect(await shares(investor)).toBe(1_000_000n * USDC);
    expect(await view<bigint>('totalAssets')).toBe(1_000_000n * USDC);
    expect(await view<bigint>('currentEpoch')).toBe(2n);
  });

  it("splits a profit through the three-pool policy's base and holder, reserve and NAV shares", async () => {
    await chain.write(vault(investor, 'requestSubscription', [1_000_000n * USDC]));
    await chain.write(vault(fund.multisig, 'settle', [0n]));
    const navAssets = 1_000_000n * USDC;
    const pnl = 1_000n * USDC;
    await chain.write(vault(fund.multisig, 'settle', [pnl]));
    // Worked by hand from SPEC's parameters: the daily base goes to the NAV, the excess is split.
    const base = (navAssets * BigInt(threePoolParams.annualBaseBps)) / 10_000n / 365n;
    const excess = pnl - base;
    const toHolders = (excess * BigInt(threePoolParams.profitToHolderBps)) / 10_000n;
    const toReserve = (excess * BigInt(threePoolParams.profitToReserveBps)) / 10_000n;
    expect(await view<bigint>('reserveBalance')).toBe(toReserve);
    expect(await view<bigint>('totalAssets')).toBe(navAssets + pnl - toHolders - toReserve);
    expect(
      await chain.read<bigint>({
        address: chain.deployment.contracts.dividendDistributor,
        abi: abiOf('DividendDistributor'),
        functionName: 'unallocated',
        args: [fund.vault],
      }),
    ).toBe(toHolders);
  });

  it('restores NAV lost to a loss before sharing any later profit', async () => {
    await chain.write(vault(investor, 'requestSubscription', [1_000_000n * USDC]));
    await chain.write(vault(fund.multisig, 'settle', [0n]));
    await chain.write(vault(fund.multisig, 'settle', [-500n * USDC]));
    expect(await view<bigint>('lossCarryForward')).toBe(500n * USDC);
    expect(await view<bigint>('totalAssets')).toBe(999_500n * USDC);
    await chain.write(vault(fund.multisig, 'settle', [300n * USDC]));
    expect(await view<bigint>('lossCarryForward')).toBe(200n * USDC);
    expect(await view<bigint>('totalAssets')).toBe(999_800n * USDC);
    expect(await view<bigint>('reserveBalance')).toBe(0n);
  });

  it('redeems escrowed shares at the NAV of the epoch they settle in', async () => {
    await chain.write(vault(investor, 'requestSubscription', [1_000_000n * USDC]));
    await chain.write(vault(fund.multisig, 'settle', [0n]));
    await chain.write(vault(investor, 'requestRedemption', [400_000n * USDC]));
    expect(await shares(investor)).toBe(600_000n * USDC);
    await chain.write(vault(fund.multisig, 'settle', [-1_000n * USDC]));
    // NAV per share after the loss: 999,000 / 1,000,000 = 0.999000
    expect(await view<bigint>('totalAssets')).toBe(
      999_000n * USDC - (400_000n * USDC * 999_000n) / 1_000_000n,
    );
  });

  it('rejects subscriptions while the subscriptions module is paused, and accepts them after', async () => {
    await chain.write(vault(fund.multisig, 'pause', [SUBSCRIPTIONS]));
    expect(await view<readonly boolean[]>('pausedModules')).toEqual([true, false, false]);
    expect(await chain.revertOf(vault(investor, 'requestSubscription', [USDC]))).toEqual({
      errorName: 'ModuleIsPaused',
      args: [SUBSCRIPTIONS],
    });
    await chain.write(vault(fund.multisig, 'unpause', [SUBSCRIPTIONS]));
    await chain.write(vault(investor, 'requestSubscription', [USDC]));
  });

  it('rejects redemptions while the redemptions module is paused', async () => {
    await chain.write(vault(investor, 'requestSubscription', [100n * USDC]));
    await chain.write(vault(fund.multisig, 'settle', [0n]));
    await chain.write(vault(fund.multisig, 'pause', [REDEMPTIONS]));
    expect(await view<readonly boolean[]>('pausedModules')).toEqual([false, true, false]);
    expect(await chain.revertOf(vault(investor, 'requestRedemption', [USDC]))).toEqual({
      errorName: 'ModuleIsPaused',
      args: [REDEMPTIONS],
    });
  });

  it('rejects pausing by anyone but the owner, pausing twice and unknown modules', async () => {
    expect((await chain.revertOf(vault(investor, 'pause', [SUBSCRIPTIONS]))).errorName).toBe(
      'OwnableUnauthorizedAccount',
    );
    await chain.write(vault(fund.multisig, 'pause', [SUBSCRIPTIONS]));
    expect(await chain.revertOf(vault(fund.multisig, 'pause', [SUBSCRIPTIONS]))).toEqual({
      errorName: 'ModuleIsPaused',
      args: [SUBSCRIPTIONS],
    });
    expect(await chain.revertOf(vault(fund.multisig, 'pause', [3]))).toEqual({
      errorName: 'UnknownModule',
      args: [3],
    });
  });

  it('takes no subscriptions once closed but still lets holders redeem', async () => {
    await chain.write(vault(investor, 'requestSubscription', [100n * USDC]));
    await chain.write(vault(fund.multisig, 'settle', [0n]));
    await chain.write(vault(fund.multisig, 'close'));
    expect(await view<boolean>('closed')).toBe(true);
    expect(await chain.revertOf(vault(investor, 'requestSubscription', [USDC]))).toEqual({
      errorName: 'FundIsClosed',
      args: [],
    });
    await chain.write(vault(investor, 'requestRedemption', [100n * USDC]));
  });

  it('reads the whole strategy table in one call and keeps active targets within 100%', async () => {
    const [a, b] = chain.deployment.strategies.map((s) => s.address) as [Address, Address];
    await chain.write(vault(fund.multisig, 'setStrategy', [a, 6_000, 7_000, true]));
    await chain.write(vault(fund.multisig, 'setStrategy', [b, 3_000, 5_000, true]));
    expect(await chain.revertOf(vault(fund.multisig, 'setStrategy', [b, 5_000, 5_000, true]))).toEqual({
      errorName: 'AllocationExceedsTotal',
      args: [11_000n],
    });
    await chain.write(vault(fund.multisig, 'setStrategy', [a, 6_000, 7_000, false]));
    await chain.write(vault(fund.multisig, 'setStrategy', [b, 5_000, 5_000, true]));
    expect(await view<readonly unknown[]>('strategies')).toEqual([
      { strategy: a, targetBps: 6_000, capBps: 7_000, active: false },
      { strategy: b, targetBps: 5_000, capBps: 5_000, active: true },
    ]);
  });
});
