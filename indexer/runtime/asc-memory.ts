// Reads and writes AssemblyScript 0.19 objects in a mapping instance's linear memory, the way
// graph-node does for apiVersion >= 0.0.5: every object has a 20-byte header (mmInfo, gcInfo,
// gcInfo2, rtId, rtSize) before its payload; strings are UTF-16LE; a Uint8Array is
// (buffer, dataStart, byteLength); an Array<T> is (buffer, dataStart, byteLength, length).
// Memory for host-created objects comes from large chunks obtained through the module's exported
// `allocate` and is handed out by a bump pointer (the stub runtime never frees anyway).
import { HEADER_SIZE, TypeId, type TypeIdName } from './asc-types.ts';
import { bigintToSignedLE, signedLEToBigint } from './bigint-bytes.ts';

/** The exports of a graph-ts mapping module that the host relies on. */
export interface MappingExports {
  memory: WebAssembly.Memory;
  allocate(size: number): number;
  id_of_type(typeId: number): number;
}

/** Smallest chunk requested from the module's allocator, as graph-node does. */
const MIN_ARENA_SIZE = 10_000;

/** 2^(8n-1): the bound of an n-byte two's-complement number */
const SIGNED_LIMITS = [0, 2 ** 7, 2 ** 15, 2 ** 23, 2 ** 31, 2 ** 39, 2 ** 47];

// eslint-disable-next-line no-control-regex -- NUL is what is looked for
const SURROGATE_OR_NUL = /[\u0000\uD800-\uDFFF]/;

/**
 * graph-node's reading of a string: UTF-16 with a lone surrogate is an error (Rust's from_utf16),
 * and NUL characters are dropped (Postgres refuses them).
 */
function checkedString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff))
      throw new Error('invalid utf-16: lone surrogate found');
    i++;
  }
  return s.replaceAll('\u0000', '');
}

const typeIdNames = Object.keys(TypeId) as TypeIdName[];

/**
 * A group of objects laid out once in the heap and copied into it again at a new place (see
 * AscHeap.recordImage): the bytes, and the offsets of the pointer slots to shift on each copy.
 */
export interface AscImage {
  bytes: Uint8Array;
  /** where the image was recorded: pointers in `bytes` hold addresses relative to the heap there */
  origin: number;
  pointerSlots: readonly number[];
  /** offset of the root object's payload within `bytes` */
  root: number;
}

export class AscHeap {
  private u8: Uint8Array;
  private u32s: Uint32Array;
  private view: DataView;
  /** the memory as a Buffer, for hex writes straight into it */
  private buf: Buffer;
  private arenaStart = 0;
  private arenaFree = 0;
  /** bumped whenever a new arena is taken, so a recording can tell it stayed in one */
  private arenas = 0;
  /** absolute addresses of pointer slots written while an image is recorded */
  private recording: number[] | null = null;
  private readonly classIds: Record<TypeIdName, number>;

  constructor(private readonly exports: MappingExports) {
    this.u8 = new Uint8Array(exports.memory.buffer);
    this.u32s = new Uint32Array(exports.memory.buffer);
    this.view = new DataView(exports.memory.buffer);
    this.buf = Buffer.from(exports.memory.buffer);
    const classIds = {} as Record<TypeIdName, number>;
    for (const name of typeIdNames) classIds[name] = exports.id_of_type(TypeId[name]) >>> 0;
    this.classIds = classIds;
  }

  /** Re-reads the memory's buffer after the memory grew (growing detaches the previous buffer). */
  private refresh(): void {
    if (this.u8.length === 0) {
      const buffer = this.exports.memory.buffer;
      this.u8 = new Uint8Array(buffer);
      this.u32s = new Uint32Array(buffer);
      this.view = new DataView(buffer);
      this.buf = Buffer.from(buffer);
    }
  }

  private checkPtr(ptr: number, size: number): void {
    if (ptr === 0) {
      throw new Error(
        "Tried to read AssemblyScript value that is 'null'. A graph-ts function was probably called with a null value where it does not accept one.",
      );
    }
    if (ptr + size > this.u8.length)
      throw new Error(`Heap access out of bounds. Offset: ${ptr} Size: ${size}`);
  }

  u32(ptr: number): number {
    this.refresh();
    this.checkPtr(ptr, 4);
    return this.view.getUint32(ptr, true);
  }

  i32(ptr: number): number {
    this.refresh();
    this.checkPtr(ptr, 4);
    return this.view.getInt32(ptr, true);
  }

  i64(ptr: number): bigint {
    this.refresh();
    this.checkPtr(ptr, 8);
    return this.view.getBigInt64(ptr, true);
  }

  /** The payload size recorded in an object's header. */
  rtSize(ptr: number): number {
    return this.u32(ptr - 4);
  }

  readString(ptr: number): string {
    const byteLength = this.rtSize(ptr);
    this.checkPtr(ptr, byteLength);
    const s = this.buf.toString('utf16le', ptr, ptr + byteLength);
    return SURROGATE_OR_NUL.test(s) ? checkedString(s) : s;
  }

  readNullableString(ptr: number): string | null {
    return ptr === 0 ? null : this.readString(ptr);
  }

  /** Where the bytes of a TypedArray (Uint8Array, Bytes, Address, BigInt) are, checked. */
  private typedArrayData(ptr: number): { start: number; length: number } {
    const buffer = this.u32(ptr);
    const dataStart = this.u32(ptr + 4);
    const byteLength = this.u32(ptr + 8);
    if (buffer === 0) this.checkPtr(0, 0);
    if (dataStart < buffer) throw new Error(`Subtract overflow on pointer: ${dataStart}`);
    this.checkPtr(dataStart, byteLength);
    return { start: dataStart, length: byteLength };
  }

  /** A copy of the bytes of a TypedArray (Uint8Array, Bytes, Address, BigInt). */
  readBytes(ptr: number): Uint8Array {
    const { start, length } = this.typedArrayData(ptr);
    return this.u8.slice(start, start + length);
  }

  /** The bytes of a TypedArray as 0x hex, read in place. */
  readHex(ptr: number): string {
    const { start, length } = this.typedArrayData(ptr);
    return '0x' + this.buf.toString('hex', start, start + length);
  }

  /** A graph-ts BigInt's value, read in place. */
  readBigInt(ptr: number): bigint {
    const { start, length } = this.typedArrayData(ptr);
    return signedLEToBigint(this.u8, start, length);
  }

  /** The element pointers (or u32 values) of an Array<T> whose elements are 4 bytes wide. */
  readArrayU32(ptr: number): number[] {
    const buffer = this.u32(ptr);
    const dataStart = this.u32(ptr + 4);
    const length = this.i32(ptr + 12);
    if (buffer === 0) this.checkPtr(0, 0);
    this.checkPtr(dataStart, length * 4);
    const out = new Array<number>(length);
    for (let i = 0; i < length; i++) out[i] = this.view.getUint32(dataStart + i * 4, true);
    return out;
  }

  /** `total` bytes of the current arena, taking a new arena first when they do not fit. */
  private reserve(total: number): void {
    if (total > this.arenaFree) {
      const arenaSize = Math.max(total, MIN_ARENA_SIZE);
      // `allocate` returns the payload of an untyped block whose 4-byte mmInfo precedes it;
      // +12 keeps our 20-byte headers ending on a 16-byte boundary, as graph-node does.
      const start = this.exports.allocate(arenaSize);
      this.arenaStart = start + 12;
      this.arenaFree = arenaSize - 12;
      this.arenas++;
    }
    this.refresh();
  }

  /** Allocates an object of the class `type` with `size` payload bytes and returns its payload pointer. */
  newObject(type: TypeIdName, size: number): number {
    // Payload padded to 16 bytes as AssemblyScript keeps every allocation 16-byte aligned.
    const padded = (size + 15) & ~15;
    this.reserve(HEADER_SIZE + padded + 15);
    // Place the payload on a 16-byte boundary.
    const payload = (this.arenaStart + HEADER_SIZE + 15) & ~15;
    const used = payload + padded - this.arenaStart;
    this.arenaStart += used;
    this.arenaFree -= used;
    // the header starts 20 bytes before a 16-aligned payload, so its words are 4-byte aligned
    const h = (payload - HEADER_SIZE) >>> 2;
    const w = this.u32s;
    w[h] = 16 + padded; // mmInfo: bytes after itself
    w[h + 1] = 0; // gcInfo
    w[h + 2] = 0; // gcInfo2
    w[h + 3] = this.classIds[type]; // rtId
    w[h + 4] = size; // rtSize
    this.u8.fill(0, payload, payload + padded);
    return payload;
  }

  /** Writes a pointer field (recorded as one when an image is being recorded). */
  setPtr(ptr: number, value: number): void {
    this.view.setUint32(ptr, value, true);
    if (this.recording !== null) this.recording.push(ptr);
  }

  /**
   * Runs `write` so that everything it allocates lies in one arena, and returns what it wrote as an
   * image that copyImage places again elsewhere. `write` may only point at objects it creates, and
   * must write pointers with setPtr (arrays are refused), so that each copy can shift them.
   */
  recordImage(write: () => number): AscImage {
    for (let room = MIN_ARENA_SIZE; ; room *= 2) {
      this.reserve(room);
      const arenas = this.arenas;
      const start = this.arenaStart;
      const slots: number[] = [];
      this.recording = slots;
      let root: number;
      try {
        root = write();
      } finally {
        this.recording = null;
      }
      // written across two arenas (the first ran out): the copy is not contiguous, so try again
      if (this.arenas !== arenas) continue;
      return {
        bytes: this.u8.slice(start, this.arenaStart),
        origin: start,
        pointerSlots: slots.map((slot) => slot - start),
        root: root - start,
      };
    }
  }

  /** A copy of an image's objects in fresh memory; returns the copied root object's pointer. */
  copyImage(image: AscImage): number {
    const size = image.bytes.length;
    this.reserve(size + 15);
    // the copy keeps the recorded address modulo 16, so every payload stays 16-byte aligned
    const at = this.arenaStart + ((image.origin - this.arenaStart) & 15);
    const used = at + size - this.arenaStart;
    this.arenaStart += used;
    this.arenaFree -= used;
    this.u8.set(image.bytes, at);
    const delta = at - image.origin;
    const v = this.view;
    for (const slot of image.pointerSlots) {
      const target = v.getUint32(at + slot, true);
      if (target !== 0) v.setUint32(at + slot, target + delta, true);
    }
    return at + image.root;
  }

  /** Writes a BigInt as graph-ts holds it (minimal two's-complement little-endian bytes). */
  writeBigInt(n: bigint): number {
    if (n >= -0x800000000000n && n < 0x800000000000n) {
      // up to 6 bytes: computed with doubles, written straight into the new buffer
      const v = Number(n);
      let length = 1;
      while (length < 6 && (v >= SIGNED_LIMITS[length]! || v < -SIGNED_LIMITS[length]!)) length++;
      const buffer = this.newObject('ArrayBuffer', length);
      let rest = v < 0 ? v + 2 * SIGNED_LIMITS[length]! : v;
      for (let i = 0; i < length; i++) {
        this.u8[buffer + i] = rest % 256;
        rest = Math.floor(rest / 256);
      }
      return this.typedArray(buffer, length);
    }
    return this.writeBytes(bigintToSignedLE(n));
  }

  /** Writes 0x-prefixed (or bare) hex as a Uint8Array object without an intermediate copy. */
  writeHexBytes(hex: string): number {
    const digits = hex.length >= 2 && hex.charCodeAt(1) === 120 ? 2 : 0; // "0x"
    const length = (hex.length - digits) >>> 1;
    const buffer = this.newObject('ArrayBuffer', length);
    const written = this.buf.write(digits === 0 ? hex : hex.slice(2), buffer, length, 'hex');
    if (written !== length) throw new Error(`invalid hex bytes: ${hex}`);
    return this.typedArray(buffer, length);
  }

  /** The Uint8Array object viewing `byteLength` bytes of the ArrayBuffer at `buffer`. */
  private typedArray(buffer: number, byteLength: number): number {
    const ptr = this.newObject('Uint8Array', 12);
    this.setPtr(ptr, buffer);
    this.setPtr(ptr + 4, buffer);
    this.view.setUint32(ptr + 8, byteLength, true);
    return ptr;
  }

  setU32(ptr: number, value: number): void {
    this.view.setUint32(ptr, value, true);
  }

  setI64(ptr: number, value: bigint): void {
    this.view.setBigInt64(ptr, value, true);
  }

  setU8(ptr: number, value: number): void {
    this.u8[ptr] = value;
  }

  writeString(s: string): number {
    const ptr = this.newObject('String', s.length * 2);
    this.buf.write(s, ptr, s.length * 2, 'utf16le'); // code units as they are, lone surrogates too
    return ptr;
  }

  /** A Uint8Array object (graph-ts Bytes, Address and BigInt share this layout and class id). */
  writeBytes(bytes: Uint8Array): number {
    const buffer = this.newObject('ArrayBuffer', bytes.length);
    this.u8.set(bytes, buffer);
    return this.typedArray(buffer, bytes.length);
  }

  /** An Array<T> of 4-byte elements (pointers or bools widened by the caller). */
  writeArrayU32(type: TypeIdName, values: readonly number[]): number {
    if (this.recording !== null) throw new Error('an array cannot be part of an image');
    const byteLength = values.length * 4;
    const buffer = this.newObject('ArrayBuffer', byteLength);
    for (let i = 0; i < values.length; i++) this.view.setUint32(buffer + i * 4, values[i] as number, true);
    const ptr = this.newObject(type, 16);
    const v = this.view; // after the last allocation, which may have grown memory
    v.setUint32(ptr, buffer, true);
    v.setUint32(ptr + 4, buffer, true);
    v.setUint32(ptr + 8, byteLength, true);
    v.setInt32(ptr + 12, values.length, true);
    return ptr;
  }
}
