// ethereum.* host functions. call, getBalance and hasCode read contract state at the handler's
// block through the runtime's ChainReader, with graph-node's rules (chain/ethereum/src/runtime/
// runtime_adapter.rs): the ABI is found by contract name among the mapping's ABIs and the function
// by its signature `name(inputs):(outputs)`; arguments must fit the function's input types; a call
// that reverted, answered nothing or answered what does not decode returns null (graph-ts makes that
// `try_x` reverted, and `x` abort). encode and decode are ABI encoding of one value, with no chain.
// Strings decode as graph-node's (alloy's) do, lossy UTF-8 with nothing trimmed (abi-decode.ts).
import {
  encodeAbiParameters,
  parseAbiParameter,
  toFunctionSelector,
  type AbiFunction,
  type AbiParameter,
  type Hex,
} from 'viem';
import { abiDecoder, decodeAbi } from './abi-decode.ts';
import type { AscHeap } from './asc-memory.ts';
import type { ChainReader, HostEnv, HostFunctions } from './host-context.ts';
import { readEthereumValue, tokenAbiParameter, tokenToAbiValue, valueWriter } from './ethereum-value.ts';
import { versionAtLeast, formatParameterType } from './manifest.ts';

/** graph-node's signature_compat: `name(inputs)`, then `:(outputs)` when there are outputs. */
export function compatSignature(fn: AbiFunction): string {
  const inputs = `${fn.name}(${fn.inputs.map(formatParameterType).join(',')})`;
  return fn.outputs.length === 0 ? inputs : `${inputs}:(${fn.outputs.map(formatParameterType).join(',')})`;
}

function findFunction(env: HostEnv, contract: string, name: string, signature: string): AbiFunction {
  const abi = env.dataSource.mapping.abis.get(contract);
  if (!abi) {
    throw new Error(
      `Could not find ABI for contract "${contract}", try adding it to the 'abis' section of the subgraph manifest`,
    );
  }
  const named = abi.filter((item): item is AbiFunction => item.type === 'function' && item.name === name);
  if (named.length === 0) throw new Error(`Unknown function "${contract}::${name}" called from WASM runtime`);
  const fn = named.find((f) => compatSignature(f) === signature);
  if (!fn) {
    throw new Error(
      `Unknown function "${contract}::${name}" with signature \`${signature}\` called from WASM runtime`,
    );
  }
  return fn;
}

function chainOf(env: HostEnv, what: string): ChainReader {
  const chain = env.runtime.chain;
  if (!chain) throw new Error(`${what} reads the chain, and this runtime was started without one`);
  return chain;
}

/** getBalance and hasCode exist from apiVersion 0.0.9, as in graph-node. */
function requireApiVersion009(env: HostEnv, what: string): void {
  if (!versionAtLeast(env.dataSource.mapping.apiVersion, '0.0.9'))
    throw new Error(`${what} call is not supported before API version 0.0.9`);
}

function readAddress(heap: AscHeap, ptr: number): Hex {
  const hex = heap.readHex(ptr) as Hex;
  if (hex.length !== 42) throw new Error(`an address must be 20 bytes, got ${(hex.length - 2) / 2}`);
  return hex;
}

/** An Array<ethereum.Value> of decoded values of `params`. */
function writeValues(heap: AscHeap, params: readonly AbiParameter[], values: readonly unknown[]): number {
  return heap.writeArrayU32(
    'ArrayEthereumValue',
    params.map((p, i) => valueWriter(p)(heap, values[i])),
  );
}

/** ethereum.call(SmartContractCall): Array<ethereum.Value> | null (null: reverted). */
function call(env: HostEnv, ptr: number): number {
  const heap = env.heap;
  // SmartContractCall (apiVersion >= 0.0.4): contractName, contractAddress, functionName,
  // functionSignature, functionParams
  const contract = heap.readString(heap.u32(ptr));
  const address = readAddress(heap, heap.u32(ptr + 4));
  const name = heap.readString(heap.u32(ptr + 8));
  const signature = heap.readString(heap.u32(ptr + 12));
  const tokens = heap.readArrayU32(heap.u32(ptr + 16)).map((p) => readEthereumValue(heap, p));
  const fn = findFunction(env, contract, name, signature);
  const failed = (reason: string) =>
    new Error(`Failed to call function "${name}" of contract "${contract}": ${reason}`);
  if (tokens.length !== fn.inputs.length)
    throw failed(`${fn.inputs.length} arguments expected, ${tokens.length} given`);
  let args: unknown[];
  try {
    args = tokens.map((t, i) => tokenToAbiValue(t, fn.inputs[i]!));
  } catch (error) {
    throw failed((error as Error).message);
  }
  const data = (toFunctionSelector(fn) + encodeAbiParameters(fn.inputs, args).slice(2)) as Hex;
  const output = chainOf(env, 'ethereum.call').call(address, data, env.block.hash);
  // graph-node: an empty answer is a revert too (a view function returns something)
  if (output === null || output === '0x') return 0;
  let values: readonly unknown[];
  try {
    values = decodeAbi(fn.outputs, output);
  } catch {
    return 0; // what does not decode is treated as a revert, as Solidity treats bad input
  }
  return writeValues(heap, fn.outputs, values);
}

export const ethereumFunctions: HostFunctions = {
  'ethereum.call': (env) => (ptr: number) => call(env, ptr),
  'ethereum.getBalance': (env) => (addressPtr: number) => {
    requireApiVersion009(env, 'ethereum.getBalance');
    const balance = chainOf(env, 'ethereum.getBalance').balance(
      readAddress(env.heap, addressPtr),
      env.block.hash,
    );
    return env.heap.writeBigInt(balance);
  },
  'ethereum.hasCode': (env) => (addressPtr: number) => {
    requireApiVersion009(env, 'ethereum.hasCode');
    const code = chainOf(env, 'ethereum.hasCode').code(readAddress(env.heap, addressPtr), env.block.hash);
    const wrapped = env.heap.newObject('WrappedBool', 1);
    env.heap.setU8(wrapped, code.length > 2 ? 1 : 0);
    return wrapped;
  },
  'ethereum.encode': (env) => (valuePtr: number) => {
    const token = readEthereumValue(env.heap, valuePtr);
    const param = tokenAbiParameter(token);
    return env.heap.writeHexBytes(encodeAbiParameters([param], [tokenToAbiValue(token, param)]));
  },
  // null when the types do not parse or the data does not decode as them, as in graph-node
  'ethereum.decode': (env) => (typesPtr: number, dataPtr: number) => {
    let param: AbiParameter;
    let value: unknown;
    try {
      param = parseAbiParameter(env.heap.readString(typesPtr));
      [value] = abiDecoder([param])(env.heap.readHex(dataPtr) as Hex);
    } catch {
      return 0;
    }
    return valueWriter(param)(env.heap, value);
  },
};
