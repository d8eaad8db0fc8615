// The NAV oracle's lifecycle rules: Draft -> PendingVerification -> Verified -> Published, the
// rejection path back to Draft, in-order publication and the role checks.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { abiOf } from '../../devnet/deploy.ts';
import { startPrivateProtocol, type PrivateProtocol } from './private-protocol.ts';

const NONE = 0;
const DRAFT = 1;
const PENDING = 2;
const VERIFIED = 3;
const PUBLISHED = 4;

describe('NavOracle', () => {
  let chain: PrivateProtocol;
  let snapshot: Hex;
  let fund: Address;
  let operator: Address;
  let verifier: Address;
  const abi = abiOf('NavOracle');

  const call = (from: Address, functionName: string, args: readonly unknown[]) => ({
    from,
    address: chain.deployment.contracts.navOracle,
    abi,
    functionName,
    args,
  });
  const draft = (epoch: bigint, nav = 1_000_000n) =>
    chain.write(call(operator, 'draft', [fund, epoch, nav, 5_000_000_000n, 5_000_000_000n]));
  const step = (from: Address, functionName: string, epoch: bigint) =>
    chain.write(call(from, functionName, [fund, epoch]));
  const status = async (epoch: bigint) =>
    (
      await chain.read<readonly [number, bigint, bigint, bigint]>({
        ...call(operator, 'record', [fund, epoch]),
      })
    )[0];
  /** Takes an epoch from None to Verified. */
  const toVerified = async (epoch: bigint) => {
    await draft(epoch);
    await step(operator, 'submit', epoch);
    await step(verifier, 'verify', epoch);
  };

  beforeAll(async () => {
    chain = await startPrivateProtocol();
    fund = chain.deployment.funds[0]!.vault;
    operator = chain.deployment.accounts.navOperator;
    verifier = chain.deployment.accounts.verifier;
  });
  afterAll(async () => chain?.stop());
  beforeEach(async () => {
    snapshot = await chain.snapshot();
  });
  afterEach(async () => chain.revertTo(snapshot));

  it('walks an epoch through draft, submit, verify and publish', async () => {
    await draft(1n, 1_012_345n);
    expect(await status(1n)).toBe(DRAFT);
    await step(operator, 'submit', 1n);
    expect(await status(1n)).toBe(PENDING);
    await step(verifier, 'verify', 1n);
    expect(await status(1n)).toBe(VERIFIED);
    await step(operator, 'publish', 1n);
    const [state, nav] = await chain.read<readonly [number, bigint]>(call(operator, 'record', [fund, 1n]));
    expect([state, nav]).toEqual([PUBLISHED, 1_012_345n]);
    expect(await chain.read<bigint>(call(operator, 'latestPublishedEpoch', [fund]))).toBe(1n);
  });

  it('rejects submitting, verifying or publishing an epoch that was never drafted', async () => {
    expect(await chain.revertOf(call(operator, 'submit', [fund, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [NONE, PENDING],
    });
    expect(await chain.revertOf(call(verifier, 'verify', [fund, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [NONE, VERIFIED],
    });
    expect(await chain.revertOf(call(operator, 'publish', [fund, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [NONE, PUBLISHED],
    });
  });

  it('rejects verifying or publishing a draft that was not submitted', async () => {
    await draft(1n);
    expect(await chain.revertOf(call(verifier, 'verify', [fund, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [DRAFT, VERIFIED],
    });
    expect(await chain.revertOf(call(operator, 'publish', [fund, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [DRAFT, PUBLISHED],
    });
  });

  it('rejects publishing or re-drafting a record pending verification', async () => {
    await draft(1n);
    await step(operator, 'submit', 1n);
    expect(await chain.revertOf(call(operator, 'publish', [fund, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [PENDING, PUBLISHED],
    });
    expect(await chain.revertOf(call(operator, 'draft', [fund, 1n, 1n, 1n, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [PENDING, DRAFT],
    });
    expect(await chain.revertOf(call(operator, 'submit', [fund, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [PENDING, PENDING],
    });
  });

  it('rejects any transition out of Published', async () => {
    await toVerified(1n);
    await step(operator, 'publish', 1n);
    for (const [from, fn, args, to] of [
      [operator, 'draft', [fund, 1n, 1n, 1n, 1n], DRAFT],
      [operator, 'submit', [fund, 1n], PENDING],
      [verifier, 'verify', [fund, 1n], VERIFIED],
      [operator, 'publish', [fund, 1n], PUBLISHED],
      [verifier, 'reject', [fund, 1n, 'late'], DRAFT],
    ] as const) {
      expect(await chain.revertOf(call(from, fn, args))).toEqual({
        errorName: 'InvalidTransition',
        args: [PUBLISHED, to],
      });
    }
  });

  it('publishes epochs only in order', async () => {
    await toVerified(1n);
    await toVerified(2n);
    expect(await chain.revertOf(call(operator, 'publish', [fund, 2n]))).toEqual({
      errorName: 'PublishOutOfOrder',
      args: [1n, 2n],
    });
    await step(operator, 'publish', 1n);
    await step(operator, 'publish', 2n);
    expect(await status(2n)).toBe(PUBLISHED);
  });

  it('sends a pending record back to Draft on rejection, and the re-drafted values publish', async () => {
    await draft(1n, 999_000n);
    await step(operator, 'submit', 1n);
    const receipt = await chain.write(call(verifier, 'reject', [fund, 1n, 'stale price feed']));
    expect(receipt.logs).toHaveLength(1);
    expect(await status(1n)).toBe(DRAFT);
    await draft(1n, 1_001_000n);
    await step(operator, 'submit', 1n);
    await step(verifier, 'verify', 1n);
    await step(operator, 'publish', 1n);
    const [state, nav] = await chain.read<readonly [number, bigint]>(call(operator, 'record', [fund, 1n]));
    expect([state, nav]).toEqual([PUBLISHED, 1_001_000n]);
  });

  it('sends a verified record back to Draft on rejection', async () => {
    await toVerified(1n);
    await chain.write(call(verifier, 'reject', [fund, 1n, 'supply mismatch']));
    expect(await status(1n)).toBe(DRAFT);
    expect(await chain.revertOf(call(operator, 'publish', [fund, 1n]))).toEqual({
      errorName: 'InvalidTransition',
      args: [DRAFT, PUBLISHED],
    });
  });

  it('rejects a rejection of a draft', async () => {
    await draft(1n);
    expect(await chain.revertOf(call(verifier, 'reject', [fund, 1n, 'why']))).toEqual({
      errorName: 'InvalidTransition',
      args: [DRAFT, DRAFT],
    });
  });

  it('lets only verifiers verify and only operators draft', async () => {
    await draft(1n);
    await step(operator, 'submit', 1n);
    const verifyByOperator = await chain.revertOf(call(operator, 'verify', [fund, 1n]));
    expect(verifyByOperator.errorName).toBe('AccessControlUnauthorizedAccount');
    expect(verifyByOperator.args[0]).toBe(operator);
    const draftByVerifier = await chain.revertOf(call(verifier, 'draft', [fund, 2n, 1n, 1n, 1n]));
    expect(draftByVerifier.errorName).toBe('AccessControlUnauthorizedAccount');
  });

  it('rejects epoch 0', async () => {
    expect(await chain.revertOf(call(operator, 'draft', [fund, 0n, 1n, 1n, 1n]))).toEqual({
      errorName: 'InvalidEpoch',
      args: [0n],
    });
  });
});
