// The start-up check of a DISTRIBUTIONS_BASE that is a directory (gateway/start-up-checks.ts): one
// that does not exist, is a file or cannot be read is refused, saying what it should be, where it
// used to start and answer every proof 503 blaming the round's file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDistributionsDirectory } from '../../gateway/start-up-checks.ts';

const scratch = mkdtempSync(join(tmpdir(), 'distributions-check-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const FIX =
  'set it to the directory holding distributions/<fund>/<epoch>.json (the parent of distributions/), or to an http(s) base URL';

describe('the DISTRIBUTIONS_BASE directory check', () => {
  it('takes a directory it can read', async () => {
    await expect(checkDistributionsDirectory(scratch)).resolves.toBeUndefined();
  });

  it('refuses a directory that does not exist', async () => {
    await expect(checkDistributionsDirectory(join(scratch, 'nowhere'))).rejects.toThrow(
      `it cannot be read (no such directory): ${FIX}`,
    );
  });

  it('refuses a file', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    await expect(checkDistributionsDirectory(file)).rejects.toThrow(`it is not a directory: ${FIX}`);
  });
});
