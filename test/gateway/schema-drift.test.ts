// The committed schema.graphql is the gateway's public contract: it must be exactly what
// Pothos builds, so a schema change cannot land without `npm run schema:print`.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printedSchema, SCHEMA_FILE } from '../../gateway/print-schema.ts';

describe('schema.graphql', () => {
  it('matches the schema Pothos builds (run npm run schema:print after a change)', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(printedSchema());
  });
});
