// Builds the subgraph for one network of networks.json: `graph codegen` then
// `graph build --network <name>`. It runs before every start and test, so it skips the work
// when the inputs hash to what the last successful build recorded, and it serialises
// concurrent builds (several test runs share this checkout) with a lock directory.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { filesUnder } from '../../common/directory.ts';
import { compileOutputDir, driftedAbis } from './abi-sync.ts';
import { networkManifestCopy, runGraph } from './graph-cli.ts';
import { manifestPath, subgraphDir } from '../manifest.ts';
import { readDeployedNetwork } from './networks.ts';

const buildDir = join(subgraphDir, 'build');
export const builtManifestPath = join(buildDir, 'subgraph.yaml');
const stampPath = join(buildDir, '.inputs-sha256');
const lockDir = join(subgraphDir, '.build.lock');
const lockWaitLimitMs = 10 * 60_000;

interface BuildResult {
  network: string;
  /** false when the inputs were unchanged and the previous build was kept */
  built: boolean;
  manifest: string;
}

export async function buildSubgraph(network = 'devnet'): Promise<BuildResult> {
  readDeployedNetwork(network);
  warnOnAbiDrift();
  const result = { network, built: false, manifest: builtManifestPath };
  if (isUpToDate(network)) return result;
  const releaseLock = await acquireLock();
  try {
    // Another process may have finished the same build while this one waited.
    if (isUpToDate(network)) return result;
    rmSync(stampPath, { force: true });
    // Hashed before building: an edit made during the build must trigger the next one.
    const hash = inputsHash(network);
    const copy = networkManifestCopy(network);
    try {
      await runGraph(['codegen', copy.file]);
      await runGraph(['build', '--network', network, copy.file]);
    } finally {
      copy.remove();
    }
    writeFileSync(stampPath, hash);
    return { ...result, built: true };
  } finally {
    releaseLock();
  }
}

function isUpToDate(network: string): boolean {
  return (
    existsSync(builtManifestPath) &&
    existsSync(join(subgraphDir, 'generated', 'schema.ts')) &&
    existsSync(stampPath) &&
    readFileSync(stampPath, 'utf8') === inputsHash(network)
  );
}

/** Hash of everything the build reads: manifest, schema, mappings, ABIs, networks, tool versions. */
function inputsHash(network: string): string {
  const hash = createHash('sha256');
  hash.update(`network:${network}\n`);
  const files = [
    manifestPath,
    join(subgraphDir, 'schema.graphql'),
    join(subgraphDir, 'networks.json'),
    ...filesUnder(join(subgraphDir, 'src')),
    ...filesUnder(join(subgraphDir, 'abis')),
    join(subgraphDir, '..', 'node_modules', '@graphprotocol', 'graph-cli', 'package.json'),
    join(subgraphDir, '..', 'node_modules', '@graphprotocol', 'graph-ts', 'package.json'),
  ];
  for (const file of files) {
    hash.update(`${relative(subgraphDir, file)}\n`);
    hash.update(readFileSync(file));
  }
  return hash.digest('hex');
}

function warnOnAbiDrift(): void {
  if (!existsSync(compileOutputDir)) return;
  const drifted = driftedAbis();
  if (drifted.length > 0) {
    console.warn(
      `warning: subgraph/abis/ differs from devnet/build for ${drifted.join(', ')}; ` +
        'run `npm run subgraph:abis` and commit the result',
    );
  }
}

/** mkdir is atomic: whoever creates the directory holds the lock; a dead holder's lock is taken over. */
async function acquireLock(): Promise<() => void> {
  const started = Date.now();
  const ownerFile = join(lockDir, 'pid');
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(ownerFile, String(process.pid));
      return () => rmSync(lockDir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!lockHolderAlive(ownerFile)) {
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() - started > lockWaitLimitMs) {
      throw new Error(`another subgraph build has held ${lockDir} for over 10 minutes; remove it if stale`);
    }
    await sleep(250);
  }
}

function lockHolderAlive(ownerFile: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(ownerFile, 'utf8'));
  } catch {
    // The holder has created the directory but not yet written its pid (or died in between).
    return Date.now() - statSync(lockDir).mtimeMs < 10_000;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
