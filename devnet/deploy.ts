// Deploys the protocol onto a devnet in one block: base asset, both policies, the dividend
// distributor, the NAV oracle, the fund registry and one vault (with its share token) per fund,
// each vault registered. Addresses follow from the deployer's nonces, so a fresh chain always
// yields the same addresses. Multicall3 is installed at its canonical address, as public networks
// have it (the gateway's multicall is deployless and needs none).
import {
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { DEVNET_CHAIN_ID, DEVNET_GENESIS_TIMESTAMP } from './anvil.ts';
import { loadArtifact } from './compile.ts';
import {
  MULTICALL3_ADDRESS,
  fundSpecs,
  kellyParams,
  roles,
  strategyAddress,
  strategySlugs,
  threePoolParams,
  type PolicyName,
} from './protocol-config.ts';
import { createRpcClient } from './rpc.ts';
import { createTxQueue, type TxRequest } from './tx-queue.ts';

export interface DeployedFund {
  slug: string;
  name: string;
  vault: Address;
  shareToken: Address;
  policy: Address;
  policyName: PolicyName;
  multisig: Address;
}

export interface Deployment {
  chainId: number;
  rpcUrl: string;
  /** Block holding the deployment: indexers start here. */
  startBlock: number;
  /** Unix seconds of the deployment block. */
  deployedAt: number;
  contracts: {
    baseAsset: Address;
    fundRegistry: Address;
    navOracle: Address;
    dividendDistributor: Address;
    threePoolPolicy: Address;
    kellyPolicy: Address;
    multicall3: Address;
  };
  accounts: { deployer: Address; navOperator: Address; verifier: Address };
  strategies: { slug: string; address: Address }[];
  funds: DeployedFund[];
}

/** Contract name of every kind of address a deployment holds, for ABI lookups. */
export type ContractName =
  | 'MockUSDC'
  | 'FundRegistry'
  | 'NavOracle'
  | 'DividendDistributor'
  | 'ThreePoolPolicy'
  | 'KellyPolicy'
  | 'FundVault'
  | 'FundShareToken'
  | 'Multicall3';

export function abiOf(name: ContractName): Abi {
  return loadArtifact(name).abi as Abi;
}

/** Every contract address of a deployment with the contract it holds. */
export function contractsOf(
  deployment: Deployment,
): { address: Address; name: ContractName; label: string }[] {
  const c = deployment.contracts;
  return [
    { address: c.baseAsset, name: 'MockUSDC', label: 'MockUSDC' },
    { address: c.fundRegistry, name: 'FundRegistry', label: 'FundRegistry' },
    { address: c.navOracle, name: 'NavOracle', label: 'NavOracle' },
    { address: c.dividendDistributor, name: 'DividendDistributor', label: 'DividendDistributor' },
    { address: c.threePoolPolicy, name: 'ThreePoolPolicy', label: 'ThreePoolPolicy' },
    { address: c.kellyPolicy, name: 'KellyPolicy', label: 'KellyPolicy' },
    { address: c.multicall3, name: 'Multicall3', label: 'Multicall3' },
    ...deployment.funds.flatMap((f) => [
      { address: f.vault, name: 'FundVault' as const, label: `FundVault:${f.slug}` },
      { address: f.shareToken, name: 'FundShareToken' as const, label: `FundShareToken:${f.slug}` },
    ]),
  ];
}

/** The creation calldata of a compiled contract with its constructor arguments. */
export function deployData(name: ContractName, args: readonly unknown[]): Hex {
  const artifact = loadArtifact(name);
  return encodeDeployData({ abi: artifact.abi as Abi, bytecode: artifact.bytecode, args });
}

export async function deployProtocol(rpcUrl: string): Promise<Deployment> {
  const rpc = createRpcClient(rpcUrl);
  const queue = createTxQueue(rpc);
  const deployer = roles.deployer;
  let nonce = Number(await rpc.request<Hex>('eth_getTransactionCount', [deployer, 'pending']));
  const txs: TxRequest[] = [];
  const create = (name: ContractName, args: readonly unknown[], label: string = name): Address => {
    txs.push({ from: deployer, data: deployData(name, args), label: `deploy ${label}` });
    return getContractAddress({ from: deployer, nonce: BigInt(nonce++) });
  };

  const baseAsset = create('MockUSDC', []);
  const threePoolPolicy = create('ThreePoolPolicy', Object.values(threePoolParams));
  const kellyPolicy = create('KellyPolicy', Object.values(kellyParams));
  const dividendDistributor = create('DividendDistributor', [baseAsset]);
  const navOracle = create('NavOracle', [deployer, deployer, roles.verifier]);
  const fundRegistry = create('FundRegistry', [deployer]);
  const policyAddress = { ThreePoolPolicy: threePoolPolicy, KellyPolicy: kellyPolicy };
  const funds: DeployedFund[] = fundSpecs.map((spec) => {
    const vault = create(
      'FundVault',
      [
        baseAsset,
        policyAddress[spec.policy],
        dividendDistributor,
        spec.multisig,
        `${spec.name} Share`,
        spec.shareSymbol,
      ],
      `FundVault ${spec.slug}`,
    );
    return {
      slug: spec.slug,
      name: spec.name,
      vault,
      // A vault creates its share token in its constructor, as its first (nonce 1) creation.
      shareToken: getContractAddress({ from: vault, nonce: 1n }),
      policy: policyAddress[spec.policy],
      policyName: spec.policy,
      multisig: spec.multisig,
    };
  });
  const registryAbi = abiOf('FundRegistry');
  for (const fund of funds) {
    txs.push({
      from: deployer,
      to: fundRegistry,
      data: encodeFunctionData({ abi: registryAbi, functionName: 'register', args: [fund.vault, fund.slug] }),
      label: `register ${fund.slug}`,
    });
  }

  await rpc.request('anvil_setCode', [MULTICALL3_ADDRESS, loadArtifact('Multicall3').deployedBytecode]);
  await queue.send(txs);
  const latest = await rpc.request<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
  // the deployment block comes an hour after genesis, or after the latest block: block times must increase
  const timestamp = BigInt(Math.max(DEVNET_GENESIS_TIMESTAMP + 3600, Number(latest.timestamp) + 1));
  const block = await queue.mine(timestamp);
  for (const { request, receipt } of block.txs) {
    if (request.to === undefined && receipt.contractAddress === null)
      throw new Error(`${request.label}: no contract`);
  }

  return {
    chainId: DEVNET_CHAIN_ID,
    rpcUrl,
    startBlock: Number(block.number),
    deployedAt: Number(block.timestamp),
    contracts: {
      baseAsset,
      fundRegistry,
      navOracle,
      dividendDistributor,
      threePoolPolicy,
      kellyPolicy,
      multicall3: MULTICALL3_ADDRESS,
    },
    accounts: { deployer, navOperator: deployer, verifier: roles.verifier },
    strategies: strategySlugs.map((slug) => ({ slug, address: strategyAddress(slug) })),
    funds,
  };
}
