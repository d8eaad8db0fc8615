// ABI decoding with graph-node's (alloy's) rules where viem's differ. graph-node decodes with
// alloy-dyn-abi, which checks no word (DynSolType::detokenize): an intN is its whole word read as
// an int256 (the word 0x…80 is 128 as an int8, not -128), a uintN its whole word, a bool any
// nonzero word (viem throws on a word other than 0 or 1). A string's bytes are read with
// String::from_utf8_lossy (alloy-sol-types' sol_data::String::detokenize): invalid UTF-8 becomes
// U+FFFD and nothing is dropped, so a leading byte-order mark and NUL bytes anywhere reach the
// mapping as they were sent, where viem's bytesToString(trim(data)) trims leading NUL bytes and,
// through TextDecoder's default, drops a leading BOM. So viem decodes each parameter as a type
// encoded alike that it reads as alloy does (intN as int256, uintN as uint256 — viem reads those of
// 48 bits or fewer into a Number, lossy past 2^53 —, bool as uint256, string as bytes), and the
// values are converted back.
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

type Convert = (value: unknown) => unknown;

/** How viem decodes a parameter: as `readAs`, the value then made the parameter's by `convert`. */
interface DecodingPlan {
  /** the parameter itself when viem reads it as alloy does */
  readAs: AbiParameter;
  /** null when viem's value for `readAs` is the parameter's already */
  convert: Convert | null;
}

const arrayType = /^(.*)(\[\d*\])$/;
const signedType = /^int\d*$/;
const unsignedType = /^uint\d*$/;

/** A scalar's plan: the word type viem reads as alloy does, and the conversion back. */
function scalarPlan(param: AbiParameter): DecodingPlan {
  const retyped = (type: string, convert: Convert | null = null): DecodingPlan => ({
    readAs: { ...param, type } as AbiParameter,
    convert,
  });
  if (param.type === 'string') return retyped('bytes', (value) => hexToUtf8Lossy(value as string));
  if (param.type === 'bool') return retyped('uint256', (value) => value !== 0n);
  if (signedType.test(param.type) && param.type !== 'int256') return retyped('int256');
  if (unsignedType.test(param.type) && param.type !== 'uint256') return retyped('uint256');
  return { readAs: param, convert: null };
}

function decodingPlan(param: AbiParameter): DecodingPlan {
  const array = arrayType.exec(param.type);
  if (array) {
    const elementParam = { ...param, type: array[1] as string } as AbiParameter;
    const element = decodingPlan(elementParam);
    if (element.readAs === elementParam) return { readAs: param, convert: null };
    const convertElement = element.convert;
    return {
      readAs: { ...element.readAs, type: `${element.readAs.type}${array[2]}` } as AbiParameter,
      convert: convertElement && ((value) => (value as readonly unknown[]).map(convertElement)),
    };
  }
  if (param.type !== 'tuple' || !('components' in param)) return scalarPlan(param);
  const plans = param.components.map(decodingPlan);
  if (plans.every((plan, i) => plan.readAs === param.components[i])) return { readAs: param, convert: null };
  const readAs = { ...param, components: plans.map((plan) => plan.readAs) } as AbiParameter;
  // viem gives a tuple as an array, or as an object keyed by component name when all are named
  const converted = plans.flatMap((plan, index) =>
    plan.convert ? [{ index, key: param.components[index]!.name ?? '', convert: plan.convert }] : [],
  );
  if (converted.length === 0) return { readAs, convert: null };
  return {
    readAs,
    convert: (value) => {
      if (Array.isArray(value)) {
        const out = [...(value as unknown[])];
        for (const c of converted) out[c.index] = c.convert(out[c.index]);
        return out;
      }
      const out = { ...(value as Record<string, unknown>) };
      for (const c of converted) out[c.key] = c.convert(out[c.key]);
      return out;
    },
  };
}

/**
 * `params` with every intN and uintN (in arrays and tuples too) widened to its 256-bit type: what
 * viem encodes a value of `params` as which alloy would encode alike. Sign-extended, the words of
 * values within a type's range are the same; a value outside it, an int8 read from the word 0x…80
 * (128), is encoded as alloy encodes it, its whole word, where viem's own check would refuse it.
 */
export function wordWideParams(params: readonly AbiParameter[]): AbiParameter[] {
  return params.map(wordWideParam);
}

function wordWideParam(param: AbiParameter): AbiParameter {
  const array = arrayType.exec(param.type);
  if (array) {
    const element = wordWideParam({ ...param, type: array[1] as string } as AbiParameter);
    return { ...element, type: `${element.type}${array[2]}` } as AbiParameter;
  }
  if (param.type === 'tuple' && 'components' in param) {
    return { ...param, components: wordWideParams(param.components) } as AbiParameter;
  }
  if (signedType.test(param.type)) return { ...param, type: 'int256' } as AbiParameter;
  if (unsignedType.test(param.type)) return { ...param, type: 'uint256' } as AbiParameter;
  return param;
}

/** Decodes ABI data as a list of values of `params`; throws when it does not decode. */
type AbiDecoder = (data: Hex) => unknown[];

/**
 * A decoder of `params` with graph-node's rules, built once: what viem reads as alloy does is
 * decoded as it is, the rest as its plan says and converted back.
 */
export function abiDecoder(params: readonly AbiParameter[]): AbiDecoder {
  const plans = params.map(decodingPlan);
  if (plans.every((plan, i) => plan.readAs === params[i])) {
    return (data) => decodeAbiParameters(params, data) as unknown[];
  }
  const readAs = plans.map((plan) => plan.readAs);
  return (data) => {
    // viem returns a new array on every call: convert in place
    const values = decodeAbiParameters(readAs, data) as unknown[];
    plans.forEach((plan, i) => {
      if (plan.convert) values[i] = plan.convert(values[i]);
    });
    return values;
  };
}

/** Decoders by the parameter list they decode (a function's inputs or outputs, fixed for its ABI). */
const decoders = new WeakMap<readonly AbiParameter[], AbiDecoder>();

/** decodeAbiParameters with graph-node's rules, its decoder kept for the next call with `params`. */
export function decodeAbi(params: readonly AbiParameter[], data: Hex): unknown[] {
  let decoder = decoders.get(params);
  if (!decoder) {
    decoder = abiDecoder(params);
    decoders.set(params, decoder);
  }
  return decoder(data);
}
