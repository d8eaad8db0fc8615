// ABI decoding with graph-node's strings. graph-node decodes ABI values with alloy, which reads a
// string's bytes with String::from_utf8_lossy (alloy-sol-types' sol_data::String::detokenize):
// invalid UTF-8 becomes U+FFFD and nothing is dropped, so a leading byte-order mark and NUL bytes
// anywhere reach the mapping as they were sent. viem's decodeAbiParameters reads a string with
// bytesToString(trim(data)), which trims leading NUL bytes and, through TextDecoder's default,
// drops a leading BOM. Strings are therefore decoded here as `bytes` (their encoding is the same)
// and read with a shared decoder that keeps the BOM.
import { decodeAbiParameters, type AbiParameter, type Hex } from 'viem';

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Bytes read as Rust's String::from_utf8_lossy reads them: invalid sequences as U+FFFD, nothing dropped. */
export function utf8Lossy(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}

/** `0x` hex read as lossy UTF-8. */
function hexToUtf8Lossy(hex: string): string {
  return hex.length === 2 ? '' : utf8.decode(Buffer.from(hex.slice(2), 'hex'));
}

/** The parameter with every `string` (nested ones included) read as `bytes`. */
function stringsAsBytes(param: AbiParameter): AbiParameter {
  const type = param.type.replace(/^string(?=$|\[)/, 'bytes');
  if ('components' in param && param.components) {
    return { ...param, type, components: param.components.map(stringsAsBytes) } as AbiParameter;
  }
  return type === param.type ? param : { ...param, type };
}

type Convert = (value: unknown) => unknown;

const arrayType = /^(.*)\[\d*\]$/;

/**
 * What turns the value viem decoded for `stringsAsBytes(param)` into the value of `param`: its
 * strings' hex read as lossy UTF-8, arrays and tuples (arrays, or objects keyed by component name)
 * rebuilt around them. Null when `param` holds no string.
 */
function stringConverter(param: AbiParameter): Convert | null {
  const array = arrayType.exec(param.type);
  if (array) {
    const element = stringConverter({ ...param, type: array[1] as string } as AbiParameter);
    return element && ((value) => (value as readonly unknown[]).map(element));
  }
  if (param.type === 'string') return (value) => hexToUtf8Lossy(value as string);
  if (!('components' in param) || !param.components) return null;
  const parts = param.components.map((component, index) => ({
    index,
    key: component.name ?? '',
    convert: stringConverter(component),
  }));
  const converted = parts.filter((p) => p.convert !== null) as {
    index: number;
    key: string;
    convert: Convert;
  }[];
  if (converted.length === 0) return null;
  return (value) => {
    if (Array.isArray(value)) {
      const out = [...(value as unknown[])];
      for (const p of converted) out[p.index] = p.convert(out[p.index]);
      return out;
    }
    const out = { ...(value as Record<string, unknown>) };
    for (const p of converted) out[p.key] = p.convert(out[p.key]);
    return out;
  };
}

/** Decodes ABI data as a list of values of `params`; throws when it does not decode. */
type AbiDecoder = (data: Hex) => unknown[];

/**
 * A decoder of `params` with graph-node's strings, built once: what holds no string is decoded by
 * viem as it is, the rest with its strings read as bytes and converted back.
 */
export function abiDecoder(params: readonly AbiParameter[]): AbiDecoder {
  const converters = params.map(stringConverter);
  if (converters.every((c) => c === null)) {
    return (data) => decodeAbiParameters(params, data) as unknown[];
  }
  const asBytes = params.map(stringsAsBytes);
  return (data) => {
    // viem returns a new array on every call: convert in place
    const values = decodeAbiParameters(asBytes, data) as unknown[];
    for (let i = 0; i < converters.length; i++) {
      const convert = converters[i];
      if (convert) values[i] = convert(values[i]);
    }
    return values;
  };
}

/** Decoders by the parameter list they decode (a function's inputs or outputs, fixed for its ABI). */
const decoders = new WeakMap<readonly AbiParameter[], AbiDecoder>();

/** decodeAbiParameters with graph-node's strings, its decoder kept for the next call with `params`. */
export function decodeAbi(params: readonly AbiParameter[], data: Hex): unknown[] {
  let decoder = decoders.get(params);
  if (!decoder) {
    decoder = abiDecoder(params);
    decoders.set(params, decoder);
  }
  return decoder(data);
}
