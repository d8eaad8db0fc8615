// Runs the handler of a file data source (graph-node's offchain triggers) given its file's bytes,
// on its own, over a writer of the data source's causality region. Never part of a pass over a
// block's triggers, so it is kept apart from the block processor, which lends it its runtime and
// mapping instances.
import type { Hex } from 'viem';
import type { Entity, EntityStoreTx } from '../store/entity.ts';
import type { ActiveDataSource } from './data-sources.ts';
import { handlerFailure } from './handler-error.ts';
import { BlockState, type CreatedFile, type RuntimeEnv } from './host-context.ts';
import type { MappingInstances } from './mapping-instances.ts';

/** A file data source whose file has arrived: what its handler runs with, besides the bytes. */
export interface FileTrigger {
  template: string;
  /** canonical content path */
  source: string;
  /** its causality region */
  region: number;
  context: Entity | null;
  createdAtBlock: bigint;
}

/**
 * Runs the handler of file data source `file` with its file's bytes in the pass of `block`, over
 * `tx`. Returns the file data sources it created; throws what handlerFailure makes of a failure.
 */
export function runFileDataSourceHandler(
  runtime: RuntimeEnv,
  instances: MappingInstances,
  file: FileTrigger,
  content: Uint8Array,
  block: { number: bigint; hash: Hex },
  tx: EntityStoreTx,
): CreatedFile[] {
  const template = runtime.subgraph.templates.get(file.template);
  if (!template || template.kind === 'ethereum')
    throw new Error(`${file.template} is not a file data source template`);
  const handler = template.mapping.fileHandler!;
  const ds: ActiveDataSource = {
    name: template.name,
    address: null,
    startBlock: file.createdAtBlock,
    endBlock: null,
    context: file.context,
    mapping: template.mapping,
    seq: -1,
    file: { source: file.source, region: file.region },
  };
  const state = new BlockState(block.number, block.hash, tx);
  runtime.block = state;
  try {
    const instance = instances.get(ds.mapping);
    runtime.dataSource = ds;
    instance.call(handler, instance.heap.writeBytes(content));
    return state.createdFiles;
  } catch (error) {
    // the handler may have stopped mid-way: its instance must not run another
    instances.discard(ds.mapping.module);
    throw handlerFailure(error, ds, handler, block, { file: file.source });
  } finally {
    runtime.dataSource = null;
    runtime.block = null;
  }
}
