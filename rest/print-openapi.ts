// Prints openapi.json at the repository root from the route table (`npm run openapi:print`),
// for the default base URL. The file is committed; test/rest/discovery-documents.test.ts fails
// when it no longer matches the table.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApi, DEFAULT_BASE_URL } from './openapi.ts';

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));

export function printedOpenApi(): string {
  return `${JSON.stringify(buildOpenApi(DEFAULT_BASE_URL, `${DEFAULT_BASE_URL}/problems`), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OPENAPI_FILE, printedOpenApi());
  console.log(`wrote ${OPENAPI_FILE}`);
}
