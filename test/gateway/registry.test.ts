// The registry is validated at start-up: the committed devnet registry passes, and a broken
// one stops the start with a message naming the file and the field at fault.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRegistry, parseRegistry } from '../../gateway/sources/registry.ts';
import { REGISTRY_FILE } from './stack.ts';

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
});
