// The registry is validated at start-up: the committed devnet registry passes, and a broken
// one stops the start with a message naming the file and the field at fault.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRegistry, parseRegistry, registrySchema } from '../../gateway/sources/registry.ts';
import { REGISTRY_FILE } from '../harness/stack.ts';

// the registry as parsed JSON, free to break
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const original = (): Json => JSON.parse(readFileSync(REGISTRY_FILE, 'utf8'));

describe('registry validation', () => {
  it('accepts the committed devnet registry', () => {
    const registry = loadRegistry(REGISTRY_FILE);
    expect(registry.funds.length).toBeGreaterThan(0);
    expect(registry.policies.map((p) => p.kind).sort()).toEqual(['fixed-plus-float', 'fractional-kelly']);
  });

  it.each([
    ['a malformed vault address', (r: Json) => void (r.funds[1].vault = '0x1234'), 'funds[1].vault'],
    ['a missing chain id', (r: Json) => void delete r.chain.id, 'chain.id'],
    ['an unknown policy kind', (r: Json) => void (r.policies[0].kind = 'martingale'), 'policies[0].kind'],
    [
      'a score above 100',
      (r: Json) => void (r.strategies[0].ratings.quantitative.score = 101),
      'strategies[0].ratings.quantitative.score',
    ],
    ['an unexpected field', (r: Json) => void (r.funds[0].nickname = 'x'), 'funds[0].nickname'],
    ['a fund naming no policy', (r: Json) => void (r.funds[0].policy = 'no-such-policy'), 'funds[0].policy'],
    ['a repeated fund slug', (r: Json) => void (r.funds[1].slug = r.funds[0].slug), 'funds[1].slug'],
  ])('names the file and the field for %s', (_case, mutate, field) => {
    const broken = original();
    mutate(broken);
    expect(() => parseRegistry(broken, 'registry/broken.json')).toThrow(
      new RegExp(`registry/broken\\.json.*field ${field.replace(/[[\].]/g, '\\$&')}`),
    );
  });

  it('names the file when it is not JSON', () => {
    const dir = mkdtempSync(join(tmpdir(), 'h4-registry-'));
    try {
      const file = join(dir, 'net.json');
      writeFileSync(file, '{ "network": ');
      expect(() => loadRegistry(file)).toThrow(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists the allowed values of a field it refuses', () => {
    const broken = original();
    broken.contracts[0].kind = 'USDC';
    broken.funds[0].nickname = 'x';
    const message = (() => {
      try {
        parseRegistry(broken, 'registry/broken.json');
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(message).toContain('field contracts[0].kind must be one of "NavOracle"');
    expect(message).toContain('"ERC20"');
    expect(message).toMatch(
      /field funds\[0\]\.nickname is not a registry field \(the fields here: slug, name/,
    );
  });

  it('takes a base asset that is not a mock', () => {
    const registry = original();
    registry.contracts[0].kind = 'ERC20';
    expect(parseRegistry(registry, 'registry/net.json').contracts[0]?.kind).toBe('ERC20');
  });

  it('refuses the sepolia template until its zero addresses are filled in, naming file and fields', () => {
    expect(() => loadRegistry('registry/sepolia.json')).toThrow(
      /^Invalid registry registry\/sepolia\.json: field contracts\[0\]\.address, .*funds\[0\]\.vault, .* are the zero address/,
    );
    let next = 0;
    const filled = JSON.parse(
      readFileSync('registry/sepolia.json', 'utf8').replace(
        /0x0{40}/g,
        () => `0x${(++next).toString(16).padStart(40, '0')}`,
      ),
    );
    expect(parseRegistry(filled, 'registry/sepolia.json').chain.id).toBe(11155111);
  });
});

describe('registry/README.md', () => {
  type Schema = { properties?: Record<string, Schema>; items?: Schema; enum?: readonly unknown[] };
  /** every field path of the schema (`funds[].vault`) with its allowed values, if a closed list */
  function fields(schema: Schema, at: string): [string, readonly unknown[] | undefined][] {
    if (schema.items) return [[`${at}[]`, undefined], ...fields(schema.items, `${at}[]`)];
    if (!schema.properties) return [[at, schema.enum]];
    return Object.entries(schema.properties).flatMap(([name, field]) =>
      fields(field, at ? `${at}.${name}` : name),
    );
  }
  const readme = readFileSync('registry/README.md', 'utf8');
  const rows = new Map(
    [...readme.matchAll(/^\| `([^`]+)` \| (.*)$/gm)].map((m) => [m[1] as string, m[2] as string]),
  );
  const schemaFields = fields(registrySchema as Schema, '');

  it('describes every field of the schema, with its allowed values', () => {
    for (const [path, allowed] of schemaFields) {
      expect(rows.has(path), path).toBe(true);
      for (const value of allowed ?? []) expect(rows.get(path), path).toContain(`\`${String(value)}\``);
    }
  });

  it('describes no field the schema lacks', () => {
    const known = new Set(schemaFields.map(([path]) => path));
    const files = new Set(['devnet.json', 'sepolia.json']);
    expect([...rows.keys()].filter((path) => !known.has(path) && !files.has(path))).toEqual([]);
  });
});
