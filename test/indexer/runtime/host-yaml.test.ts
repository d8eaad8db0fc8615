// yaml.fromBytes and yaml.try_fromBytes through the probe wasm (kinds 35 and 36 describe what they
// parsed: null, true, n:<number text>, s:<string>, [..], {key=value}, !tag(value)). The expected
// values are worked out from serde_yaml 0.9's rules, which graph-node parses with.
import { describe, expect, it } from 'vitest';
import { formatFloat } from '../../../indexer/runtime/host-yaml.ts';
import { useProbeHarness } from './runtime-harness.ts';

describe('yaml host functions', () => {
  const harness = useProbeHarness();
  const parse = (input: string) => harness().probe(35, input);
  const tryParse = (input: string) => harness().probe(36, input);

  it('resolves plain scalars as serde_yaml does (YAML 1.2: `yes` and `0123` stay strings)', () => {
    expect(parse('[~, null, Null, "", TRUE, False, yes, 0x1F, 0o17, 0b101, +7, -0x10, 0123, 1_000]')).toBe(
      '[null,null,null,s:,true,false,s:yes,n:31,n:15,n:5,n:7,n:-16,s:0123,s:1_000]',
    );
  });

  it('prints floats as serde_yaml does (ryu shortest form, .inf, .nan)', () => {
    expect(
      parse('[1.5, 1e3, 3.0, 100000000000000000.0, 0.00001, 1e-7, -0.0, .inf, -.Inf, .nan, 1e400]'),
    ).toBe('[n:1.5,n:1000.0,n:3.0,n:1e17,n:0.00001,n:1e-7,n:-0.0,n:.inf,n:-.inf,n:.nan,s:1e400]');
    expect([0.1, 123.456, 1.5e16, 1e15, 2 ** 70, 5e-324].map(formatFloat)).toEqual([
      '0.1',
      '123.456',
      '1.5e16',
      '1000000000000000.0',
      '1.1805916207174113e21',
      '5e-324',
    ]);
  });

  it('keeps 64-bit integers exact, and fails on wider ones', () => {
    expect(parse('[18446744073709551615, -9223372036854775808]')).toBe(
      '[n:18446744073709551615,n:-9223372036854775808]',
    );
    expect(tryParse('18446744073709551616')).toBe('error');
    expect(tryParse('-9223372036854775809')).toBe('error');
  });

  it('reads quoted and block scalars as strings, and tags as serde_yaml does', () => {
    expect(parse('a: \'7\'\nb: |\n  line\nc: !!str 12\nd: !!int "0x10"\n!tag e: !foo [1, "x"]\n')).toBe(
      '{s:a=s:7,s:b=s:line\n,s:c=s:12,s:d=n:16,!tag(s:e)=!foo([n:1,s:x])}',
    );
  });

  it('takes keys of any kind, `<<` as an ordinary key, and aliases as copies', () => {
    expect(parse('? [k]\n: v\n<<: m\na: &x {k: 1}\nb: *x\n')).toBe(
      '{[s:k]=s:v,s:<<=s:m,s:a={s:k=n:1},s:b={s:k=n:1}}',
    );
  });

  it('reads an empty document as null', () => {
    expect(parse('')).toBe('null');
    expect(parse('# only a comment\n')).toBe('null');
  });

  it('refuses duplicate keys, several documents, a tagged value of the wrong type and malformed YAML', () => {
    expect(['a: 1\na: 2', 'a\n---\nb', '!!int x', 'a: [1'].map(tryParse)).toEqual([
      'error',
      'error',
      'error',
      'error',
    ]);
  });

  it('fails the handler when yaml.fromBytes cannot parse', () => {
    expect(harness().probeError(35, 'a: 1\na: 2').message).toContain(
      'failed to parse YAML from bytes: duplicate entry with key "a"',
    );
  });
});
