// What `npm run subgraph:deploy:studio` / `subgraph:deploy:node` will do, derived from the
// environment and validated before anything runs: the target, the network of networks.json
// (refused while it still has zero addresses, and for Studio when it is the local devnet), and the
// graph-cli commands. Variables are read by the rule every process shares (common/env.ts):
// surrounding whitespace trimmed, a blank value unset.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { envValue, urlRefusal, type Env } from '../../common/env.ts';
import { redactUrl } from '../../common/url.ts';
import type { NodeEndpoints } from './deploy-endpoints.ts';
import { subgraphDir } from '../manifest.ts';
import { DEVNET_NETWORK, readDeployedNetwork, readNetworks, type Networks } from './networks.ts';

export type DeployTarget = 'studio' | 'node';

interface DeployPlan {
  target: DeployTarget;
  network: string;
  name: string;
  versionLabel: string;
  /** node target: the graph-node admin and IPFS URLs, to check before deploying */
  endpoints: NodeEndpoints | undefined;
  /** human-readable lines: what will be deployed where (no secrets) */
  summary: string[];
  /**
   * graph-cli argument lists; MANIFEST stands for the per-network manifest copy and OUTPUT_DIR for a
   * temporary build directory (build/ holds the devnet build the embedded indexer runs)
   */
  commands: { args: string[]; mayAlreadyExist: boolean }[];
}

export const manifestPlaceholder = 'MANIFEST';
export const outputDirPlaceholder = 'OUTPUT_DIR';

/**
 * Why graph-cli cannot use the IPFS API URL `value`, if it cannot: it sends no credentials written in
 * a URL (its fetch refuses the request, and its error prints the URL, password included), and it
 * appends its API paths to the URL as written, so a query or fragment sends them elsewhere (it
 * exits 1 without a word). A key in the path, as hosted IPFS APIs take one, works.
 */
function ipfsUrlRefusal(value: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return undefined; // urlRefusal has named it
  }
  if (parsed.username || parsed.password)
    return 'GRAPH_IPFS_URL holds a user name or password, which graph-cli cannot send (its request fails and prints the URL): use an IPFS API URL without them, e.g. one whose path holds the key';
  if (parsed.search || parsed.hash)
    return "GRAPH_IPFS_URL holds a query or fragment, after which graph-cli would append its API paths: give the IPFS API's base URL alone, e.g. http://127.0.0.1:5001";
  return undefined;
}

/** The plan for `target` from `env`, deploying a network of `networks` (subgraph/networks.json unless given). */
export function planDeployment(
  target: DeployTarget,
  env: Env,
  networks: Networks = readNetworks(),
): DeployPlan {
  const problems: string[] = [];
  const required = (variable: string, purpose: string): string => {
    const value = envValue(env, variable);
    if (value === undefined) problems.push(`${variable} is not set: ${purpose}`);
    return value ?? '';
  };
  const url = (variable: string, purpose: string): string => {
    const value = required(variable, purpose);
    const refusal = value ? urlRefusal(variable, value, ['http:', 'https:']) : undefined;
    if (refusal) problems.push(refusal);
    return value;
  };

  const network = required(
    'SUBGRAPH_NETWORK',
    'the network of subgraph/networks.json to deploy (e.g. sepolia)',
  );
  const name = required(
    'SUBGRAPH_NAME',
    target === 'studio'
      ? 'the subgraph slug created in Subgraph Studio'
      : 'the subgraph name on the graph-node (e.g. fund-protocol/sepolia)',
  );
  const versionLabel = envValue(env, 'SUBGRAPH_VERSION_LABEL') ?? `v${packageVersion()}`;
  const deployKey =
    target === 'studio'
      ? required('GRAPH_DEPLOY_KEY', 'the deploy key shown on the subgraph page of Subgraph Studio')
      : envValue(env, 'GRAPH_DEPLOY_KEY');
  const nodeUrl = target === 'node' ? url('GRAPH_NODE_URL', "the graph-node's admin JSON-RPC URL") : '';
  const ipfsUrl = target === 'node' ? url('GRAPH_IPFS_URL', 'the IPFS API URL the graph-node reads') : '';
  const ipfsRefusal = ipfsUrl ? ipfsUrlRefusal(ipfsUrl) : undefined;
  if (ipfsRefusal) problems.push(ipfsRefusal);

  if (target === 'studio' && network === DEVNET_NETWORK) {
    problems.push(
      `SUBGRAPH_NETWORK "${DEVNET_NETWORK}" is the local anvil chain, which Subgraph Studio cannot index: ` +
        'deploy it to your own graph-node (npm run subgraph:deploy:node), or name a public network whose ' +
        "subgraph/networks.json entry has the protocol's addresses",
    );
  } else if (network) {
    try {
      readDeployedNetwork(network, networks);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const nameRefusal = name ? subgraphNameRefusal(name) : undefined;
  if (nameRefusal) problems.push(`SUBGRAPH_NAME "${name}" ${nameRefusal}`);
  if (/\s/.test(versionLabel))
    problems.push(`SUBGRAPH_VERSION_LABEL "${versionLabel}" holds white space: use e.g. v1.2.0`);
  if (problems.length > 0) {
    throw new Error(`cannot deploy the subgraph to ${target}:\n- ${problems.join('\n- ')}`);
  }

  const config = readDeployedNetwork(network, networks);
  const keyArgs = deployKey ? ['--deploy-key', deployKey] : [];
  const common = [
    '--network',
    network,
    '--version-label',
    versionLabel,
    '--output-dir',
    outputDirPlaceholder,
  ];
  const summary = [
    `deploy subgraph "${name}" version ${versionLabel} for network "${network}"`,
    target === 'studio'
      ? 'to Subgraph Studio (deploy key from GRAPH_DEPLOY_KEY)'
      : `to graph-node ${redactUrl(nodeUrl)} with IPFS ${redactUrl(ipfsUrl)}${deployKey ? ' (access token from GRAPH_DEPLOY_KEY)' : ''}`,
    ...Object.entries(config).map(
      ([source, entry]) => `  ${source}: ${entry.address} from block ${entry.startBlock}`,
    ),
  ];
  const commands =
    target === 'studio'
      ? [{ args: ['deploy', name, manifestPlaceholder, ...keyArgs, ...common], mayAlreadyExist: false }]
      : [
          { args: ['create', name, '--node', nodeUrl, ...tokenArgs(deployKey)], mayAlreadyExist: true },
          {
            args: [
              'deploy',
              name,
              manifestPlaceholder,
              '--node',
              nodeUrl,
              '--ipfs',
              ipfsUrl,
              ...keyArgs,
              ...common,
            ],
            mayAlreadyExist: false,
          },
        ];
  const endpoints = target === 'node' ? { nodeUrl, ipfsUrl } : undefined;
  return { target, network, name, versionLabel, endpoints, summary, commands };
}

/**
 * Why graph-node refuses `name` as a subgraph name (graph/src/data/subgraph/mod.rs SubgraphName::new),
 * undefined when it takes it: up to 255 letters, digits, '-', '_' and '/', each '/'-separated part
 * starting and ending with a letter or digit, holding a letter, and not "graphql".
 */
function subgraphNameRefusal(name: string): string | undefined {
  const rule =
    "graph-node takes up to 255 letters, digits, '-', '_' and '/', each part between slashes starting and ending with a letter or digit and holding a letter (e.g. fund-protocol/sepolia)";
  if (name.length > 255 || !/^[A-Za-z0-9_/-]+$/.test(name)) return `is not a subgraph name: ${rule}`;
  for (const part of name.split('/')) {
    if (part === 'graphql') return 'names a part "graphql", which graph-node reserves';
    if (!/^[A-Za-z0-9](?:.*[A-Za-z0-9])?$/.test(part) || !/[A-Za-z]/.test(part))
      return `is not a subgraph name: ${rule}`;
  }
  return undefined;
}

/** `graph create` names the token flag --access-token. */
function tokenArgs(deployKey: string | undefined): string[] {
  return deployKey ? ['--access-token', deployKey] : [];
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(subgraphDir, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
