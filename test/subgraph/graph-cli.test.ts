// graph-cli failures must reach the developer as graph-cli's own reason, without spinner noise
// or stack frames: here a manifest whose event signature is not in the ABI.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  GraphCliError,
  graphErrorLines,
  networkManifestCopy,
  runGraph,
} from '../../subgraph/scripts/graph-cli.ts';
import { subgraphDir } from '../../subgraph/manifest.ts';
import { closedPort } from '../reliability/servers/ports.ts';

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

  it('shows no access token and no secret of the node URL when graph create fails, streamed or not', async () => {
    const port = await closedPort();
    const args = ['create', 'fund-protocol', '--node', `http://deployer:pw777@127.0.0.1:${port}/key123/`];
    const withToken = [...args, '--access-token', 'TOKEN999'];
    const printed: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk));
      return true;
    });
    let streamed: unknown;
    let quiet: unknown;
    try {
      streamed = await runGraph(withToken, { stream: true }).catch((error: unknown) => error);
      quiet = await runGraph(withToken).catch((error: unknown) => error);
    } finally {
      write.mockRestore();
    }
    for (const failure of [streamed, quiet]) {
      expect(failure).toBeInstanceOf(GraphCliError);
      expect((failure as Error).message).toContain(
        `\`graph create fund-protocol --node http://127.0.0.1:${port}/… --access-token ***\` failed (exit 1)`,
      );
    }
    expect((quiet as Error).message).toContain('ECONNREFUSED');
    expect(printed.join('')).toContain('ECONNREFUSED');
    const everything = [printed.join(''), (streamed as Error).message, (quiet as Error).message].join('\n');
    for (const secret of ['TOKEN999', 'pw777', 'deployer', 'key123'])
      expect(everything).not.toContain(secret);
  });
});
