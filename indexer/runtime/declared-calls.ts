// Declared eth calls (specVersion >= 1.2.0). An event handler's `calls:` names the contract reads its
// handler will make, each as `Contract[address].function(arg, ...)`, where the address and the
// arguments are `event.address`, `event.params.<name>` (from specVersion 1.4.0 also a struct field,
// `event.params.<name>.<field or index>...`) or a hex address. The follower makes the declared
// calls of a range's logs with the range (ChainSource.ethCalls), and before a block's handlers run
// the block processor makes those still missing in one batch at the block
// (ChainReader.prefetchCalls), so each ethereum.call a handler makes of the same read is answered
// without a round trip of its own, as graph-node's DecoderHook fills its call cache. Declarations
// change no result: a read not declared, or declared differently, is made when the handler asks.
//
// Expressions are parsed with graph-node's rules and messages (CallExpr::parse and
// CallArg::parse_with_abi in graph/src/data_source/common.rs). What graph-node finds wrong only
// when a trigger comes (an unknown parameter, a parameter that is not an address, arguments the
// function's types refuse) depends on the manifest and its ABIs alone, so it is refused at load.
import {
  encodeAbiParameters,
  toFunctionSelector,
  type Abi,
  type AbiEvent,
  type AbiFunction,
  type AbiParameter,
  type Hex,
  type Log,
} from 'viem';
import { wordWideParams } from './abi-decode.ts';
import type { EventParameter } from './event-decoder.ts';

/** Where an address or argument of a declared call comes from. */
type CallArg =
  | { kind: 'literal'; address: Hex }
  | { kind: 'eventAddress' }
  /** the event parameter at `index`, then the tuple components along `path`; `convert` makes the value encodable */
  | { kind: 'param'; index: number; path: readonly StructStep[]; convert: (value: unknown) => unknown };

interface StructStep {
  index: number;
  /** viem decodes a tuple whose components all have names as an object */
  name: string | undefined;
}

export interface DeclaredCall {
  label: string;
  fn: AbiFunction;
  /** fn's inputs as its arguments are encoded (abi-decode.ts wordWideParams) */
  encodedInputs: readonly AbiParameter[];
  selector: Hex;
  address: CallArg;
  args: readonly CallArg[];
}

/** How an eth_call is told apart from the others made at the same block. */
export const callKey = (to: Hex, data: Hex): string => `${to.toLowerCase()}${data.slice(2).toLowerCase()}`;

/** An eth_call a declared call makes for one log. */
export interface CallRequest {
  label: string;
  to: Hex;
  data: Hex;
}

export interface DeclaredCallContext {
  /** e.g. `data source X: handler y` */
  where: string;
  /** the manifest's specVersion */
  specVersion: string;
  /** whether it allows struct fields as arguments (1.4.0 or later) */
  structFields: boolean;
  /** the ABI event the handler's logs decode as */
  event: AbiEvent;
  /** the parameters as the handler gets them: indexed dynamic ones are their 32-byte topic */
  params: readonly AbiParameter[];
  abis: ReadonlyMap<string, Abi>;
}

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ARRAY_TYPE = /^(.*)\[(\d*)\]$/;

function components(param: AbiParameter): readonly AbiParameter[] {
  return 'components' in param ? param.components : [];
}

/**
 * A function making a decoded value of type `from` into what viem encodes as type `to`, or null when
 * graph-node's type_check refuses `from` where `to` is wanted: integers and fixed bytes may be
 * narrower than `to` (fixed bytes are then padded on the right), everything else must match.
 */
function converter(from: AbiParameter, to: AbiParameter): ((value: unknown) => unknown) | null {
  const fromArray = ARRAY_TYPE.exec(from.type);
  const toArray = ARRAY_TYPE.exec(to.type);
  if (fromArray || toArray) {
    if (!fromArray || !toArray || fromArray[2] !== toArray[2]) return null;
    const element = converter(
      { ...from, type: fromArray[1]! } as AbiParameter,
      { ...to, type: toArray[1]! } as AbiParameter,
    );
    return element && ((value) => (value as unknown[]).map(element));
  }
  if (from.type === 'tuple' || to.type === 'tuple') {
    const have = components(from);
    const want = components(to);
    if (from.type !== to.type || have.length !== want.length) return null;
    const fields = have.map((c, i) => converter(c, want[i]!));
    if (fields.some((f) => f === null)) return null;
    return (value) =>
      have.map((c, i) =>
        fields[i]!(Array.isArray(value) ? value[i] : (value as Record<string, unknown>)[c.name ?? '']),
      );
  }
  const width = (type: string, kind: 'uint' | 'int' | 'bytes') => {
    const match = new RegExp(`^${kind}(\\d*)$`).exec(type);
    return match ? Number(match[1] || (kind === 'bytes' ? NaN : 256)) : NaN;
  };
  for (const kind of ['uint', 'int'] as const) {
    if (
      from.type.startsWith(kind) &&
      to.type.startsWith(kind) &&
      width(from.type, kind) <= width(to.type, kind)
    )
      return (value) => value;
  }
  const fromBytes = width(from.type, 'bytes');
  const toBytes = width(to.type, 'bytes');
  if (fromBytes <= toBytes) return (value) => (value as string).padEnd(2 + 2 * toBytes, '0');
  if (from.type !== to.type || !['address', 'bool', 'string', 'bytes'].includes(from.type)) return null;
  // the event decoder reads addresses as the uint160 of their word
  if (from.type === 'address') return asAddress;
  return (value) => value;
}

function asAddress(value: unknown): Hex {
  return (
    typeof value === 'bigint' ? `0x${value.toString(16).padStart(40, '0')}` : (value as string).toLowerCase()
  ) as Hex;
}

/**
 * `event.params.<name>[.<field>...]`: the parameter's index and the struct path, resolved against
 * the event's ABI with graph-node's rules (fields by name or index, tuples only); the type at its end.
 */
function resolveParam(
  context: DeclaredCallContext,
  name: string,
  fields: readonly string[],
): { index: number; path: StructStep[]; type: AbiParameter } {
  const index = context.params.findIndex((p) => (p.name ?? '') === name);
  if (fields.length === 0) {
    if (index < 0) throw new Error(`unknown param ${name}`);
    return { index, path: [], type: context.params[index]! };
  }
  const signature = `${context.event.name}(${context.event.inputs.map((i) => i.type).join(',')})`;
  const input = context.event.inputs[index];
  if (!input || input.type !== 'tuple')
    throw new Error(
      `Cannot resolve field path 'event.params.${[name, ...fields].join('.')}' for event '${signature}'`,
    );
  if (input.indexed)
    throw new Error(
      `event.params.${name} is indexed: the log holds only the hash of the struct, not its fields`,
    );
  const path: StructStep[] = [];
  let type: AbiParameter = input;
  for (const [step, field] of fields.entries()) {
    const level = components(type);
    if (step > 0 && type.type !== 'tuple') {
      throw new Error(
        `Field '${fields[step - 1]}' is not a struct (type: ${type.type}), cannot access nested field '${field}'`,
      );
    }
    const at = /^\d+$/.test(field) ? Number(field) : level.findIndex((c) => c.name === field);
    if (at < 0) {
      const available = level.flatMap((c) => (c.name ? [`"${c.name}"`] : []));
      throw new Error(`Field '${field}' not found. Available fields: [${available.join(', ')}]`);
    }
    if (at >= level.length)
      throw new Error(`Index ${at} out of bounds for struct with ${level.length} fields`);
    const named = level.every((c) => c.name);
    path.push({ index: at, name: named ? level[at]!.name : undefined });
    type = level[at]!;
  }
  return { index, path, type };
}

/** One address or argument, in an event handler's context; `want` is the type it must be. */
function parseArg(context: DeclaredCallContext, text: string, want: AbiParameter): CallArg {
  const mismatch = (have: string) =>
    new Error(`\`${text}\` is of type ${have}, where ${want.type} is needed`);
  if (HEX_ADDRESS.test(text)) {
    if (want.type !== 'address') throw mismatch('address');
    return { kind: 'literal', address: text.toLowerCase() as Hex };
  }
  if (text.startsWith('entity.'))
    throw new Error("'entity.*' expressions not allowed in event handler context");
  if (!text.startsWith('event.'))
    throw new Error("In event handler context, only 'event.*' expressions and hex addresses are allowed");
  const parts = text.split('.');
  if (parts.length === 2 && parts[1] === 'address') {
    if (want.type !== 'address') throw mismatch('address');
    return { kind: 'eventAddress' };
  }
  if (parts.length < 3 || parts[1] !== 'params') throw new Error(`invalid call argument \`${text}\``);
  const name = parts[2]!;
  const fields = parts.slice(3);
  if (fields.length > 0 && !context.structFields) {
    throw new Error(
      `Struct field access 'event.params.${name}.*' in declarative calls is only supported for specVersion >= 1.4.0, current version is ${context.specVersion}. Event: '${context.event.name}'`,
    );
  }
  const { index, path, type } = resolveParam(context, name, fields);
  const convert = converter(type, want);
  if (!convert) throw mismatch(type.type);
  return { kind: 'param', index, path, convert };
}

/**
 * `Contract[address].function(args)` split as graph-node splits it: the first `[` and `]`, the
 * first `.` after them, the first `(` after that, the last `)`; arguments split at commas.
 */
function splitExpression(s: string): { contract: string; address: string; fn: string; args: string[] } {
  const invalid = (why: string) => new Error(`Invalid call expression '${s}': ${why}`);
  const open = s.indexOf('[');
  if (open < 0) throw invalid("missing '[' after contract name");
  const contract = s.slice(0, open).trim();
  if (contract === '') throw invalid("missing contract name before '['");
  const close = s.indexOf(']', open);
  if (close < 0) throw invalid("missing ']' to close address");
  const address = s.slice(open + 1, close);
  if (address === '') throw invalid(`empty address in '${contract}[${address}]'`);
  const dot = s.indexOf('.', close);
  if (dot < 0) throw invalid(`missing '.' after address '${contract}[${address}]'`);
  const paren = s.indexOf('(', dot + 1);
  if (paren < 0) throw invalid("missing '(' to start function arguments");
  const fn = s.slice(dot + 1, paren);
  if (fn === '') throw invalid(`missing function name after '${contract}[${address}].'`);
  const end = s.lastIndexOf(')');
  if (end < paren) throw invalid("missing ')' to close function arguments");
  const args = s.slice(paren + 1, end);
  return { contract, address, fn, args: args.trim() === '' ? [] : args.split(',').map((a) => a.trim()) };
}

function parseDeclaredCall(context: DeclaredCallContext, label: string, expression: string): DeclaredCall {
  const { contract, address, fn: name, args } = splitExpression(expression);
  const abi = context.abis.get(contract);
  if (!abi) throw new Error(`No ABI entry with name \`${contract}\` found`);
  // graph-node takes the first function of the name (overloads are not told apart)
  const fn = abi.find((item): item is AbiFunction => item.type === 'function' && item.name === name);
  if (!fn) throw new Error(`Unknown function "${contract}::${name}" called from WASM runtime`);
  const at = (what: string, parse: () => CallArg) => {
    try {
      return parse();
    } catch (error) {
      throw new Error(
        `Failed to parse ${what} in call expression '${expression}': ${(error as Error).message}`,
      );
    }
  };
  const target = at(`address '${address}'`, () => parseArg(context, address, { type: 'address' }));
  if (args.length !== fn.inputs.length)
    throw new Error(
      `${contract}.${name} takes ${fn.inputs.length} arguments, the expression gives ${args.length}`,
    );
  return {
    label,
    fn,
    encodedInputs: wordWideParams(fn.inputs),
    selector: toFunctionSelector(fn),
    address: target,
    args: args.map((arg, i) => at(`argument ${i + 1} '${arg}'`, () => parseArg(context, arg, fn.inputs[i]!))),
  };
}

/** An event handler's `calls:` (a mapping of labels to expressions), checked against its ABIs. */
export function parseDeclaredCalls(context: DeclaredCallContext, raw: unknown): DeclaredCall[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`${context.where}: calls must map labels to call expressions`);
  return Object.entries(raw as Record<string, unknown>).map(([label, expression]) => {
    try {
      if (typeof expression !== 'string') throw new Error('the call expression must be a string');
      return parseDeclaredCall(context, label, expression);
    } catch (error) {
      throw new Error(`${context.where}: declared call '${label}': ${(error as Error).message}`);
    }
  });
}

function argValue(arg: CallArg, log: Log, params: readonly EventParameter[]): unknown {
  if (arg.kind === 'literal') return arg.address;
  if (arg.kind === 'eventAddress') return log.address.toLowerCase();
  let value = params[arg.index]!.value;
  for (const step of arg.path) {
    value = Array.isArray(value)
      ? value[step.index]
      : (value as Record<string, unknown>)[step.name ?? String(step.index)];
  }
  return arg.convert(value);
}

/** The eth_calls `calls` make for a log whose parameters decoded as `params`. */
export function callRequests(
  calls: readonly DeclaredCall[],
  log: Log,
  params: readonly EventParameter[],
): CallRequest[] {
  return calls.map((call) => ({
    label: call.label,
    to: argValue(call.address, log, params) as Hex,
    data: (call.selector +
      encodeAbiParameters(
        call.encodedInputs,
        call.args.map((arg) => argValue(arg, log, params)),
      ).slice(2)) as Hex,
  }));
}
