// Compiles devnet/contracts/*.sol with the solc npm package (no compiler download) and writes
// devnet/build/<Contract>.json. It runs before every start and test, so it skips the work when
// the sources, the compiler and the settings hash to what the last build recorded.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

const contractsDir = join(dirname(fileURLToPath(import.meta.url)), 'contracts');
const buildDir = join(dirname(fileURLToPath(import.meta.url)), 'build');
const hashFile = join(buildDir, '.sources-hash');

/** Offsets of immutable values inside deployed bytecode, as solc reports them. */
type ImmutableReferences = Record<string, { start: number; length: number }[]>;

interface ContractArtifact {
  contractName: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
  immutableReferences: ImmutableReferences;
}

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts: Record<
    string,
    Record<
      string,
      {
        abi: unknown[];
        evm: {
          bytecode: { object: string };
          deployedBytecode: { object: string; immutableReferences?: ImmutableReferences };
        };
      }
    >
  >;
}

interface Solc {
  compile(
    input: string,
    callbacks: { import: (path: string) => { contents: string } | { error: string } },
  ): string;
}

const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode'] } },
};

function readSources(): Record<string, { content: string }> {
  const sources: Record<string, { content: string }> = {};
  for (const file of readdirSync(contractsDir).sort()) {
    if (file.endsWith('.sol')) sources[file] = { content: readFileSync(join(contractsDir, file), 'utf8') };
  }
  return sources;
}

/** Resolves `@openzeppelin/...` (and any other package import) from node_modules. */
function resolveImport(path: string): { contents: string } | { error: string } {
  try {
    return { contents: readFileSync(require.resolve(path), 'utf8') };
  } catch {
    return { error: `import not found: ${path}` };
  }
}

/**
 * Compiles Solidity sources (by file name) with the project's solc and settings: the contracts of
 * each file by name. Errors throw; warnings are printed.
 */
export function compileSolidity(sources: Record<string, { content: string }>): SolcOutput['contracts'] {
  const solc = require('solc') as Solc;
  const input = { language: 'Solidity', sources, settings };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: resolveImport })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  for (const warning of (output.errors ?? []).filter((e) => e.severity === 'warning')) {
    console.warn(warning.formattedMessage);
  }
  return output.contracts;
}

/**
 * Compiles the contracts unless the build is up to date. Returns the names of the contracts
 * written, or an empty list when nothing had to be rebuilt.
 */
export function compileContracts(options: { force?: boolean } = {}): string[] {
  const sources = readSources();
  // The package version names the compiler: hashing it avoids loading solc (seconds) when up to date.
  const { version } = require('solc/package.json') as { version: string };
  const hash = createHash('sha256').update(JSON.stringify({ version, settings, sources })).digest('hex');
  if (!options.force && existsSync(hashFile) && readFileSync(hashFile, 'utf8') === hash) return [];

  const contracts = compileSolidity(sources);
  mkdirSync(buildDir, { recursive: true });
  const written: string[] = [];
  for (const file of Object.keys(sources)) {
    for (const [contractName, contract] of Object.entries(contracts[file] ?? {})) {
      // Interfaces and abstract contracts have no bytecode: nothing to deploy, nothing to write.
      if (contract.evm.bytecode.object.length === 0) continue;
      const artifact: ContractArtifact = {
        contractName,
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
        immutableReferences: contract.evm.deployedBytecode.immutableReferences ?? {},
      };
      writeFileSync(join(buildDir, `${contractName}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
      written.push(contractName);
    }
  }
  writeFileSync(hashFile, hash);
  return written;
}

/** Reads a compiled artifact; build:contracts must have run. */
export function loadArtifact(contractName: string): ContractArtifact {
  const path = join(buildDir, `${contractName}.json`);
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm run build:contracts`);
  return JSON.parse(readFileSync(path, 'utf8')) as ContractArtifact;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = Date.now();
  const written = compileContracts({ force: process.argv.includes('--force') });
  console.log(
    written.length === 0
      ? 'contracts up to date (devnet/build)'
      : `compiled ${written.join(', ')} into devnet/build in ${Date.now() - started} ms`,
  );
}
