// Reads and writes AssemblyScript 0.19 objects in a mapping instance's linear memory, the way
// graph-node does for apiVersion >= 0.0.5: every object has a 20-byte header (mmInfo, gcInfo,
// gcInfo2, rtId, rtSize) before its payload; strings are UTF-16LE; a Uint8Array is
// (buffer, dataStart, byteLength); an Array<T> is (buffer, dataStart, byteLength, length).
// Memory for host-created objects comes from large chunks obtained through the module's exported
// `allocate` and is handed out by a bump pointer (the stub runtime never frees anyway).
import { HEADER_SIZE, TypeId, type TypeIdName } from './asc-types.ts';

/** The exports of a graph-ts mapping module that the host relies on. */
export interface MappingExports {
  memory: WebAssembly.Memory;
  allocate(size: number): number;
  id_of_type(typeId: number): number;
}

/** Smallest chunk requested from the module's allocator, as graph-node does. */
const MIN_ARENA_SIZE = 10_000;

const typeIdNames = Object.keys(TypeId) as TypeIdName[];

export class AscHeap {
  private u8: Uint8Array;
  private view: DataView;
  private arenaStart = 0;
  private arenaFree = 0;
  private readonly classIds = new Map<TypeIdName, number>();
  private readonly utf16 = new TextDecoder('utf-16le');

  constructor(private readonly exports: MappingExports) {
    this.u8 = new Uint8Array(exports.memory.buffer);
    this.view = new DataView(exports.memory.buffer);
    for (const name of typeIdNames) this.classIds.set(name, exports.id_of_type(TypeId[name]) >>> 0);
  }

  /** Re-reads the memory's buffer after the memory grew (growing detaches the previous buffer). */
  private refresh(): void {
    if (this.u8.length === 0) {
      this.u8 = new Uint8Array(this.exports.memory.buffer);
      this.view = new DataView(this.exports.memory.buffer);
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
    if (byteLength <= 64) {
      let s = '';
      for (let i = 0; i < byteLength; i += 2) s += String.fromCharCode(this.view.getUint16(ptr + i, true));
      return s;
    }
    return this.utf16.decode(this.u8.subarray(ptr, ptr + byteLength));
  }

  readNullableString(ptr: number): string | null {
    return ptr === 0 ? null : this.readString(ptr);
  }

  /** A copy of the bytes of a TypedArray (Uint8Array, Bytes, Address, BigInt). */
  readBytes(ptr: number): Uint8Array {
    const buffer = this.u32(ptr);
    const dataStart = this.u32(ptr + 4);
    const byteLength = this.u32(ptr + 8);
    if (buffer === 0) this.checkPtr(0, 0);
    if (dataStart < buffer) throw new Error(`Subtract overflow on pointer: ${dataStart}`);
    this.checkPtr(dataStart, byteLength);
    return this.u8.slice(dataStart, dataStart + byteLength);
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

  /** Allocates an object of the class `type` with `size` payload bytes and returns its payload pointer. */
  newObject(type: TypeIdName, size: number): number {
    // Payload padded to 16 bytes as AssemblyScript keeps every allocation 16-byte aligned.
    const padded = (size + 15) & ~15;
    const total = HEADER_SIZE + padded + 15;
    if (total > this.arenaFree) {
      const arenaSize = Math.max(total, MIN_ARENA_SIZE);
      // `allocate` returns the payload of an untyped block whose 4-byte mmInfo precedes it;
      // +12 keeps our 20-byte headers ending on a 16-byte boundary, as graph-node does.
      const start = this.exports.allocate(arenaSize);
      this.arenaStart = start + 12;
      this.arenaFree = arenaSize - 12;
    }
    this.refresh();
    // Place the payload on a 16-byte boundary.
    const payload = (this.arenaStart + HEADER_SIZE + 15) & ~15;
    const header = payload - HEADER_SIZE;
    const used = payload + padded - this.arenaStart;
    this.arenaStart += used;
    this.arenaFree -= used;
    const v = this.view;
    v.setUint32(header, 16 + padded, true); // mmInfo: bytes after itself
    v.setUint32(header + 4, 0, true); // gcInfo
    v.setUint32(header + 8, 0, true); // gcInfo2
    v.setUint32(header + 12, this.classIds.get(type) as number, true); // rtId
    v.setUint32(header + 16, size, true); // rtSize
    this.u8.fill(0, payload, payload + padded);
    return payload;
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
    const v = this.view;
    for (let i = 0; i < s.length; i++) v.setUint16(ptr + i * 2, s.charCodeAt(i), true);
    return ptr;
  }

  /** A Uint8Array object (graph-ts Bytes, Address and BigInt share this layout and class id). */
  writeBytes(bytes: Uint8Array): number {
    const buffer = this.newObject('ArrayBuffer', bytes.length);
    this.u8.set(bytes, buffer);
    const ptr = this.newObject('Uint8Array', 12);
    const v = this.view;
    v.setUint32(ptr, buffer, true);
    v.setUint32(ptr + 4, buffer, true);
    v.setUint32(ptr + 8, bytes.length, true);
    return ptr;
  }

  /** An Array<T> of 4-byte elements (pointers or bools widened by the caller). */
  writeArrayU32(type: TypeIdName, values: readonly number[]): number {
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
