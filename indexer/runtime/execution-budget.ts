// Bounds how long one handler call may run, as graph-node's gas does: a handler that never ends (an
// endless loop, unbounded recursion) would otherwise hold the indexing thread for ever, and with it
// the whole service, since that thread also serves REST. A handler cannot be interrupted from the
// thread it runs on, so the mapping module counts for itself: when it loads, every function entry and
// every loop header is made to take one unit from a budget held in a global of the module, and to
// trap once the budget is spent. The mapping instance sets the budget before each call and turns that
// trap into an ExecutionBudgetExceeded, which fails the handler like any deterministic error.
//
// The count is deterministic (the same handler on the same block always spends the same units), as
// graph-node's gas is, though not measured in the same units: graph-node weighs every instruction
// and host call and stops at 10^13 gas (about 1,000 s of its wasm), which a loop of a few
// instructions reaches after some 10^10 iterations. HANDLER_BUDGET allows as many units: a thousand
// times what the heaviest handlers we know of spend (a mapping walking a 10 MB file byte by byte
// spends 10^7), and an endless loop exhausts it in tens of seconds here.
//
// The module's code is rewritten at the binary level, leaving every other byte as it was (function
// indices, names, data): only the instructions graph-node accepts (it parses mappings as wasm 1.0
// with sign extension) and the bulk-memory and reference-types ones are understood; a module using
// others is refused when it loads.
import {
  appendEntry,
  readSections,
  readU32,
  SectionId,
  writeModule,
  writeName,
  writeS64,
  writeU32,
  type Section,
} from './wasm-binary.ts';

/** Units (function entries plus loop iterations) one handler call may spend. */
export const HANDLER_BUDGET = 10_000_000_000n;

/** The export name of the global holding what is left of the budget of the running call. */
export const BUDGET_EXPORT = '__indexer_execution_budget';

/** A handler spent its budget: it very likely never ends. */
export class ExecutionBudgetExceeded extends Error {
  constructor(budget: bigint) {
    super(
      `Gas limit exceeded: the handler ran past ${budget.toLocaleString('en-US')} loop iterations and function calls, far beyond what a handler that ends needs; it likely loops for ever (an endless loop or unbounded recursion)`,
    );
  }
}

const GLOBAL_GET = 0x23;
const GLOBAL_SET = 0x24;
const I64 = 0x7e;
const I64_CONST = 0x42;
const END = 0x0b;
const LOOP = 0x03;

/**
 * The instructions that take one unit: `budget -= 1; if (budget < 0) unreachable`. Stack-neutral and
 * branch-free for the code around them, so they can go at a function's start or a loop's header.
 */
function charge(budgetGlobal: number): Uint8Array {
  const global = writeU32(budgetGlobal);
  // prettier-ignore
  return Uint8Array.from([
    GLOBAL_GET, ...global, I64_CONST, 1, 0x7d /* i64.sub */, GLOBAL_SET, ...global,
    GLOBAL_GET, ...global, I64_CONST, 0, 0x53 /* i64.lt_s */,
    0x04 /* if */, 0x40 /* of no result */, 0x00 /* unreachable */, END,
  ]);
}

/**
 * `module` with its executions bounded: a mutable i64 global exported as BUDGET_EXPORT (starting at
 * HANDLER_BUDGET, for a start function) that each function entry and loop header decrements,
 * trapping (`unreachable`) once it is below zero.
 */
export function meterExecution(module: Uint8Array): Uint8Array {
  const sections = readSections(module);
  const budgetGlobal = importedGlobals(sections) + definedGlobals(sections);
  const global = [I64, 0x01 /* mutable */, I64_CONST, ...writeS64(HANDLER_BUDGET), END];
  appendEntry(sections, SectionId.Global, global);
  appendEntry(sections, SectionId.Export, [
    ...writeName(BUDGET_EXPORT),
    0x03 /* global */,
    ...writeU32(budgetGlobal),
  ]);
  const code = sections.find((s) => s.id === SectionId.Code);
  if (code) code.body = meterCode(code.body, charge(budgetGlobal));
  return writeModule(module, sections);
}

function definedGlobals(sections: Section[]): number {
  const section = sections.find((s) => s.id === SectionId.Global);
  return section ? readU32(section.body, 0)[0] : 0;
}

/** The globals the module imports: a defined global's index comes after theirs. */
function importedGlobals(sections: Section[]): number {
  const section = sections.find((s) => s.id === SectionId.Import);
  if (!section) return 0;
  const r = new Cursor(section.body);
  let globals = 0;
  for (let n = r.u32(); n > 0; n--) {
    r.skip(r.u32()); // module name
    r.skip(r.u32()); // field name
    const kind = r.byte();
    if (kind === 0x00)
      r.u32(); // function: type index
    else if (kind === 0x01) {
      r.byte(); // table: element type, then limits
      r.limits();
    } else if (kind === 0x02)
      r.limits(); // memory
    else if (kind === 0x03) {
      r.byte(); // global: value type, mutability
      r.byte();
      globals++;
    } else
      throw new Error(`mapping module imports an entity of kind ${kind}, which the indexer cannot meter`);
  }
  return globals;
}

/** The code section with `charge` at the start of every function body and every loop. */
function meterCode(body: Uint8Array, charged: Uint8Array): Uint8Array {
  const r = new Cursor(body);
  const count = r.u32();
  const parts: Uint8Array[] = [Uint8Array.from(writeU32(count))];
  for (let i = 0; i < count; i++) {
    const size = r.u32();
    const metered = meterFunction(body.subarray(r.pos, r.pos + size), charged, i);
    r.skip(size);
    parts.push(Uint8Array.from(writeU32(metered.length)), metered);
  }
  return Buffer.concat(parts);
}

function meterFunction(body: Uint8Array, charged: Uint8Array, index: number): Uint8Array {
  const r = new Cursor(body);
  for (let groups = r.u32(); groups > 0; groups--) {
    r.u32(); // count of locals
    r.byte(); // their type
  }
  const parts: Uint8Array[] = [body.subarray(0, r.pos), charged];
  let copied = r.pos;
  while (r.pos < body.length) {
    const opcode = r.byte();
    skipImmediates(r, opcode, index);
    if (opcode === LOOP) {
      parts.push(body.subarray(copied, r.pos), charged);
      copied = r.pos;
    }
  }
  parts.push(body.subarray(copied));
  return Buffer.concat(parts);
}

/** Value types a block type may be as a single byte (else it is a type index). */
const BLOCK_VALUE_TYPES = new Set([0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);

/** Moves `r` past the immediates of `opcode`; refuses an instruction it does not know. */
function skipImmediates(r: Cursor, opcode: number, fn: number): void {
  if (opcode === 0x02 || opcode === 0x03 || opcode === 0x04) {
    // block, loop, if: a block type
    if (BLOCK_VALUE_TYPES.has(r.peek())) r.byte();
    else r.leb();
  } else if (opcode === 0x0c || opcode === 0x0d || opcode === 0x10 || opcode === 0xd2) {
    r.leb(); // br, br_if, call, ref.func
  } else if (opcode === 0x0e) {
    for (let n = r.u32(); n >= 0; n--) r.leb(); // br_table: the labels, then the default
  } else if (opcode === 0x11) {
    r.leb(); // call_indirect: type, table
    r.leb();
  } else if (opcode === 0x1c) {
    r.skip(r.u32()); // select with types
  } else if (opcode >= 0x20 && opcode <= 0x26) {
    r.leb(); // local.get/set/tee, global.get/set, table.get/set
  } else if (opcode >= 0x28 && opcode <= 0x3e) {
    // loads and stores: alignment (bit 6: a memory index follows), offset
    if (r.u32() & 0x40) r.leb();
    r.leb();
  } else if (opcode === 0x3f || opcode === 0x40 || opcode === 0x41 || opcode === 0x42) {
    r.leb(); // memory.size, memory.grow, i32.const, i64.const
  } else if (opcode === 0x43) {
    r.skip(4);
  } else if (opcode === 0x44) {
    r.skip(8);
  } else if (opcode === 0xd0) {
    r.byte(); // ref.null: a reference type
  } else if (opcode === 0xfc) {
    skipMiscImmediates(r, r.u32(), fn);
  } else if (
    !(
      opcode <= 0x01 || // unreachable, nop
      opcode === 0x05 || // else
      opcode === 0x0b || // end
      opcode === 0x0f || // return
      opcode === 0x1a || // drop
      opcode === 0x1b || // select
      (opcode >= 0x45 && opcode <= 0xc4) || // numeric, sign extension
      opcode === 0xd1 // ref.is_null
    )
  ) {
    throw unknownInstruction(fn, opcode.toString(16));
  }
}

/** The 0xFC instructions: saturating truncation (none), bulk memory and table operations. */
function skipMiscImmediates(r: Cursor, op: number, fn: number): void {
  if (op <= 7) return;
  if (op === 8 || op === 10 || op === 12 || op === 14) {
    r.leb(); // memory.init, memory.copy, table.init, table.copy: two indices
    r.leb();
  } else if (op === 9 || op === 11 || op === 13 || (op >= 15 && op <= 17)) {
    r.leb(); // data.drop, memory.fill, elem.drop, table.grow/size/fill: one index
  } else throw unknownInstruction(fn, `fc ${op}`);
}

function unknownInstruction(fn: number, opcode: string): Error {
  return new Error(
    `mapping module uses the wasm instruction 0x${opcode} (in its function ${fn} of the code section), which the indexer cannot meter; graph-node accepts wasm 1.0 with sign extension`,
  );
}

/** Reads a section's bytes in order. */
class Cursor {
  pos = 0;

  constructor(private readonly bytes: Uint8Array) {}

  peek(): number {
    const b = this.bytes[this.pos];
    if (b === undefined) throw new Error('truncated wasm module');
    return b;
  }

  byte(): number {
    const b = this.peek();
    this.pos++;
    return b;
  }

  u32(): number {
    const [value, next] = readU32(this.bytes, this.pos);
    this.pos = next;
    return value;
  }

  /** Skips a LEB128 number of any width or sign. */
  leb(): void {
    while (this.byte() & 0x80);
  }

  skip(n: number): void {
    if (this.pos + n > this.bytes.length) throw new Error('truncated wasm module');
    this.pos += n;
  }

  /** Skips a table's or memory's limits: flags, minimum, and a maximum if flag bit 0 says so. */
  limits(): void {
    const flags = this.byte();
    this.leb();
    if (flags & 0x01) this.leb();
  }
}
