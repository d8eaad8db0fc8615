// Runs the project's pinned graph-cli (node_modules/.bin/graph) non-interactively, and
// prepares the per-network copy of the manifest that graph-cli's `--network` rewrites, so
// the committed subgraph.yaml is never modified by a build or a deploy. A deploy's arguments carry
// secrets (the deploy key or access token, credentials and keys in the node and IPFS URLs), and CI
// keeps deploy logs: nothing this prints, the command, graph-cli's output or a failure, shows them.
// The URLs graph-cli reports back stay readable: "Queries (HTTP)" is the URL SUBGRAPH_URL takes.
import { spawn } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { redactUrl, urlSecretsHidden } from '../../common/url.ts';
import { manifestPath, subgraphDir } from '../manifest.ts';

const graphBin = join(subgraphDir, '..', 'node_modules', '.bin', 'graph');

interface GraphRunOptions {
  /** print graph-cli's output as it runs (deploys) instead of only on failure (builds) */
  stream?: boolean;
}

/** A failed `graph` run; `reason` holds graph-cli's own error lines (graphErrorLines). */
export class GraphCliError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

const SECRET_FLAGS = new Set(['--deploy-key', '--access-token']);
const URL_FLAGS = new Set(['--node', '--ipfs']);

/** The value of each of `flags` in `args`. */
const flagValues = (args: readonly string[], flags: ReadonlySet<string>) =>
  args.filter((_, i) => i > 0 && flags.has(args[i - 1]!));

/** A command for printing: the deploy key masked, the URLs as redactUrl shows them. */
export function printableCommand(args: readonly string[]): string {
  const masked = args.map((arg, i) => {
    const flag = i > 0 ? args[i - 1]! : '';
    if (SECRET_FLAGS.has(flag)) return '***';
    return URL_FLAGS.has(flag) ? redactUrl(arg) : arg;
  });
  return `graph ${masked.map(shellWord).join(' ')}`;
}

/** `arg` as a shell reads it back: quoted when it holds anything but plain word characters. */
const shellWord = (arg: string): string =>
  /^[\w./:@%+=,…*-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * `text` (graph-cli's output) without the secrets of `args`: the keys masked, the node and IPFS URLs
 * as redactUrl shows them, and the user info and query of any other URL hidden. graph-node's paths
 * hold no secret (/subgraphs/name/<name>, Studio's /query/<user id>/<slug>/<version>), so the
 * "Deployed to" and "Queries (HTTP)" URLs keep theirs.
 */
function withoutSecrets(text: string, args: readonly string[]): string {
  let shown = text;
  for (const secret of flagValues(args, SECRET_FLAGS)) if (secret) shown = shown.replaceAll(secret, '***');
  return urlSecretsHidden(shown, flagValues(args, URL_FLAGS));
}

/**
 * Runs `graph <args>` in subgraph/; rejects with graph-cli's own error lines when it fails. Streamed,
 * the output is printed as it comes (without the oclif exit dump) and the rejection does not repeat it.
 */
export function runGraph(args: string[], options: GraphRunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(graphBin, args, {
      cwd: subgraphDir,
      env: { ...process.env, GRAPH_SKIP_NEW_VERSION_CHECK: 'true', CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let printed = 0;
    // complete lines only; from a line that may open an exit dump, held until the dump's last line
    // ("Node.js v…") shows what it is, or the end
    const printNew = (final: boolean): void => {
      const pending = output.slice(printed);
      let ready = pending.slice(0, final ? pending.length : pending.lastIndexOf('\n') + 1);
      const dumpStart = DUMP_START.exec(ready);
      if (!final && dumpStart && !DUMP_END.test(ready.slice(dumpStart.index)))
        ready = ready.slice(0, dumpStart.index);
      process.stdout.write(withoutSecrets(withoutExitDump(ready), args));
      printed += ready.length;
    };
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      if (options.stream) printNew(false);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (error) => reject(new Error(`cannot run ${graphBin}: ${error.message}`)));
    child.on('close', (code) => {
      if (options.stream) printNew(true);
      if (code === 0) return resolve(output);
      const reason = withoutSecrets(graphErrorLines(output), args);
      const failed = `\`${printableCommand(args)}\` failed (exit ${code})`;
      reject(
        new GraphCliError(
          options.stream ? `${failed}; its output is above` : `${failed}:\n${reason}`,
          reason,
        ),
      );
    });
  });
}

/**
 * `output` without the dump Node prints for the oclif ExitError graph-cli throws from a callback
 * after printing its own reason (`✖ HTTP error creating the subgraph: …`): the source line, the
 * `ExitError: EEXIT` stack and the Node.js version say nothing more. Other crashes keep theirs.
 */
function withoutExitDump(output: string): string {
  return output.replace(EXIT_DUMP, '');
}

/** Node's report of an uncaught error opens with the thrower's "file.js:line" and ends with its version. */
const DUMP_START = /^\S+\.[cm]?js:\d+$/m;
const DUMP_END = /^Node\.js v/m;
/** such a report whose error is oclif's EEXIT: from "file.js:line" through "Node.js v…" */
const EXIT_DUMP = /^\S+\.[cm]?js:\d+\n(?:(?!Node\.js v).*\n)*?ExitError: EEXIT[\s\S]*?^Node\.js v.*\n?/m;

/** graph-cli's output without colours, spinner and success steps, skips, exit dump and stack frames. */
export function graphErrorLines(output: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = withoutExitDump(output.replace(/\u001b\[[0-9;]*m/g, ''));
  const lines = plain
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .filter((line) => !/^\s*at |^- |^✔|Skip migration|Skip '/.test(line));
  return lines.join('\n');
}

/**
 * A copy of subgraph.yaml next to it (relative paths keep working) for graph-cli to rewrite with
 * `--network`. The name carries the process id because several test runs may build at once, and
 * a `.tmp` extension so that a concurrent `prettier --check .` does not read graph-cli's rewrite.
 */
export function networkManifestCopy(network: string): { file: string; remove(): void } {
  const file = `.subgraph.${network}.${process.pid}.yaml.tmp`;
  const path = join(subgraphDir, file);
  copyFileSync(manifestPath, path);
  return { file, remove: () => rmSync(path, { force: true }) };
}
