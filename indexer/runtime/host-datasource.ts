// dataSource.* host functions: the address, network and context of the data source whose handler is
// running, and create/createWithContext, which record a new template instance; the block processor
// starts it for the logs of the same block after the current ones, as graph-node does.
import type { Hex } from 'viem';
import type { Entity } from '../store/entity.ts';
import { readEntity, writeEntity } from './asc-values.ts';
import type { HostEnv, HostFunctions } from './host-context.ts';
import { bytesToHex, stringToH160 } from './host-conversion.ts';

export function createDataSource(env: HostEnv, name: string, params: string[], context: Entity | null): void {
  const templates = env.runtime.subgraph.templates;
  if (!templates.has(name)) {
    throw new Error(
      `Failed to create data source from name \`${name}\`: No template with this name in parent data source \`${env.dataSource.name}\`. Available names: ${[...templates.keys()].join(', ')}.`,
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
    const address = env.dataSource.address;
    return env.heap.writeBytes(address === null ? new Uint8Array(0) : stringToH160(address));
  },
  'dataSource.network': (env) => () => env.heap.writeString(env.runtime.subgraph.network),
  'dataSource.context': (env) => () => writeEntity(env.heap, env.dataSource.context ?? new Map()),
};
