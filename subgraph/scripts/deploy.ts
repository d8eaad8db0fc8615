// `npm run subgraph:deploy:studio` / `npm run subgraph:deploy:node` (add `-- --dry-run` to stop
// before graph-cli runs): validates the environment and the network's networks.json entry, checks
// that GRAPH_NODE_URL and GRAPH_IPFS_URL answer as a graph-node and an IPFS API (node target),
// prints what it will do, generates types and runs graph-cli's create/deploy for the network
// named by SUBGRAPH_NETWORK. The dry run sends nothing to Subgraph Studio: its deploy key is not checked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkNodeEndpoints } from './deploy-endpoints.ts';
import { GraphCliError, networkManifestCopy, printableCommand, runGraph } from './graph-cli.ts';
import {
  manifestPlaceholder,
  outputDirPlaceholder,
  planDeployment,
  type DeployTarget,
} from './deploy-plan.ts';

const target = process.argv[2];
const dryRun = process.argv.includes('--dry-run');

async function deploy(deployTarget: DeployTarget): Promise<void> {
  const plan = planDeployment(deployTarget, process.env);
  console.log(plan.summary.join('\n'));
  if (plan.endpoints) {
    await checkNodeEndpoints(plan.endpoints);
    console.log('GRAPH_NODE_URL answers as a graph-node admin endpoint, GRAPH_IPFS_URL as an IPFS API');
  }
  const copy = networkManifestCopy(plan.network);
  const outputDir = mkdtempSync(join(tmpdir(), 'subgraph-deploy-'));
  try {
    const substitute = (arg: string): string =>
      arg === manifestPlaceholder ? copy.file : arg === outputDirPlaceholder ? outputDir : arg;
    const commands = plan.commands.map((command) => ({ ...command, args: command.args.map(substitute) }));
    for (const command of commands) console.log(`will run: ${printableCommand(command.args)}`);
    if (dryRun) return;
    await runGraph(['codegen', copy.file]);
    for (const command of commands) {
      try {
        await runGraph(command.args, { stream: true });
      } catch (error) {
        const exists = error instanceof GraphCliError && /already exists/i.test(error.reason);
        if (!command.mayAlreadyExist || !exists) throw error;
        console.log(`subgraph name "${plan.name}" already exists on the node; deploying a new version`);
      }
    }
  } finally {
    copy.remove();
    rmSync(outputDir, { recursive: true, force: true });
  }
}

if (target !== 'studio' && target !== 'node') {
  console.error('usage: tsx subgraph/scripts/deploy.ts studio|node [--dry-run]');
  process.exitCode = 2;
} else {
  try {
    await deploy(target);
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 1;
  }
}
