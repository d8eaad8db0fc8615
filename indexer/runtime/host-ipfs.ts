// ipfs.cat, ipfs.getBlock and ipfs.map. graph-node refuses them unless its operator allows
// non-deterministic IPFS (GRAPH_ALLOW_NON_DETERMINISTIC_IPFS): what they return depends on what the
// IPFS node has when the handler runs. The embedded indexer refuses them always, in graph-node's
// words, and names what reads IPFS files deterministically: a file data source.
import type { HostFunctions } from './host-context.ts';

function refused(name: string): HostFunctions[string] {
  return () => () => {
    throw new Error(
      `\`${name}\` is deprecated. Improved support for IPFS will be added in the future (graph-node runs it only with GRAPH_ALLOW_NON_DETERMINISTIC_IPFS set; the embedded indexer never does: read IPFS files with a file data source, a template of kind file/ipfs)`,
    );
  };
}

export const ipfsFunctions: HostFunctions = {
  'ipfs.cat': refused('ipfs.cat'),
  'ipfs.getBlock': refused('ipfs.getBlock'),
  'ipfs.map': refused('ipfs.map'),
};
