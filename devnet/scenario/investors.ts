// The investors' side of a fund: onboarding, the daily subscription and redemption requests, the
// redemptions of everyone when a fund closes, and the booking of the requests the chain accepted.
// A redemption takes its shares off the investor's balance when it is requested, not when it
// settles, so a later draw the same day cannot redeem the same shares again.
import { maxUint256, type Address, type Hex } from 'viem';
import type { MinedBlock, TxRequest } from '../tx-queue.ts';
import { contractCall, eventTopic, minedLogs, USDC, type ScenarioContext } from './context.ts';
import { MODULE, type FundRun } from './funds.ts';

function subscription(
  ctx: ScenarioContext,
  fund: FundRun,
  investor: Address,
  amount: bigint,
  epoch: number,
): TxRequest[] {
  const { baseAsset } = ctx.deployment.contracts;
  const { vault, slug } = fund.deployed;
  const txs: TxRequest[] = [];
  if (!ctx.fundedInvestors.has(investor)) {
    ctx.fundedInvestors.add(investor);
    txs.push(
      contractCall(
        investor,
        baseAsset,
        ctx.abis.usdc,
        'mint',
        [investor, 100_000_000n * USDC],
        `${slug}: faucet`,
      ),
    );
  }
  if (!fund.approved.has(investor)) {
    fund.approved.add(investor);
    txs.push(
      contractCall(
        investor,
        baseAsset,
        ctx.abis.usdc,
        'approve',
        [vault, maxUint256],
        `${slug}: approve vault`,
      ),
    );
  }
  txs.push(
    contractCall(
      investor,
      vault,
      ctx.abis.vault,
      'requestSubscription',
      [amount],
      `${slug}: subscribe e${epoch}`,
    ),
  );
  fund.openSubscriptions.push({ investor, amount });
  return txs;
}

function redemption(
  ctx: ScenarioContext,
  fund: FundRun,
  investor: Address,
  shares: bigint,
  epoch: number,
): TxRequest {
  fund.balances.set(investor, (fund.balances.get(investor) ?? 0n) - shares);
  return contractCall(
    investor,
    fund.deployed.vault,
    ctx.abis.vault,
    'requestRedemption',
    [shares],
    `${fund.deployed.slug}: redeem e${epoch}`,
  );
}

/**
 * A normal day's requests: during the onboarding days the next slice of the onboarding queue
 * subscribes; after them, `requestsPerEpoch` draws of a subscription (60%) or a redemption.
 */
export function investorRequests(
  ctx: ScenarioContext,
  fund: FundRun,
  day: number,
  epoch: number,
): TxRequest[] {
  const { random, params } = ctx;
  const txs: TxRequest[] = [];
  const subscriptionsOpen = !fund.paused[MODULE.subscriptions];
  const redemptionsOpen = !fund.paused[MODULE.redemptions];
  const onboardingLeft = fund.plan.launchDay + params.onboardingDays - day;
  if (onboardingLeft > 0 && subscriptionsOpen) {
    const count = Math.ceil(fund.onboardingQueue.length / onboardingLeft);
    for (const investor of fund.onboardingQueue.splice(0, count)) {
      txs.push(...subscription(ctx, fund, investor, BigInt(random.int(1_000, 50_000)) * USDC, epoch));
    }
    return txs;
  }
  for (let i = 0; i < params.requestsPerEpoch; i++) {
    const holders = [...fund.balances].filter(([, balance]) => balance > 0n);
    if (random.chance(6_000) && subscriptionsOpen) {
      const investor = random.pick(fund.investors);
      txs.push(...subscription(ctx, fund, investor, BigInt(random.int(500, 20_000)) * USDC, epoch));
    } else if (redemptionsOpen && holders.length > 0) {
      const [investor, balance] = random.pick(holders);
      const shares = random.chance(1_000) ? balance : (balance * BigInt(random.int(5, 60))) / 100n;
      if (shares > 0n) txs.push(redemption(ctx, fund, investor, shares, epoch));
    }
  }
  return txs;
}

/** On a fund's close day every holder redeems all their shares, instead of the day's requests. */
export function redeemEveryHolder(ctx: ScenarioContext, fund: FundRun, epoch: number): TxRequest[] {
  const txs: TxRequest[] = [];
  for (const [investor, balance] of fund.balances) {
    if (balance > 0n) txs.push(redemption(ctx, fund, investor, balance, epoch));
  }
  return txs;
}

/** Books the requests among the investors' transactions `hashes` of a mined block. */
export function recordRequests(ctx: ScenarioContext, block: MinedBlock, hashes: Set<Hex>): void {
  const subscriptionTopic = eventTopic(ctx.abis.vault, 'SubscriptionRequested');
  const redemptionTopic = eventTopic(ctx.abis.vault, 'RedemptionRequested');
  for (const { request, log, ref } of minedLogs(block, hashes)) {
    const topic = log.topics[0];
    if (topic !== subscriptionTopic && topic !== redemptionTopic) continue;
    const fund = ctx.funds.find((f) => f.deployed.vault === request.to);
    if (!fund || log.address.toLowerCase() !== fund.deployed.vault.toLowerCase()) continue;
    const event = ctx.decodeVaultLog(log)!;
    const args = event.args as unknown as {
      investor: Address;
      epoch: bigint;
      assets?: bigint;
      shares?: bigint;
    };
    ctx.ledger.requests.push({
      fund: fund.deployed.slug,
      vault: fund.deployed.vault,
      epoch: Number(args.epoch),
      kind: event.eventName === 'SubscriptionRequested' ? 'subscription' : 'redemption',
      investor: args.investor,
      amount: (args.assets ?? args.shares ?? 0n).toString(),
      ...ref,
    });
  }
}
