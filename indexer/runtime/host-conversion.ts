// typeConversion.* for bytes and strings, and crypto.keccak256, with graph-node's behaviour:
// bytesToString decodes UTF-8 lossily (a leading byte-order mark kept) and drops trailing NUL
// padding only, bytesToHex always has a 0x prefix, stringToH160 accepts 40 hex digits with or
// without 0x, bytesToBase58 uses Bitcoin's alphabet.
import { keccak256 } from 'viem';
import { utf8Lossy } from './abi-decode.ts';
import type { HostFunctions } from './host-context.ts';

/** graph-node's bytes_to_string: String::from_utf8_lossy, then trim_end_matches('\u{0000}'). */
export function bytesToString(bytes: Uint8Array): string {
  const s = utf8Lossy(bytes);
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0) end--;
  return s.slice(0, end);
}

export function stringToH160(s: string): Uint8Array {
  const hex = s.startsWith('0x') ? s.slice(2) : s;
  if (!/^[0-9a-fA-F]{40}$/.test(hex)) throw new Error(`Failed to convert string to Address: '${s}'`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

const base58Alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function bytesToBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = base58Alphabet[Number(n % 58n)] + out;
    n /= 58n;
  }
  return '1'.repeat(zeros) + out;
}

export const conversionFunctions: HostFunctions = {
  'typeConversion.bytesToString': (env) => (ptr: number) =>
    env.heap.writeString(bytesToString(env.heap.readBytes(ptr))),
  'typeConversion.bytesToHex': (env) => (ptr: number) => env.heap.writeString(env.heap.readHex(ptr)),
  'typeConversion.stringToH160': (env) => (ptr: number) =>
    env.heap.writeBytes(stringToH160(env.heap.readString(ptr))),
  'typeConversion.bytesToBase58': (env) => (ptr: number) =>
    env.heap.writeString(bytesToBase58(env.heap.readBytes(ptr))),
  'crypto.keccak256': (env) => (ptr: number) =>
    env.heap.writeBytes(keccak256(env.heap.readBytes(ptr), 'bytes')),
};
