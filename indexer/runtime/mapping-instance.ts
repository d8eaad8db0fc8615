// One instantiated mapping module. graph-node instantiates a fresh module for every trigger; that
// costs more than the handler here, so an instance is reused for many handler calls and replaced
// once its allocator (the stub runtime never frees) has handed out more than a bound. Successive
// instances of a module share one WebAssembly.Memory, so replacing an instance reuses its memory.
// Each call runs with the execution budget of execution-budget.ts, which the module was metered for
// when it loaded.
import { AscHeap, type MappingExports } from './asc-memory.ts';
import { BUDGET_EXPORT, ExecutionBudgetExceeded, HANDLER_BUDGET } from './execution-budget.ts';
import { HostEnv, type RuntimeEnv } from './host-context.ts';
import { linkImports } from './host-imports.ts';

export class MappingInstance {
  readonly heap: AscHeap;
  private readonly exports: WebAssembly.Exports;
  /** what is left of the running call's budget (see execution-budget.ts) */
  private readonly budget: WebAssembly.Global;

  constructor(
    module: WebAssembly.Module,
    memory: WebAssembly.Memory,
    runtime: RuntimeEnv,
    /** the units each call may spend */
    private readonly handlerBudget: bigint = HANDLER_BUDGET,
  ) {
    const env = new HostEnv(runtime);
    const instance = new WebAssembly.Instance(module, linkImports(module, env, memory));
    this.exports = instance.exports;
    const budget = this.exports[BUDGET_EXPORT];
    if (!(budget instanceof WebAssembly.Global)) {
      throw new Error(
        'mapping module was not metered when it loaded (meterExecution in execution-budget.ts)',
      );
    }
    this.budget = budget;
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
    if (typeof start === 'function') this.metered(start as () => void);
  }

  /** The stub allocator's current offset: how far into memory this instance has allocated. */
  allocatedBytes(): number {
    return (this.exports.allocate as (size: number) => number)(0);
  }

  /** Calls the exported handler `name` with one pointer argument. */
  call(name: string, argument: number): void {
    const fn = this.exports[name];
    if (typeof fn !== 'function') throw new Error(`handler \`${name}\` is not exported by the mapping`);
    this.metered(() => (fn as (ptr: number) => void)(argument));
  }

  /** Runs `run` with a full budget; its trap once the budget is spent is an ExecutionBudgetExceeded. */
  private metered(run: () => void): void {
    this.budget.value = this.handlerBudget;
    try {
      run();
    } catch (error) {
      // the module's code takes the budget below zero only to trap
      if ((this.budget.value as bigint) < 0n) throw new ExecutionBudgetExceeded(this.handlerBudget);
      throw error;
    } finally {
      // the module's functions the host calls between handlers (the allocator, writing the next
      // event) run on a full budget too
      this.budget.value = this.handlerBudget;
    }
  }
}
