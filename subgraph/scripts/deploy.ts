// `npm run subgraph:deploy:studio` / `npm run subgraph:deploy:node` (add `-- --dry-run` to
// only print the plan): validates the environment, prints what it will do, generates types
// and runs graph-cli's create/deploy for the network named by SUBGRAPH_NETWORK.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { networkManifestCopy, runGraph } from './graph-cli.ts';
import {
  manifestPlaceholder,
  outputDirPlaceholder,
  planDeployment,
  printableCommand,
  type DeployTarget,
} from './deploy-plan.ts';

const target = process.argv[2];
const dryRun = process.argv.includes('--dry-run');

async function deploy(deployTarget: DeployTarget): Promise<void> {
  const plan = planDeployment(deployTarget, process.env);
  console.log(plan.summary.join('\n'));
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
        if (!command.mayAlreadyExist || !/already exists/i.test((error as Error).message)) throw error;
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
