// `npm run build:subgraph [-- <network>]`: graph codegen + graph build for the devnet (or the
// named network of subgraph/networks.json), skipped when nothing it reads has changed.
import { buildSubgraph } from './build-subgraph.ts';

const network = process.argv[2] ?? 'devnet';
try {
  const result = await buildSubgraph(network);
  console.log(
    result.built
      ? `subgraph built for ${network}: ${result.manifest}`
      : `subgraph for ${network} is up to date: ${result.manifest}`,
  );
} catch (error) {
  console.error(`subgraph build failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
