// Builds the host-probe fixture subgraph (test/fixtures/host-probe) with the project's graph-cli,
// once per version of the fixture: the runtime tests, the end-to-end probe tests and the declared
// calls benchmark all run its wasm. Its AssemblyScript is stored as .as and copied to .ts in a
// temporary directory.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repoRoot = new URL('../../', import.meta.url).pathname;

const fixtureDir = join(repoRoot, 'test/fixtures/host-probe');

/** A digest of the fixture's files: the cache key of its build. */
function fixtureDigest(): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const file = join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else hash.update(name).update(readFileSync(file));
    }
  };
  walk(fixtureDir);
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds test/fixtures/host-probe with the project's graph-cli and returns the build directory.
 * The build is cached in the OS temp directory by the fixture's digest; concurrent test files
 * build in private directories and the first to finish publishes its build with an atomic rename.
 */
export function buildProbeSubgraph(): string {
  const cached = join(tmpdir(), `host-probe-${fixtureDigest()}`);
  if (existsSync(join(cached, 'build', 'subgraph.yaml'))) return join(cached, 'build');
  const dir = mkdtempSync(join(tmpdir(), 'host-probe-build-'));
  cpSync(fixtureDir, dir, { recursive: true });
  renameSync(join(dir, 'src/probe.as'), join(dir, 'src/probe.ts'));
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  const graph = join(repoRoot, 'node_modules/.bin/graph');
  for (const command of ['codegen', 'build']) {
    const run = spawnSync(graph, [command], {
      cwd: dir,
      env: { ...process.env, GRAPH_SKIP_NEW_VERSION_CHECK: 'true', CI: 'true' },
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`graph ${command} failed:\n${run.stdout}\n${run.stderr}`);
  }
  try {
    renameSync(dir, cached);
  } catch {
    // Another test file published the same build first.
    rmSync(dir, { recursive: true, force: true });
  }
  return join(cached, 'build');
}

/**
 * A copy of the probe build in a temporary directory of its own, its manifest changed by
 * `editManifest` and its schema by `editSchema`: how the end-to-end tests run manifests and schemas
 * that the fixture's graph-cli would not write (end blocks, features, newer directives). The caller
 * removes the directory.
 */
export function editedProbeBuild(
  editManifest: (manifest: string) => string,
  editSchema: (schema: string) => string = (schema) => schema,
): string {
  const dir = mkdtempSync(join(tmpdir(), 'probe-edited-'));
  cpSync(buildProbeSubgraph(), dir, { recursive: true });
  for (const [file, edit] of [
    ['subgraph.yaml', editManifest],
    ['schema.graphql', editSchema],
  ] as const) {
    writeFileSync(join(dir, file), edit(readFileSync(join(dir, file), 'utf8')));
  }
  return dir;
}
