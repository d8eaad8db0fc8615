// The content path of a file data source (`dataSource.create('File', [source])`) names what to fetch
// from IPFS and is also the key the fetched bytes are stored under, so every spelling graph-node
// accepts (graph/src/ipfs/content_path.rs) must reduce to one string: the CID in its canonical form
// (base58 `Qm…` for v0, base32 for v1), then the path inside it if any. An Arweave source is a
// transaction id, with a path inside it if any, and is kept as given.
import { bases } from 'multiformats/basics';
import { CID } from 'multiformats/cid';

export class InvalidContentPathError extends Error {
  constructor(
    readonly input: string,
    reason: string,
  ) {
    super(`'${input}' is not a valid IPFS content path: ${reason}`);
    this.name = 'InvalidContentPathError';
  }
}

// graph-node refuses to fetch a CID whose hash is not collision resistant
// (core/src/polling_monitor/ipfs_service.rs), since the content could then be forged.
const SAFE_MULTIHASHES = new Set([
  0x0, // identity
  0x12, // sha2-256
  0x13, // sha2-512
  0x17, // sha3-224
  0x16, // sha3-256
  0x15, // sha3-384
  0x14, // sha3-512
  0x1a, // keccak-224
  0x1b, // keccak-256
  0x1c, // keccak-384
  0x1d, // keccak-512
  0xb220, // blake2b-256
  0xb240, // blake2b-512
  0xb260, // blake2s-256
  0x1e, // blake3
]);

// graph-node's cid crate reads a CIDv1 in any multibase; multiformats only knows base32, base36
// and base58btc unless it is handed the decoder the prefix names. The identity base is left out:
// its prefix is a NUL byte, never meant as text.
const decoderByPrefix = new Map(
  Object.values(bases)
    .filter((base) => base.prefix !== '\0')
    .map((base) => [base.prefix as string, base.decoder]),
);

export function parseContentPath(input: string): string {
  const trimmed = input.trim();
  if (trimmed === '') throw new InvalidContentPathError('', 'content path is empty');
  if (trimmed.startsWith('http://') || trimmed.startsWith('https://')) return parseUrl(trimmed);
  return parseCidAndPath(trimmed, trimmed);
}

function parseUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new InvalidContentPathError(input, 'input is not a valid URL');
  }
  // Like graph-node: an RPC `cat?arg=` wins, then a path gateway's `/ipfs/`, else the whole path.
  // Any other query of a gateway URL is dropped, as graph-node drops it.
  const arg = url.searchParams.get('arg');
  if (arg !== null) return parseCidAndPath(arg, input);
  const ipfs = url.pathname.indexOf('/ipfs/');
  if (ipfs >= 0) return parseCidAndPath(url.pathname.slice(ipfs + '/ipfs/'.length), input);
  return parseCidAndPath(url.pathname, input);
}

function parseCidAndPath(text: string, input: string): string {
  let rest = trimSlashes(text);
  for (const prefix of ['ipfs/', 'ipfs://']) {
    if (rest.startsWith(prefix)) rest = trimSlashes(rest.slice(prefix.length));
  }
  const slash = rest.indexOf('/');
  const cidText = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash + 1);
  if (cidText === '') throw new InvalidContentPathError(input, 'content path is empty');

  let cid: CID;
  try {
    cid = CID.parse(cidText, decoderByPrefix.get(cidText[0]!));
  } catch (error) {
    throw new InvalidContentPathError(input, `invalid CID: ${(error as Error).message}`);
  }
  // A query would reach the IPFS server as its own parameters (e.g. `?offline=true`).
  if (path.includes('?')) throw new InvalidContentPathError(input, 'query parameters not allowed');
  const multihash = cid.multihash.code;
  if (!SAFE_MULTIHASHES.has(multihash)) {
    throw new InvalidContentPathError(input, `CID multihash ${multihash} is not allowed`);
  }
  return path === '' ? cid.toString() : `${cid.toString()}/${path}`;
}

function trimSlashes(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text[start] === '/') start++;
  while (end > start && text[end - 1] === '/') end--;
  return text.slice(start, end);
}

/**
 * A file/arweave data source's source: a transaction id (base64url), then a path inside it if any.
 * graph-node takes any text and joins it to the gateway's URL; this refuses what would leave the
 * gateway (a scheme, a leading slash, a `..` segment) or reach it as a query.
 */
export function parseArweaveSource(input: string): string {
  const source = input.trim();
  const [id, ...path] = source.split('/');
  if (!/^[A-Za-z0-9_-]+$/.test(id!) || path.includes('..') || /[?#]/.test(source)) {
    throw new Error(
      `'${input}' is not an Arweave file: a transaction id (base64url) is expected, with a path inside it if any`,
    );
  }
  return source;
}
