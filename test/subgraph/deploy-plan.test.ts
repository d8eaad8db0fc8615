// The deploy scripts validate their environment and networks.json before running graph-cli;
// these tests check what they refuse and which commands they plan, without deploying.
import { describe, expect, it } from 'vitest';
import { buildSubgraph } from '../../subgraph/scripts/build-subgraph.ts';
import { printableCommand } from '../../subgraph/scripts/graph-cli.ts';
import {
  manifestPlaceholder,
  outputDirPlaceholder,
  planDeployment,
} from '../../subgraph/scripts/deploy-plan.ts';
import { readNetworks } from '../../subgraph/scripts/networks.ts';

// networks.json's public entries have zero addresses until the protocol is deployed there; Studio
// plans need one that has them
const withMainnet = { ...readNetworks(), mainnet: readNetworks().devnet! };

describe('subgraph deploy plan', () => {
  it('refuses a network whose networks.json entry still has the zero address', () => {
    expect(() =>
      planDeployment('studio', {
        SUBGRAPH_NETWORK: 'sepolia',
        SUBGRAPH_NAME: 'fund-protocol',
        GRAPH_DEPLOY_KEY: 'k',
      }),
    ).toThrow(
      'subgraph/networks.json: network "sepolia" still has the zero address for FundRegistry, NavOracle, DividendDistributor',
    );
  });

  it('refuses to build such a network as it refuses to deploy it', async () => {
    await expect(buildSubgraph('sepolia')).rejects.toThrow(
      'subgraph/networks.json: network "sepolia" still has the zero address for FundRegistry, NavOracle, DividendDistributor',
    );
  });

  it('refuses a network that networks.json does not have', () => {
    expect(() =>
      planDeployment('studio', {
        SUBGRAPH_NETWORK: 'mainnet',
        SUBGRAPH_NAME: 'fund-protocol',
        GRAPH_DEPLOY_KEY: 'k',
      }),
    ).toThrow(/network "mainnet" is not in subgraph\/networks\.json/);
  });

  it('requires a deploy key for Subgraph Studio', () => {
    expect(() =>
      planDeployment('studio', { SUBGRAPH_NETWORK: 'mainnet', SUBGRAPH_NAME: 'fund-protocol' }, withMainnet),
    ).toThrow(/GRAPH_DEPLOY_KEY is not set/);
  });

  it('refuses to deploy the local devnet to Subgraph Studio, which cannot reach it', () => {
    expect(() =>
      planDeployment('studio', {
        SUBGRAPH_NETWORK: 'devnet',
        SUBGRAPH_NAME: 'fund-protocol',
        GRAPH_DEPLOY_KEY: 'k',
      }),
    ).toThrow(
      'cannot deploy the subgraph to studio:\n- SUBGRAPH_NETWORK "devnet" is the local anvil chain, which Subgraph Studio cannot index: deploy it to your own graph-node (npm run subgraph:deploy:node), or name a public network whose subgraph/networks.json entry has the protocol\'s addresses',
    );
  });

  it.each([
    ['bad name!', 'is not a subgraph name'],
    ['fund-protocol/', 'is not a subgraph name'],
    ['-fund', 'is not a subgraph name'],
    ['fund/123', 'is not a subgraph name'],
    ['fund/graphql', 'names a part "graphql", which graph-node reserves'],
  ])('refuses a SUBGRAPH_NAME graph-node would refuse (%s), before running graph-cli', (name, why) => {
    expect(() =>
      planDeployment('node', {
        SUBGRAPH_NETWORK: 'devnet',
        SUBGRAPH_NAME: name,
        GRAPH_NODE_URL: 'http://127.0.0.1:8020',
        GRAPH_IPFS_URL: 'http://127.0.0.1:5001',
      }),
    ).toThrow(`SUBGRAPH_NAME "${name}" ${why}`);
  });

  it('refuses a SUBGRAPH_VERSION_LABEL holding white space', () => {
    expect(() =>
      planDeployment(
        'studio',
        {
          SUBGRAPH_NETWORK: 'mainnet',
          SUBGRAPH_NAME: 'fund-protocol',
          GRAPH_DEPLOY_KEY: 'k',
          SUBGRAPH_VERSION_LABEL: 'x y',
        },
        withMainnet,
      ),
    ).toThrow('SUBGRAPH_VERSION_LABEL "x y" holds white space: use e.g. v1.2.0');
  });

  it('prints an argument a shell would split or expand in quotes', () => {
    expect(printableCommand(['deploy', 'fund', '--version-label', "it's $HOME"])).toBe(
      "graph deploy fund --version-label 'it'\\''s $HOME'",
    );
  });

  it('requires http(s) URLs for the graph-node and its IPFS', () => {
    expect(() =>
      planDeployment('node', {
        SUBGRAPH_NETWORK: 'devnet',
        SUBGRAPH_NAME: 'fund-protocol/devnet',
        GRAPH_NODE_URL: 'localhost:8020',
      }),
    ).toThrow(/GRAPH_NODE_URL must be an http\(s\) URL[\s\S]*GRAPH_IPFS_URL is not set/);
  });

  it('refuses an IPFS API URL with credentials or a query, which graph-cli cannot use', () => {
    const plan = (ipfsUrl: string) => () =>
      planDeployment('node', {
        SUBGRAPH_NETWORK: 'devnet',
        SUBGRAPH_NAME: 'fund-protocol/devnet',
        GRAPH_NODE_URL: 'http://127.0.0.1:8020',
        GRAPH_IPFS_URL: ipfsUrl,
      });
    expect(plan('https://user:secret@ipfs.example.com')).toThrow(
      'cannot deploy the subgraph to node:\n- GRAPH_IPFS_URL holds a user name or password, which graph-cli cannot send (its request fails and prints the URL): use an IPFS API URL without them, e.g. one whose path holds the key',
    );
    expect(plan('https://ipfs.example.com/api/v0?key=abc')).toThrow(
      "cannot deploy the subgraph to node:\n- GRAPH_IPFS_URL holds a query or fragment, after which graph-cli would append its API paths: give the IPFS API's base URL alone, e.g. http://127.0.0.1:5001",
    );
  });

  it('plans graph create then graph deploy --node --ipfs for a self-hosted graph-node', () => {
    const plan = planDeployment('node', {
      SUBGRAPH_NETWORK: 'devnet',
      SUBGRAPH_NAME: 'fund-protocol/devnet',
      GRAPH_NODE_URL: 'http://127.0.0.1:8020',
      GRAPH_IPFS_URL: 'http://127.0.0.1:5001',
      SUBGRAPH_VERSION_LABEL: 'v1.2.3',
    });
    expect(plan.commands.map((command) => command.args)).toEqual([
      ['create', 'fund-protocol/devnet', '--node', 'http://127.0.0.1:8020'],
      [
        'deploy',
        'fund-protocol/devnet',
        manifestPlaceholder,
        '--node',
        'http://127.0.0.1:8020',
        '--ipfs',
        'http://127.0.0.1:5001',
        '--network',
        'devnet',
        '--version-label',
        'v1.2.3',
        '--output-dir',
        outputDirPlaceholder,
      ],
    ]);
  });

  it('prints Studio commands with the deploy key masked', () => {
    const plan = planDeployment(
      'studio',
      { SUBGRAPH_NETWORK: 'mainnet', SUBGRAPH_NAME: 'fund-protocol', GRAPH_DEPLOY_KEY: 'secret-key' },
      withMainnet,
    );
    const printed = plan.commands.map((command) => printableCommand(command.args)).join('\n');
    expect(printed).toContain('graph deploy fund-protocol MANIFEST --deploy-key *** --network mainnet');
    expect(printed).not.toContain('secret-key');
  });

  it('prints graph-node URLs without their credentials and paths', () => {
    const plan = planDeployment('node', {
      SUBGRAPH_NETWORK: 'devnet',
      SUBGRAPH_NAME: 'fund-protocol/devnet',
      GRAPH_NODE_URL: 'https://admin:hunter2@graph.example.com/admin',
      GRAPH_IPFS_URL: 'https://ipfs.example.com/key123',
    });
    const printed = [...plan.summary, ...plan.commands.map((command) => printableCommand(command.args))];
    expect(printed.join('\n')).not.toMatch(/hunter2|key123/);
    expect(printed[1]).toBe('to graph-node https://graph.example.com/… with IPFS https://ipfs.example.com/…');
  });
});
