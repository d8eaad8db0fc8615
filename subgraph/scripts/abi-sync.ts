// The subgraph's ABIs are copies of the devnet contracts' compile output (devnet/build),
// committed so that subgraph/ deploys on its own. This module finds the ABIs the manifest
// declares, compares them with the compile output, and rewrites them.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { abiPath, readManifest, subgraphDir } from '../manifest.ts';

export const compileOutputDir = join(subgraphDir, '..', 'devnet', 'build');

interface AbiFile {
  /** contract name: the ABI name in the manifest and the compile output's file stem */
  name: string;
  /** absolute path of the committed copy */
  path: string;
}

/** Every ABI the manifest declares, once each. */
export function manifestAbis(): AbiFile[] {
  const files = new Map<string, string>();
  for (const source of readManifest()) {
    for (const name of source.abiFiles.keys()) files.set(name, abiPath(source, name));
  }
  return [...files].map(([name, path]) => ({ name, path }));
}

export function compiledAbi(name: string): unknown[] {
  const path = join(compileOutputDir, `${name}.json`);
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: run \`npm run build:contracts\` first`);
  }
  const output = JSON.parse(readFileSync(path, 'utf8')) as { abi?: unknown };
  if (!Array.isArray(output.abi)) throw new Error(`${path} has no "abi" array`);
  return output.abi;
}

/** The names of the committed ABIs that differ from the compile output (or are missing). */
export function driftedAbis(): string[] {
  return manifestAbis()
    .filter(({ name, path }) => !existsSync(path) || !sameJson(readFileSync(path, 'utf8'), compiledAbi(name)))
    .map(({ name }) => name);
}

/** Rewrites every drifted ABI from the compile output; returns the names it rewrote. */
export function syncAbis(): string[] {
  const drifted = driftedAbis();
  for (const { name, path } of manifestAbis()) {
    if (drifted.includes(name)) writeFileSync(path, renderAbi(compiledAbi(name)));
  }
  return drifted;
}

/** Two-space JSON with a final newline: the layout Prettier keeps as is. */
export function renderAbi(abi: unknown[]): string {
  return `${JSON.stringify(abi, null, 2)}\n`;
}

function sameJson(text: string, value: unknown): boolean {
  return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
}
