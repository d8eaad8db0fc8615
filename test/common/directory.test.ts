// makeDirectory makes a directory and its missing parents, and fails with mkdir's error where one
// cannot be made, including under /proc, where Node 20's recursive mkdirSync never returns.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDirectory } from '../../common/directory.ts';

const scratch = mkdtempSync(join(tmpdir(), 'make-directory-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('makeDirectory', () => {
  it('makes a directory and its missing parents', () => {
    const nested = join(scratch, 'a', 'b', 'c');
    makeDirectory(nested);
    expect(statSync(nested).isDirectory()).toBe(true);
  });

  it('takes a directory that exists as it is, keeping what it holds', () => {
    const existing = mkdtempSync(join(scratch, 'existing-'));
    writeFileSync(join(existing, 'kept'), 'contents');
    makeDirectory(existing);
    expect(readdirSync(existing)).toEqual(['kept']);
    expect(readFileSync(join(existing, 'kept'), 'utf8')).toBe('contents');
  });

  it('fails with ENOTDIR where a part of the path is a file', () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    expect(() => makeDirectory(join(file, 'x'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });

  it('fails with ENOENT under /proc, where mkdir makes nothing, instead of trying forever', () => {
    expect(existsSync('/proc/self')).toBe(true);
    expect(() => makeDirectory('/proc/no-such-dir/indexer')).toThrow(
      expect.objectContaining({ code: 'ENOENT', syscall: 'mkdir', path: '/proc/no-such-dir' }),
    );
  });
});
