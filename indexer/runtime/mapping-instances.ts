// The live instance of each mapping module of a subgraph (see mapping-instance.ts for why one
// serves many handler calls): created on first use, replaced once its allocator has handed out
// more than a bound, and dropped after a handler failed in it. Each module gets one
// WebAssembly.Memory, created with the first instance and shared by its replacements, so replacing
// an instance allocates no memory. Kept apart from the block processor so that the trigger runners
// there read as the order of handlers alone.
import type { RuntimeEnv } from './host-context.ts';
import type { MappingSpec } from './manifest.ts';
import { MappingInstance } from './mapping-instance.ts';

export class MappingInstances {
  private readonly instances = new Map<WebAssembly.Module, MappingInstance>();
  private readonly memories = new Map<WebAssembly.Module, WebAssembly.Memory>();
  private instancesCreated = 0;

  /**
   * `maxMemoryBytes`: replace an instance once its allocator has handed out this many bytes;
   * `handlerBudget`: the units each handler call may spend (see execution-budget.ts)
   */
  constructor(
    private readonly runtime: RuntimeEnv,
    private readonly maxMemoryBytes: number,
    private readonly handlerBudget: bigint,
  ) {}

  /** The instance a handler of `mapping` runs in: the module's current one, or a new one. */
  get(mapping: MappingSpec): MappingInstance {
    const module = mapping.module;
    let instance = this.instances.get(module);
    if (!instance || instance.allocatedBytes() > this.maxMemoryBytes) {
      let memory = this.memories.get(module);
      if (!memory) {
        const { initial, maximum } = mapping.memoryLimits;
        memory = new WebAssembly.Memory(maximum === undefined ? { initial } : { initial, maximum });
        this.memories.set(module, memory);
      } else {
        // A new instance must see the zeroed memory a fresh one would: the stub runtime's __new
        // does not clear what it hands out. Data segments are written again on instantiation.
        new Uint8Array(memory.buffer).fill(0);
      }
      instance = new MappingInstance(module, memory, this.runtime, this.handlerBudget);
      this.instancesCreated++;
      this.instances.set(module, instance);
    }
    return instance;
  }

  /** Drops the instance of `module` (a handler failed in it and may have stopped mid-way). */
  discard(module: WebAssembly.Module): void {
    this.instances.delete(module);
  }

  /** instances created so far (one at start per module, plus replacements) */
  get created(): number {
    return this.instancesCreated;
  }

  /** bytes of linear memory held by the mapping modules (one memory per module) */
  get memoryBytes(): number {
    let total = 0;
    for (const memory of this.memories.values()) total += memory.buffer.byteLength;
    return total;
  }
}
