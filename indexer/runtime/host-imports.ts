// Links a mapping module's imports by name, as graph-node does (the import's module name is
// ignored). An import the embedded indexer does not implement is linked to a function that fails
// the handler with an error naming it, so a subgraph that never calls it still runs. The memory
// import is the one wasm-memory-import.ts introduced.
import { bigDecimalFunctions } from './host-bigdecimal.ts';
import { bigIntFunctions } from './host-bigint.ts';
import type { HostEnv, HostFunction, HostFunctions } from './host-context.ts';
import { conversionFunctions } from './host-conversion.ts';
import { dataSourceFunctions } from './host-datasource.ts';
import { ensFunctions } from './host-ens.ts';
import { ethereumFunctions } from './host-ethereum.ts';
import { ipfsFunctions } from './host-ipfs.ts';
import { jsonFunctions } from './host-json.ts';
import { logFunctions } from './host-log.ts';
import { storeFunctions } from './host-store.ts';
import { yamlFunctions } from './host-yaml.ts';

const hostFunctions: HostFunctions = {
  ...storeFunctions,
  ...bigIntFunctions,
  ...bigDecimalFunctions,
  ...conversionFunctions,
  ...jsonFunctions,
  ...yamlFunctions,
  ...dataSourceFunctions,
  ...ensFunctions,
  ...ethereumFunctions,
  ...ipfsFunctions,
  ...logFunctions,
};

export class UnimplementedHostFunctionError extends Error {}

function unimplemented(name: string): HostFunction {
  return () => {
    throw new UnimplementedHostFunctionError(
      `host function \`${name}\` is not implemented by the embedded indexer`,
    );
  };
}

/** The import object for one instance of `module`, bound to `env`, with `memory` as its memory. */
export function linkImports(
  module: WebAssembly.Module,
  env: HostEnv,
  memory: WebAssembly.Memory,
): WebAssembly.Imports {
  const imports: Record<string, Record<string, WebAssembly.ImportValue>> = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind === 'memory') {
      (imports[imp.module] ??= {})[imp.name] = memory;
      continue;
    }
    if (imp.kind !== 'function') {
      throw new Error(
        `mapping imports ${imp.kind} ${imp.module}.${imp.name}; only functions can be provided`,
      );
    }
    const make = hostFunctions[imp.name];
    (imports[imp.module] ??= {})[imp.name] = (
      make ? make(env) : unimplemented(imp.name)
    ) as WebAssembly.ImportValue;
  }
  return imports;
}
