// Runs the project's pinned graph-cli (node_modules/.bin/graph) non-interactively, and
// prepares the per-network copy of the manifest that graph-cli's `--network` rewrites, so
// the committed subgraph.yaml is never modified by a build or a deploy.
import { spawn } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { manifestPath, subgraphDir } from './manifest.ts';

const graphBin = join(subgraphDir, '..', 'node_modules', '.bin', 'graph');

export interface GraphRunOptions {
  /** print graph-cli's output as it runs (deploys) instead of only on failure (builds) */
  stream?: boolean;
}

/** Runs `graph <args>` in subgraph/; rejects with graph-cli's own error lines when it fails. */
export function runGraph(args: string[], options: GraphRunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(graphBin, args, {
      cwd: subgraphDir,
      env: { ...process.env, GRAPH_SKIP_NEW_VERSION_CHECK: 'true', CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      if (options.stream) process.stdout.write(chunk);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (error) => reject(new Error(`cannot run ${graphBin}: ${error.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve(output);
      else
        reject(new Error(`\`graph ${args.join(' ')}\` failed (exit ${code}):\n${graphErrorLines(output)}`));
    });
  });
}

/** graph-cli's output without colours, spinner and success steps, skips and stack frames. */
export function graphErrorLines(output: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  const lines = plain
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .filter((line) => !/^\s*at |^- |^✔|Skip migration|Skip '/.test(line));
  return lines.join('\n');
}

/**
 * A copy of subgraph.yaml next to it (relative paths keep working) for graph-cli to rewrite with
 * `--network`. The name carries the process id because several test runs may build at once, and
 * a `.tmp` extension so that a concurrent `prettier --check .` does not read graph-cli's rewrite.
 */
export function networkManifestCopy(network: string): { file: string; remove(): void } {
  const file = `.subgraph.${network}.${process.pid}.yaml.tmp`;
  const path = join(subgraphDir, file);
  copyFileSync(manifestPath, path);
  return { file, remove: () => rmSync(path, { force: true }) };
}
