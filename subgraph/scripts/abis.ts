// `npm run subgraph:abis`: copies the ABIs the subgraph manifest declares from the devnet
// compile output (devnet/build) into subgraph/abis/, the committed copies graph-cli reads.
import { syncAbis } from './abi-sync.ts';

const rewritten = syncAbis();
console.log(
  rewritten.length === 0
    ? 'subgraph/abis/ already matches devnet/build'
    : `rewrote subgraph/abis/ for ${rewritten.join(', ')} from devnet/build`,
);
