// graph-cli failures must reach the developer as graph-cli's own reason, without spinner noise
// or stack frames: here a manifest whose event signature is not in the ABI.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { networkManifestCopy, runGraph } from '../../subgraph/scripts/graph-cli.ts';
import { subgraphDir } from '../../subgraph/scripts/manifest.ts';

describe('graph-cli runner', () => {
  it("rejects with the command and graph-cli's reason when graph build fails", async () => {
    const copy = networkManifestCopy('broken');
    const outputDir = mkdtempSync(join(tmpdir(), 'subgraph-broken-'));
    try {
      const path = join(subgraphDir, copy.file);
      const manifest = readFileSync(path, 'utf8');
      writeFileSync(
        path,
        manifest.replace('NavSubmitted(indexed address,indexed uint64)', 'NavSubmitted(address,uint64)'),
      );
      const failure = runGraph(['build', '--output-dir', outputDir, copy.file]);
      await expect(failure).rejects.toThrow(
        `\`graph build --output-dir ${outputDir} ${copy.file}\` failed (exit 1)`,
      );
      await expect(failure).rejects.toThrow(
        "Event with signature 'NavSubmitted(address,uint64)' not present in ABI 'NavOracle'",
      );
      await expect(failure).rejects.not.toThrow(/^\s+at /m);
    } finally {
      copy.remove();
      rmSync(outputDir, { recursive: true, force: true });
    }
  });
});
