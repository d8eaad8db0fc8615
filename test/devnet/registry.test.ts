// registry/devnet.json against the seeded devnet: every address it lists holds the compiled
// code of the contract kind it claims (immutables masked), and the wiring between them matches.
import { readFileSync } from 'node:fs';
import { createPublicClient, http, type Address, type Hex, type PublicClient } from 'viem';
import { describe, expect, inject, it } from 'vitest';
import { abiOf, type ContractName } from '../../devnet/deploy.ts';
import { loadArtifact } from '../../devnet/compile.ts';

interface Registry {
  chain: { id: number };
  contracts: { name: string; kind: ContractName; address: Address }[];
  policies: { slug: string; kind: string; address: Address; name: ContractName }[];
  funds: {
    slug: string;
    policy: string;
    vault: Address;
    shareToken: Address;
    multisig: Address;
    baseAsset: { symbol: string; address: Address; decimals: number };
  }[];
  strategies: { slug: string; address: Address }[];
}

const registry = JSON.parse(
  readFileSync(new URL('../../registry/devnet.json', import.meta.url), 'utf8'),
) as Registry;
const devnet = inject('devnet');
const client = createPublicClient({ transport: http(devnet.rpcUrl) }) as PublicClient;

/** Deployed code with the bytes of every immutable zeroed, so one artifact matches every instance. */
function maskImmutables(code: Hex, kind: ContractName): string {
  const bytes = Buffer.from(code.slice(2), 'hex');
  for (const ranges of Object.values(loadArtifact(kind).immutableReferences)) {
    for (const { start, length } of ranges) bytes.fill(0, start, start + length);
  }
  return bytes.toString('hex');
}

async function expectCode(address: Address, kind: ContractName): Promise<void> {
  const code = await client.getCode({ address });
  expect(code, `${kind} at ${address}`).toBeDefined();
  expect(maskImmutables(code!, kind), `${kind} at ${address}`).toBe(
    maskImmutables(loadArtifact(kind).deployedBytecode, kind),
  );
}

const read = <T>(kind: ContractName, address: Address, functionName: string) =>
  client.readContract({ address, abi: abiOf(kind), functionName }) as Promise<T>;

describe('registry/devnet.json', () => {
  it('names the devnet chain', () => {
    expect(registry.chain.id).toBe(devnet.deployment.chainId);
  });

  it.each(registry.contracts.map((c) => [c.name, c] as const))(
    'holds the %s code at its listed address',
    async (_name, contract) => {
      await expectCode(contract.address, contract.kind);
    },
  );

  it('lists each policy at an address holding that policy, of the kind it reports', async () => {
    for (const policy of registry.policies) {
      await expectCode(policy.address, policy.name);
      expect(await read<string>(policy.name, policy.address, 'kind')).toBe(policy.kind);
    }
  });

  it("lists each fund's vault, share token, policy and base asset as the vault reports them", async () => {
    for (const fund of registry.funds) {
      await expectCode(fund.vault, 'FundVault');
      await expectCode(fund.shareToken, 'FundShareToken');
      const policy = registry.policies.find((p) => p.slug === fund.policy);
      expect(policy, fund.policy).toBeDefined();
      expect(await read<Address>('FundVault', fund.vault, 'shareToken')).toBe(fund.shareToken);
      expect(await read<Address>('FundVault', fund.vault, 'policy')).toBe(policy!.address);
      expect(await read<Address>('FundVault', fund.vault, 'asset')).toBe(fund.baseAsset.address);
      expect(await read<Address>('FundVault', fund.vault, 'owner')).toBe(fund.multisig);
      expect(await read<number>('MockUSDC', fund.baseAsset.address, 'decimals')).toBe(
        fund.baseAsset.decimals,
      );
      expect(await read<string>('MockUSDC', fund.baseAsset.address, 'symbol')).toBe(fund.baseAsset.symbol);
    }
  });

  it('lists exactly the funds the fund registry holds', async () => {
    const onChain = await read<Address[]>('FundRegistry', devnet.deployment.contracts.fundRegistry, 'funds');
    expect(registry.funds.map((f) => f.vault)).toEqual(onChain);
  });

  it('lists the strategies at the addresses the deployment allocates to', () => {
    expect(registry.strategies.map((s) => [s.slug, s.address])).toEqual(
      devnet.deployment.strategies.map((s) => [s.slug, s.address]),
    );
  });
});
