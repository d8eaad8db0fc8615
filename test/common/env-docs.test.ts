// Every environment variable is documented twice, in .env.example (with its default) and in the
// README, and each documented one is read: a variable added to the code, or left in the documents
// after the code stopped reading it, fails here rather than surprising an operator.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

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

/** the variables read through common/env.ts's readers and the processes' wrappers of them */
const read = new Set(
  [
    ...sources.matchAll(
      /\b(?:envValue|envInteger|integer|url|flag|benchSetting|required|httpUrl)\(\s*(?:env,\s*)?'([A-Z][A-Z0-9_]+)'/g,
    ),
  ].map((m) => m[1]!),
);

describe('the environment variables', () => {
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
