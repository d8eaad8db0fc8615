// The dividend distribution source. A round's on-chain event carries a Merkle root and the
// relative URI of its distribution (an OpenZeppelin StandardMerkleTree dump with leaves
// [address, uint256]). Before any proof is computed the loaded tree is validated and its
// root compared with the indexed on-chain root: a proof from a tree that does not match
// the chain would fail on-chain, so such a tree is refused. Verified trees are cached by root.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { notFound, upstreamUnavailable } from '../errors.ts';

export type DistributionTree = StandardMerkleTree<[string, string]>;

export interface DistributionsConfig {
  /** a local directory or an http(s) base URL; undefined when proofs are not served */
  base: string | undefined;
  timeoutMs: number;
  /** how many verified trees are kept */
  cacheSize: number;
}

export interface DistributionSource {
  /** Loads and verifies the tree of a round; throws UPSTREAM_UNAVAILABLE on any mismatch. */
  load(uri: string, onchainRoot: string): Promise<DistributionTree>;
}

const LEAF_ENCODING = ['address', 'uint256'];

async function readDump(base: string, uri: string, timeoutMs: number): Promise<unknown> {
  if (/^https?:\/\//.test(base)) {
    const url = new URL(uri, base.endsWith('/') ? base : `${base}/`);
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) throw new Error(`GET ${url.href} answered ${response.status}`);
    return response.json();
  }
  const root = path.resolve(base);
  const file = path.resolve(root, uri);
  // The URI comes from the chain: never let it name a file outside the base directory.
  if (!file.startsWith(root + path.sep)) throw new Error(`distribution uri ${uri} leaves ${root}`);
  return JSON.parse(await readFile(file, 'utf8'));
}

export function createDistributionSource(config: DistributionsConfig): DistributionSource {
  const verified = new Map<string, Promise<DistributionTree>>();

  async function loadVerified(base: string, uri: string, root: string): Promise<DistributionTree> {
    let tree: DistributionTree;
    try {
      const dump = (await readDump(base, uri, config.timeoutMs)) as Parameters<
        typeof StandardMerkleTree.load<[string, string]>
      >[0];
      if (JSON.stringify(dump.leafEncoding) !== JSON.stringify(LEAF_ENCODING)) {
        throw new Error(`leaf encoding ${JSON.stringify(dump.leafEncoding)} is not [address, uint256]`);
      }
      tree = StandardMerkleTree.load(dump);
      tree.validate();
    } catch (error) {
      throw upstreamUnavailable('dividend distribution', error);
    }
    if (tree.root.toLowerCase() !== root) {
      throw upstreamUnavailable(
        'dividend distribution',
        new Error(`distribution ${uri} has root ${tree.root}, the chain says ${root}`),
      );
    }
    return tree;
  }

  return {
    load(uri, onchainRoot) {
      const base = config.base;
      // a deployment without distributions never serves proofs: a 404, not a 503 to retry later
      if (base === undefined) {
        return Promise.reject(
          notFound(
            'Dividend proofs are not served by this deployment (it has no distribution files); the round, its Merkle root and its distribution uri are at GET /v1/funds/{slug}/dividends/{epoch}.',
          ),
        );
      }
      const root = onchainRoot.toLowerCase();
      let pending = verified.get(root);
      if (!pending) {
        pending = loadVerified(base, uri, root);
        verified.set(root, pending);
        // a failure is not cached: the file may be fixed or the upstream come back
        pending.catch(() => verified.delete(root));
        if (verified.size > config.cacheSize) {
          const oldest = verified.keys().next().value;
          if (oldest !== undefined) verified.delete(oldest);
        }
      }
      return pending;
    },
  };
}
