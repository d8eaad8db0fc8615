// The CPU work of reading a dividend distribution, done on a worker thread (distributions.ts starts
// one per file) so that a large file does not stop the service: parsing the dump, checking it
// against its round, hashing every leaf and node (StandardMerkleTree.load: 15-30 s of one core for
// 200,000 leaves), then packing what a proof needs into two flat tables that move to the main
// thread, which keeps them. Proofs are read from the tables (findLeaf) without hashing anything
// again: every node in them was checked here, and they hold each node and address as the file
// writes it, so an answer is the one StandardMerkleTree gives for the same file.
import { parentPort, workerData } from 'node:worker_threads';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';

/** What distributions.ts hands a verifier thread: `verifier` tells the module it runs as one. */
export interface VerifierData {
  verifier: true;
  input: VerifierInput;
}

/** The file and round a verifier thread checks. */
export interface VerifierInput {
  /** the file's bytes */
  file: Uint8Array;
  /** what the chain says of the round: the file must agree with all of it */
  round: { merkleRoot: string; total: string; leafCount: number };
  /**
   * inputs.ts's ADDRESS_PATTERN, handed over rather than imported: loading inputs.ts and what it
   * imports would take this thread ~200 ms more per file
   */
  addressPattern: string;
}

/**
 * A verified distribution as proofs read it. `nodes` holds the tree's nodes in its order, each as
 * the 64 hex digits its file writes after 0x (ASCII). `leaves` holds one LEAF_RECORD_BYTES record
 * per leaf, ordered by address: the address (20 bytes), the address as the file writes it (40
 * ASCII hex digits), the leaf's index in `nodes` (uint32) and its amount (uint256), big-endian.
 * ~224 bytes per leaf in all.
 */
export interface DistributionTables {
  nodes: Uint8Array<ArrayBuffer>;
  leaves: Uint8Array<ArrayBuffer>;
}

/** The verifier's answer: the tables, or the check the file failed in words (and the error behind it). */
export type VerifierOutcome =
  | { tables: DistributionTables }
  | { refusal: string; cause?: { name: string; message: string } };

/** One account's leaf of a verified distribution, as a proof answers it. */
export interface DistributionLeaf {
  /** the address as the file writes it: who is paid */
  account: string;
  /** base units */
  amount: bigint;
  /** the leaf's hash, keccak256(keccak256(abi.encode(account, amount))): its node in the tree */
  leaf: string;
  /** sibling hashes from the leaf to the root */
  proof: string[];
}

const NODE_DIGITS = 64;
const ADDRESS_BYTES = 20;
const WRITTEN_ADDRESS_AT = ADDRESS_BYTES;
const TREE_INDEX_AT = WRITTEN_ADDRESS_AT + 40;
const AMOUNT_AT = TREE_INDEX_AT + 4;
const LEAF_RECORD_BYTES = AMOUNT_AT + 32;

const LEAF_ENCODING = ['address', 'uint256'];
const NODE_PATTERN = /^0x[0-9a-fA-F]{64}$/;
const AMOUNT_PATTERN = /^(0x[0-9a-fA-F]+|[0-9]+)$/;
const UINT256_MAX = 2n ** 256n - 1n;

/** The dump's shape, checked before anything is hashed; its rule, in words, when it is broken. */
function shapeFault(dump: unknown, address: RegExp): string | undefined {
  if (typeof dump !== 'object' || dump === null) return 'it is not a JSON object';
  const { format, leafEncoding, tree, values } = dump as Record<string, unknown>;
  if (format !== 'standard-v1') return 'its format is not "standard-v1"';
  if (JSON.stringify(leafEncoding) !== JSON.stringify(LEAF_ENCODING)) {
    return 'its leafEncoding is not ["address", "uint256"]';
  }
  if (!Array.isArray(tree) || tree.length === 0 || !tree.every((node) => NODE_PATTERN.test(String(node)))) {
    return 'its tree is not a non-empty list of 32-byte 0x hex nodes';
  }
  if (!Array.isArray(values) || values.length === 0) return 'its values are not a non-empty list';
  for (const [i, entry] of values.entries()) {
    const { value, treeIndex } = (entry ?? {}) as { value?: unknown; treeIndex?: unknown };
    if (!Array.isArray(value) || value.length !== 2 || !Number.isInteger(treeIndex)) {
      return `its value ${i} is not {"value": [address, amount], "treeIndex": integer}`;
    }
    if (!address.test(String(value[0]))) return `the address of its value ${i} is not 0x and 40 hex digits`;
    if (amountOf(value[1]) === undefined)
      return `the amount of its value ${i} is not an integer from 0 to 2^256-1`;
  }
  return undefined;
}

/** A leaf's amount as abi-encoding takes it: a decimal or 0x hex string, or a JSON integer. */
function amountOf(value: unknown): bigint | undefined {
  const integer =
    (typeof value === 'string' && AMOUNT_PATTERN.test(value)) ||
    (typeof value === 'number' && Number.isSafeInteger(value));
  if (!integer) return undefined;
  const amount = BigInt(value);
  return amount >= 0n && amount <= UINT256_MAX ? amount : undefined;
}

type Dump = Parameters<typeof StandardMerkleTree.load<[string, string]>>[0];

/** A check the file failed: its words, and the error behind them, which may quote the file. */
class Refusal extends Error {
  constructor(
    readonly reason: string,
    readonly fault?: unknown,
  ) {
    super(reason);
  }
}

/** The distribution in `input.file` once it passed every check against its round, packed; else its refusal. */
export function verifyDistribution(input: VerifierInput): VerifierOutcome {
  try {
    return { tables: pack(verified(input)) };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const { reason, fault } = error;
    return fault instanceof Error
      ? { refusal: reason, cause: { name: fault.name, message: fault.message } }
      : { refusal: reason };
  }
}

function verified({ file, round, addressPattern }: VerifierInput): { dump: Dump; amounts: bigint[] } {
  let dump: Dump;
  try {
    dump = JSON.parse(Buffer.from(file.buffer, file.byteOffset, file.byteLength).toString('utf8')) as Dump;
  } catch (error) {
    // the parser's message quotes the file: it stays in the cause
    throw new Refusal('is not a StandardMerkleTree dump: it is not JSON', error);
  }
  const fault = shapeFault(dump, new RegExp(addressPattern));
  if (fault) throw new Refusal(`is not a StandardMerkleTree dump: ${fault}`);
  // the cheap checks first: hashing every leaf and node is what takes long
  const fileRoot = dump.tree[0]!.toLowerCase();
  const chainRoot = round.merkleRoot.toLowerCase();
  if (fileRoot !== chainRoot) {
    throw new Refusal(
      `has Merkle root ${fileRoot}, but the root posted on-chain for its round is ${chainRoot}`,
    );
  }
  if (dump.values.length !== round.leafCount) {
    throw new Refusal(
      `has ${dump.values.length} leaves, but its round's on-chain leafCount is ${round.leafCount}`,
    );
  }
  let sum = 0n;
  const amounts: bigint[] = [];
  const valueOf = new Map<string, number>();
  for (const [i, { value }] of dump.values.entries()) {
    const amount = amountOf(value[1])!;
    sum += amount;
    amounts.push(amount);
    const account = value[0].toLowerCase();
    const earlier = valueOf.get(account);
    if (earlier !== undefined) {
      throw new Refusal(
        `has two leaves for address ${account} (values ${earlier} and ${i}); each address may have one`,
      );
    }
    valueOf.set(account, i);
  }
  if (sum !== BigInt(round.total)) {
    throw new Refusal(
      `has leaves summing to ${sum} base units, but its round's on-chain total is ${round.total}`,
    );
  }
  try {
    // load() hashes every leaf and node and checks them against the tree
    StandardMerkleTree.load(dump);
  } catch (error) {
    throw new Refusal('is not a valid Merkle tree: its leaves and nodes do not hash to its tree', error);
  }
  return { dump, amounts };
}

/** The tables of a verified dump, each in memory of its own, so that it can move to another thread whole. */
function pack({ dump, amounts }: { dump: Dump; amounts: bigint[] }): DistributionTables {
  const nodes = Buffer.allocUnsafeSlow(dump.tree.length * NODE_DIGITS);
  for (const [i, node] of dump.tree.entries()) nodes.write(node.slice(2), i * NODE_DIGITS, 'latin1');
  const byAddress = dump.values.map(({ value }, i) => ({ address: value[0].slice(2).toLowerCase(), i }));
  byAddress.sort((a, b) => (a.address < b.address ? -1 : 1));
  const leaves = Buffer.allocUnsafeSlow(byAddress.length * LEAF_RECORD_BYTES);
  for (const [record, { address, i }] of byAddress.entries()) {
    const at = record * LEAF_RECORD_BYTES;
    const { value, treeIndex } = dump.values[i]!;
    leaves.write(address, at, 'hex');
    leaves.write(value[0].slice(2), at + WRITTEN_ADDRESS_AT, 'latin1');
    leaves.writeUInt32BE(treeIndex, at + TREE_INDEX_AT);
    leaves.write(amounts[i]!.toString(16).padStart(64, '0'), at + AMOUNT_AT, 'hex');
  }
  return { nodes, leaves };
}

function bufferOf(table: Uint8Array<ArrayBuffer>): Buffer {
  return Buffer.from(table.buffer, table.byteOffset, table.byteLength);
}

function nodeAt(nodes: Buffer, index: number): string {
  return `0x${nodes.toString('latin1', index * NODE_DIGITS, (index + 1) * NODE_DIGITS)}`;
}

/** The tree's root as its file writes it. */
export function rootOf(tables: DistributionTables): string {
  return nodeAt(bufferOf(tables.nodes), 0);
}

/** The leaf of `account` (0x and 40 lowercase hex digits) with its proof; undefined when it has none. */
export function findLeaf(tables: DistributionTables, account: string): DistributionLeaf | undefined {
  const leaves = bufferOf(tables.leaves);
  const address = Buffer.from(account.slice(2), 'hex');
  let low = 0;
  let high = leaves.length / LEAF_RECORD_BYTES;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const at = middle * LEAF_RECORD_BYTES;
    const order = address.compare(leaves, at, at + ADDRESS_BYTES);
    if (order < 0) high = middle;
    else if (order > 0) low = middle + 1;
    else return leafAt(leaves, at, bufferOf(tables.nodes));
  }
  return undefined;
}

function leafAt(leaves: Buffer, at: number, nodes: Buffer): DistributionLeaf {
  const treeIndex = leaves.readUInt32BE(at + TREE_INDEX_AT);
  const proof: string[] = [];
  // as StandardMerkleTree's getProof: the sibling of an odd index follows it, of an even one
  // precedes it, and their parent is at (index - 1) / 2
  for (let index = treeIndex; index > 0; index = (index - 1) >>> 1) {
    proof.push(nodeAt(nodes, index % 2 === 1 ? index + 1 : index - 1));
  }
  return {
    account: `0x${leaves.toString('latin1', at + WRITTEN_ADDRESS_AT, at + TREE_INDEX_AT)}`,
    amount: BigInt(`0x${leaves.toString('hex', at + AMOUNT_AT, at + LEAF_RECORD_BYTES)}`),
    leaf: nodeAt(nodes, treeIndex),
    proof,
  };
}

/** A verifier thread's work: checks the file it was handed and posts the outcome, its tables moved, not copied. */
function answerParent(): void {
  const outcome = verifyDistribution((workerData as VerifierData).input);
  const moved = 'tables' in outcome ? [outcome.tables.nodes.buffer, outcome.tables.leaves.buffer] : [];
  parentPort!.postMessage(outcome, moved);
}

// started as a thread by distributions.ts, from this module's bundle (build/gateway-distribution-verifier.mjs)
if (parentPort && (workerData as Partial<VerifierData> | null)?.verifier === true) answerParent();
