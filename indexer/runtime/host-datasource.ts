// dataSource.* host functions: the address, network and context of the data source whose handler is
// running, and create/createWithContext, which record a new template instance; the block processor
// starts it for the logs of the same block after the current ones, as graph-node does. A file
// template's instance is recorded with its source (an IPFS content path, an Arweave transaction
// id), and its handler runs once the file is fetched; its address is that source's text (what
// graph-ts's dataSource.stringParam() decodes).
import type { Hex } from 'viem';
import type { Entity } from '../store/entity.ts';
import { readEntity, writeEntity } from './asc-values.ts';
import { parseArweaveSource, parseContentPath } from './content-path.ts';
import type { HostEnv, HostFunctions } from './host-context.ts';
import { bytesToHex } from '../store/layout.ts';
import { stringToH160 } from './host-conversion.ts';

function createDataSource(env: HostEnv, name: string, params: string[], context: Entity | null): void {
  const templates = env.runtime.subgraph.templates;
  const template = templates.get(name);
  if (!template) {
    throw new Error(
      `Failed to create data source from name \`${name}\`: No template with this name in parent data source \`${env.dataSource.name}\`. Available names: ${[...templates.keys()].join(', ')}.`,
    );
  }
  if (template.kind !== 'ethereum') {
    const parse = template.kind === 'file/ipfs' ? parseContentPath : parseArweaveSource;
    createFileDataSource(env, name, parse, params[0], context);
    return;
  }
  if (env.dataSource.file) {
    throw new Error(
      'Attempted to create on-chain data source in offchain data source handler. This is not yet supported.',
    );
  }
  const address = params[0];
  if (address === undefined)
    throw new Error(`Failed to create data source \`${name}\`: no address parameter`);
  const block = env.block;
  block.created.push({
    template: name,
    address: bytesToHex(stringToH160(address)).toLowerCase() as Hex,
    context,
    createdAtBlock: block.number,
  });
}

/** A file data source whose parameter is no valid source is ignored with a warning, as graph-node ignores an invalid CID. */
function createFileDataSource(
  env: HostEnv,
  name: string,
  parse: (param: string) => string,
  param: string | undefined,
  context: Entity | null,
): void {
  if (param === undefined)
    throw new Error(`Failed to create data source from template \`${name}\`: source parameter is missing`);
  let source: string;
  try {
    source = parse(param);
  } catch (error) {
    env.runtime.logger(
      'warning',
      `Ignoring file data source ${name} created with \`${param}\`: ${(error as Error).message}`,
      env.dataSource.name,
    );
    return;
  }
  env.block.createdFiles.push({ template: name, source, context });
}

function readStrings(env: HostEnv, ptr: number): string[] {
  return env.heap.readArrayU32(ptr).map((p) => env.heap.readString(p));
}

export const dataSourceFunctions: HostFunctions = {
  'dataSource.create': (env) => (namePtr: number, paramsPtr: number) => {
    createDataSource(env, env.heap.readString(namePtr), readStrings(env, paramsPtr), null);
  },
  'dataSource.createWithContext': (env) => (namePtr: number, paramsPtr: number, contextPtr: number) => {
    createDataSource(
      env,
      env.heap.readString(namePtr),
      readStrings(env, paramsPtr),
      readEntity(env.heap, contextPtr),
    );
  },
  'dataSource.address': (env) => () => {
    const file = env.dataSource.file;
    if (file) return env.heap.writeBytes(new TextEncoder().encode(file.source));
    const address = env.dataSource.address;
    return env.heap.writeBytes(address === null ? new Uint8Array(0) : stringToH160(address));
  },
  'dataSource.network': (env) => () => env.heap.writeString(env.runtime.subgraph.network),
  // graph-node hands the context over sorted by key, however it was created: writeEntity sorts it
  'dataSource.context': (env) => () => writeEntity(env.heap, env.dataSource.context ?? new Map()),
};
