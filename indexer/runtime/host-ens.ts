// ens.nameByHash: the embedded indexer has no ENS rainbow table, so every lookup finds no name
// (null), which mappings must handle anyway.
import type { HostFunctions } from './host-context.ts';

export const ensFunctions: HostFunctions = {
  'ens.nameByHash': () => () => 0,
};
