// One instantiated mapping module. graph-node instantiates a fresh module for every trigger; that
// costs more than the handler here, so an instance is reused for many handler calls and replaced
// once its allocator (the stub runtime never frees) has handed out more than a bound. Successive
// instances of a module share one WebAssembly.Memory, so replacing an instance reuses its memory.
import { AscHeap, type MappingExports } from './asc-memory.ts';
import { HostEnv, type RuntimeEnv } from './host-context.ts';
import { linkImports } from './host-imports.ts';

export class MappingInstance {
  readonly heap: AscHeap;
  private readonly exports: WebAssembly.Exports;

  constructor(module: WebAssembly.Module, memory: WebAssembly.Memory, runtime: RuntimeEnv) {
    const env = new HostEnv(runtime);
    const instance = new WebAssembly.Instance(module, linkImports(module, env, memory));
    this.exports = instance.exports;
    const { allocate, id_of_type } = this.exports as Partial<MappingExports>;
    if (typeof allocate !== 'function' || typeof id_of_type !== 'function') {
      throw new Error(
        'mapping module does not export allocate and id_of_type (apiVersion >= 0.0.5 expected)',
      );
    }
    this.heap = new AscHeap({ memory, allocate, id_of_type } as MappingExports);
    env.heap = this.heap;
    // Modules built with --explicitStart initialize their globals (the allocator's included) in `_start`.
    const start = this.exports._start;
    if (typeof start === 'function') (start as () => void)();
  }

  /** The stub allocator's current offset: how far into memory this instance has allocated. */
  allocatedBytes(): number {
    return (this.exports.allocate as (size: number) => number)(0);
  }

  /** Calls the exported handler `name` with one pointer argument. */
  call(name: string, argument: number): void {
    const fn = this.exports[name];
    if (typeof fn !== 'function') throw new Error(`handler \`${name}\` is not exported by the mapping`);
    (fn as (ptr: number) => void)(argument);
  }
}
