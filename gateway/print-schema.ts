// Prints the gateway's public schema to schema.graphql at the repository root
// (`npm run schema:print`). The file is committed; test/gateway/schema-drift.test.ts fails
// when it no longer matches what Pothos builds.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printSchema } from 'graphql';
import { schema } from './schema.ts';

export const SCHEMA_FILE = fileURLToPath(new URL('../schema.graphql', import.meta.url));

export function printedSchema(): string {
  return `${printSchema(schema)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SCHEMA_FILE, printedSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}
