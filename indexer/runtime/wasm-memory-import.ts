// Rewrites a mapping module so that its linear memory is imported instead of defined. The runtime
// then hands every new instance of the module the same WebAssembly.Memory: replacing an instance
// (to drop what the never-freeing stub allocator has accumulated) restarts allocation from the
// module's heap base in memory that is already there, instead of growing a fresh memory each time
// and leaving the old ones to the garbage collector. Instantiation re-applies the data segments and
// `_start` re-initializes the globals, so each instance still starts from the module's initial state.

import {
  appendEntry,
  readSections,
  readU32,
  SectionId,
  writeModule,
  writeName,
  writeU32,
} from './wasm-binary.ts';

export interface MemoryLimits {
  initial: number;
  maximum: number | undefined;
}

/** Returns the module with its single defined memory turned into the import `env.memory`. */
export function importMemory(module: Uint8Array): { bytes: Uint8Array; limits: MemoryLimits } {
  const sections = readSections(module);
  const memoryIndex = sections.findIndex((s) => s.id === SectionId.Memory);
  const memory = sections[memoryIndex];
  if (!memory) throw new Error('mapping module defines no memory');
  const [count, limitsPos] = readU32(memory.body, 0);
  if (count !== 1) throw new Error(`mapping module defines ${count} memories`);
  const flags = memory.body[limitsPos];
  if (flags !== 0 && flags !== 1) throw new Error('mapping module memory is shared or 64-bit');
  const [initial, afterMin] = readU32(memory.body, limitsPos + 1);
  const maximum = flags === 1 ? readU32(memory.body, afterMin)[0] : undefined;
  const limitBytes = [flags, ...writeU32(initial), ...(maximum === undefined ? [] : writeU32(maximum))];
  const entry = [...writeName('env'), ...writeName('memory'), 0x02, ...limitBytes];

  sections.splice(memoryIndex, 1);
  appendEntry(sections, SectionId.Import, entry);
  return { bytes: writeModule(module, sections), limits: { initial, maximum } };
}
