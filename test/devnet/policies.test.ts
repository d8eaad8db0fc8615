// The two settlement policies as deployed on the shared devnet (read-only): their parameters
// read back as configured, their reserve bounds, and the split invariant over random inputs.
import fc from 'fast-check';
import { createPublicClient, http, type Address, type PublicClient } from 'viem';
import { describe, expect, inject, it } from 'vitest';
import { abiOf } from '../../devnet/deploy.ts';
import { kellyParams, threePoolParams } from '../../devnet/protocol-config.ts';

const devnet = inject('devnet');
const client = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;
const policies = [
  {
    name: 'ThreePoolPolicy' as const,
    address: devnet.deployment.contracts.threePoolPolicy,
    params: threePoolParams,
  },
  { name: 'KellyPolicy' as const, address: devnet.deployment.contracts.kellyPolicy, params: kellyParams },
];
const read = <T>(
  name: 'ThreePoolPolicy' | 'KellyPolicy',
  address: Address,
  functionName: string,
  args: unknown[] = [],
) => client.readContract({ address, abi: abiOf(name), functionName, args }) as Promise<T>;

describe('settlement policies', () => {
  it('reads back the ThreePoolPolicy parameters in the order of SPEC.md', async () => {
    const params = await read<readonly number[]>('ThreePoolPolicy', policies[0]!.address, 'params');
    expect(params).toEqual([
      threePoolParams.annualBaseBps,
      threePoolParams.profitToHolderBps,
      threePoolParams.profitToReserveBps,
      threePoolParams.profitToNavBps,
      threePoolParams.reserveTargetMaxBps,
      threePoolParams.reserveTargetMinBps,
    ]);
  });

  it('reads back the KellyPolicy parameters and derives its exposure and reserve target', async () => {
    const address = policies[1]!.address;
    expect(await read<readonly number[]>('KellyPolicy', address, 'params')).toEqual(
      Object.values(kellyParams),
    );
    // half Kelly of 900 / 600 = 0.75 exposure; the unexposed 25% is clamped to the 15% cap
    expect(await read<number>('KellyPolicy', address, 'exposureBps')).toBe(7_500);
    expect(await read<number>('KellyPolicy', address, 'reserveTargetBps')).toBe(1_500);
  });

  it.each(policies)('$name exposes its kind and reserve floor and cap', async ({ name, address, params }) => {
    expect(await read<string>(name, address, 'kind')).toBe(
      name === 'ThreePoolPolicy' ? 'fixed-plus-float' : 'fractional-kelly',
    );
    expect(await read<number>(name, address, 'reserveTargetMinBps')).toBe(params.reserveTargetMinBps);
    expect(await read<number>(name, address, 'reserveTargetMaxBps')).toBe(params.reserveTargetMaxBps);
  });

  it.each(policies)(
    '$name splits every P&L exactly, never pays holders from a loss',
    async ({ name, address }) => {
      const usdc = (max: number) => fc.bigInt({ min: 0n, max: BigInt(max) * 1_000_000n });
      await fc.assert(
        fc.asyncProperty(
          fc.bigInt({ min: -1_000_000n * 1_000_000n, max: 1_000_000n * 1_000_000n }),
          usdc(100_000_000),
          usdc(20_000_000),
          async (pnl, navAssets, reserve) => {
            fc.pre(pnl >= -(navAssets + reserve));
            const [toHolders, reserveDelta, navDelta] = await read<readonly [bigint, bigint, bigint]>(
              name,
              address,
              'split',
              [pnl, navAssets, reserve],
            );
            expect(toHolders + reserveDelta + navDelta).toBe(pnl);
            expect(toHolders >= 0n).toBe(true);
            expect(reserve + reserveDelta >= 0n).toBe(true);
            if (pnl <= 0n) expect(toHolders).toBe(0n);
          },
        ),
        { numRuns: 40, seed: 7 },
      );
    },
  );
});
