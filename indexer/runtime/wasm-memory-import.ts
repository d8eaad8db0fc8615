// Rewrites a mapping module so that its linear memory is imported instead of defined. The runtime
// then hands every new instance of the module the same WebAssembly.Memory: replacing an instance
// (to drop what the never-freeing stub allocator has accumulated) restarts allocation from the
// module's heap base in memory that is already there, instead of growing a fresh memory each time
// and leaving the old ones to the garbage collector. Instantiation re-applies the data segments and
// `_start` re-initializes the globals, so each instance still starts from the module's initial state.

export interface MemoryLimits {
  initial: number;
  maximum: number | undefined;
}

function readU32(bytes: Uint8Array, pos: number): [value: number, next: number] {
  let result = 0;
  let shift = 0;
  let p = pos;
  for (;;) {
    const b = bytes[p++];
    if (b === undefined) throw new Error('truncated LEB128 in wasm module');
    result += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [result, p];
    shift += 7;
  }
}

function writeU32(value: number): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let b = v & 0x7f;
    v = Math.floor(v / 128);
    if (v !== 0) b |= 0x80;
    out.push(b);
  } while (v !== 0);
  return out;
}

function name(text: string): number[] {
  const bytes = [...Buffer.from(text, 'utf8')];
  return [...writeU32(bytes.length), ...bytes];
}

interface Section {
  id: number;
  body: Uint8Array;
}

/** Returns the module with its single defined memory turned into the import `env.memory`. */
export function importMemory(module: Uint8Array): { bytes: Uint8Array; limits: MemoryLimits } {
  if (
    module.length < 8 ||
    module[0] !== 0 ||
    module[1] !== 0x61 ||
    module[2] !== 0x73 ||
    module[3] !== 0x6d
  ) {
    throw new Error('not a wasm module');
  }
  const sections: Section[] = [];
  let pos = 8;
  while (pos < module.length) {
    const id = module[pos] as number;
    const [size, start] = readU32(module, pos + 1);
    sections.push({ id, body: module.subarray(start, start + size) });
    pos = start + size;
  }
  const memoryIndex = sections.findIndex((s) => s.id === 5);
  const memory = sections[memoryIndex];
  if (!memory) throw new Error('mapping module defines no memory');
  const [count, limitsPos] = readU32(memory.body, 0);
  if (count !== 1) throw new Error(`mapping module defines ${count} memories`);
  const flags = memory.body[limitsPos];
  if (flags !== 0 && flags !== 1) throw new Error('mapping module memory is shared or 64-bit');
  const [initial, afterMin] = readU32(memory.body, limitsPos + 1);
  const maximum = flags === 1 ? readU32(memory.body, afterMin)[0] : undefined;
  const limitBytes = [flags, ...writeU32(initial), ...(maximum === undefined ? [] : writeU32(maximum))];
  const entry = [...name('env'), ...name('memory'), 0x02, ...limitBytes];

  sections.splice(memoryIndex, 1);
  const importIndex = sections.findIndex((s) => s.id === 2);
  const existing = sections[importIndex];
  if (existing) {
    const [n, rest] = readU32(existing.body, 0);
    existing.body = Uint8Array.from([...writeU32(n + 1), ...existing.body.subarray(rest), ...entry]);
  } else {
    const at = sections.findIndex((s) => s.id !== 0 && s.id > 2);
    sections.splice(at < 0 ? sections.length : at, 0, { id: 2, body: Uint8Array.from([1, ...entry]) });
  }

  const parts: Uint8Array[] = [module.subarray(0, 8)];
  for (const s of sections) parts.push(Uint8Array.from([s.id, ...writeU32(s.body.length)]), s.body);
  return { bytes: Buffer.concat(parts), limits: { initial, maximum } };
}
