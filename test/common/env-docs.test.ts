// Every environment variable is documented twice, in .env.example (with its default) and in the
// README, and each documented one is read: a variable added to the code, or left in the documents
// after the code stopped reading it, fails here rather than surprising an operator.
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scenarioParamsFromEnv } from '../../devnet/scenario-params.ts';

const root = resolve(import.meta.dirname, '../..');
/** the folders of the processes and scripts that read variables (tests and generated code excluded) */
const SOURCE_DIRS = ['common', 'rest', 'gateway', 'indexer', 'devnet', 'bench', 'subgraph/scripts'];

function sourcesIn(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'));
}

const sources = [...SOURCE_DIRS.flatMap(sourcesIn), readFileSync(join(root, 'main.ts'), 'utf8')].join('\n');
const envExample = readFileSync(join(root, '.env.example'), 'utf8');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const listed = [...envExample.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);

/** common/env.ts's readers and the processes' wrappers of them, each taking a variable's name */
const READERS = ['envValue', 'envInteger', 'integer', 'url', 'flag', 'benchSetting', 'required', 'httpUrl'];
/** where a reader is called (its declaration is not a call) */
const READER_NAMED = new RegExp(`(?<!function )\\b(?:${READERS.join('|')})\\(`, 'g');
/** one argument: a quoted or template string, or an expression without commas, parentheses or quotes */
const ARGUMENT = `'[^']*'|"[^"]*"|\`[^\`]*\`|[^,()'"\`]+?`;
/**
 * A reader's call with its first argument (an environment such as `env` or `process.env`, or the
 * name itself where the reader takes no environment) and the one after it, if any.
 */
const READER_CALL = new RegExp(
  `${READER_NAMED.source}\\s*(?<first>${ARGUMENT})\\s*(?:,\\s*(?<second>${ARGUMENT})\\s*)?[,)]`,
  'g',
);
const LITERAL_NAME = /^'([A-Z][A-Z0-9_]+)'$/;
/**
 * Names a reader passes on as a variable rather than writing them out: the wrappers' own `name`
 * parameter (their callers write it out) and the deploy script's `variable`. The scenario's table
 * of names is read below by calling its reader.
 */
const FORWARDED_NAMES = ['name', 'variable'];
/** indexer/config.ts's httpUrl also checks a field of a file, which it names in a template string */
const FILE_FIELD_LABEL = /^`"\w+" of /;
const readerCalls = [...sources.matchAll(READER_CALL)];
const unreadCalls = [...sources.matchAll(READER_NAMED)]
  .filter((call) => !readerCalls.some((read) => read.index === call.index))
  .map((call) => sources.slice(call.index, sources.indexOf('\n', call.index)));
/** what each call names: a name written out, else one passed on, as its first or second argument */
const namedBy = readerCalls.map(({ groups }) => {
  const [first, second] = [groups!.first!, groups!.second];
  if (LITERAL_NAME.test(first) || FILE_FIELD_LABEL.test(first) || second === undefined) return first;
  if (LITERAL_NAME.test(second)) return second;
  return FORWARDED_NAMES.includes(first) ? first : second;
});
/** Node's own variables, which it documents; the benchmarks print NODE_OPTIONS with their results */
const NODE_VARIABLES = ['NODE_OPTIONS'];
/** `process.env.NAME` and `process.env['NAME']`, read without a reader */
const directReads = [
  ...sources.matchAll(/\bprocess\.env(?:\.([A-Z][A-Z0-9_]+)|\[\s*'([A-Z][A-Z0-9_]+)'\s*\])/g),
]
  .map((m) => (m[1] ?? m[2])!)
  .filter((name) => !NODE_VARIABLES.includes(name));
/** the SCENARIO_* names, which scenarioParamsFromEnv looks up from a table of its own */
const scenarioNames: string[] = [];
scenarioParamsFromEnv(new Proxy({}, { get: (_, name) => void scenarioNames.push(String(name)) }), tmpdir());

/** every variable the code reads */
const read = new Set([
  ...namedBy.flatMap((arg) => LITERAL_NAME.exec(arg)?.[1] ?? []),
  ...directReads,
  ...scenarioNames,
]);

describe('the environment variables', () => {
  it('are each named by a reader in a form this test reads: written out, or passed on by a wrapper', () => {
    expect(readerCalls.length).toBeGreaterThan(60);
    expect(unreadCalls, 'write the name out in quotes, or teach this test the new form').toEqual([]);
    const unread = namedBy.filter(
      (arg) => !LITERAL_NAME.test(arg) && !FORWARDED_NAMES.includes(arg) && !FILE_FIELD_LABEL.test(arg),
    );
    expect(unread, 'write the name out in quotes, or teach this test the new form').toEqual([]);
  });

  it('that the code reads are each listed in .env.example', () => {
    expect(read.size).toBeGreaterThan(40);
    expect([...read].filter((name) => !listed.includes(name))).toEqual([]);
  });

  it('are each set once in .env.example: a second, empty line would override a value set in the first when the file is loaded', () => {
    expect(listed.filter((name, i) => listed.indexOf(name) !== i)).toEqual([]);
  });

  it('that .env.example lists are each read by the code', () => {
    expect(listed.filter((name) => !sources.includes(`'${name}'`))).toEqual([]);
  });

  it('that .env.example lists are each named in the README, or their family (SCENARIO_*) is', () => {
    const named = (name: string) =>
      new RegExp(`\\b${name}\\b`).test(readme) || readme.includes(`\`${name.split('_')[0]}_*\``);
    expect(listed.filter((name) => !named(name))).toEqual([]);
  });
});
