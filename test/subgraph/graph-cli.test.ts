// graph-cli failures must reach the developer as graph-cli's own reason, without spinner noise
// or stack frames: here a manifest whose event signature is not in the ABI.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { graphErrorLines, networkManifestCopy, runGraph } from '../../subgraph/scripts/graph-cli.ts';
import { subgraphDir } from '../../subgraph/manifest.ts';

/** graph-cli 0.98's output for `graph create` against a closed port: its reason, then Node's dump of oclif's exit */
const CREATE_REFUSED = `- Creating subgraph in Graph node: http://127.0.0.1:18933/
✖ HTTP error creating the subgraph: ECONNREFUSED
/work/main/node_modules/@oclif/core/lib/errors/exit.js:6
    throw new exit_1.ExitError(code);
    ^

ExitError: EEXIT: 1
    at Object.exit (/work/main/node_modules/@oclif/core/lib/errors/exit.js:6:11)
    at ClientRequest.emit (node:events:524:28) {
  code: 'EEXIT',
  oclif: { exit: 1 },
  skipOclifErrorHandling: undefined,
  suggestions: undefined
}

Node.js v20.20.2
`;

describe('graph-cli runner', () => {
  it("keeps graph-cli's reason and drops the dump of oclif's exit", () => {
    expect(graphErrorLines(CREATE_REFUSED)).toBe('✖ HTTP error creating the subgraph: ECONNREFUSED');
  });

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
