// The pieces of the wasm binary format that the load-time rewrites of a mapping module share
// (wasm-memory-import.ts, execution-budget.ts): LEB128 numbers, and a module as its list of
// sections, read and written back with the bytes of every section left as they were.

export function readU32(bytes: Uint8Array, pos: number): [value: number, next: number] {
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

export function writeU32(value: number): number[] {
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

/** A signed LEB128 number, as i64.const's immediate is written. */
export function writeS64(value: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asIntN(64, value);
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    const done = (v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0);
    out.push(done ? b : b | 0x80);
    if (done) return out;
  }
}

/** A name (module, field, export) as the binary format writes it: its UTF-8 length, then the bytes. */
export function writeName(text: string): number[] {
  const bytes = [...Buffer.from(text, 'utf8')];
  return [...writeU32(bytes.length), ...bytes];
}

export interface Section {
  id: number;
  body: Uint8Array;
}

/** The ids of the sections the rewrites touch or order. */
export const SectionId = {
  Custom: 0,
  Type: 1,
  Import: 2,
  Function: 3,
  Table: 4,
  Memory: 5,
  Global: 6,
  Export: 7,
  Start: 8,
  Element: 9,
  Code: 10,
  Data: 11,
  DataCount: 12,
  Tag: 13,
} as const;

/** The order non-custom sections must come in (not their ids' order: DataCount and Tag came later). */
const SECTION_ORDER: readonly number[] = [
  SectionId.Type,
  SectionId.Import,
  SectionId.Function,
  SectionId.Table,
  SectionId.Memory,
  SectionId.Tag,
  SectionId.Global,
  SectionId.Export,
  SectionId.Start,
  SectionId.Element,
  SectionId.DataCount,
  SectionId.Code,
  SectionId.Data,
];

/** The sections of `module`, in order; refuses what does not start as a wasm module. */
export function readSections(module: Uint8Array): Section[] {
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
  return sections;
}

/** Puts `section` (one the module lacks) where the binary format's order wants it. */
export function insertSection(sections: Section[], section: Section): void {
  const rank = SECTION_ORDER.indexOf(section.id);
  const at = sections.findIndex((s) => s.id !== SectionId.Custom && SECTION_ORDER.indexOf(s.id) > rank);
  sections.splice(at < 0 ? sections.length : at, 0, section);
}

/** Adds `entry` to the vector that is the body of section `id`, creating the section if missing. */
export function appendEntry(sections: Section[], id: number, entry: number[]): void {
  const section = sections.find((s) => s.id === id);
  if (!section) {
    insertSection(sections, { id, body: Uint8Array.from([1, ...entry]) });
    return;
  }
  const [count, rest] = readU32(section.body, 0);
  section.body = Buffer.concat([
    Uint8Array.from(writeU32(count + 1)),
    section.body.subarray(rest),
    Uint8Array.from(entry),
  ]);
}

/** The module of `sections`, after the header (magic and version) of `original`. */
export function writeModule(original: Uint8Array, sections: readonly Section[]): Uint8Array {
  const parts: Uint8Array[] = [original.subarray(0, 8)];
  for (const s of sections) parts.push(Uint8Array.from([s.id, ...writeU32(s.body.length)]), s.body);
  return Buffer.concat(parts);
}
