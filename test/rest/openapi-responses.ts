// Validates REST responses against the committed openapi.json with ajv: the request path is
// matched to its documented path template, and the body against the schema documented for
// that status and content type. Every REST test routes its requests through `call`.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { OPENAPI_FILE } from '../../rest/print-openapi.ts';

type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, { get: Operation }> };
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addSchema(doc, 'openapi.json');

const templates = Object.keys(doc.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+').replace(/\./g, '\\.')}$`),
}));

function pointer(...parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

export interface CheckedResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Fetches and validates the response against openapi.json; fails the test on any mismatch. */
export async function call(base: string, path: string, init?: RequestInit): Promise<CheckedResponse> {
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  const result: CheckedResponse = {
    status: response.status,
    headers: response.headers,
    text,
    body: undefined,
  };
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0] as string;
  if (contentType.endsWith('json') && text) result.body = JSON.parse(text);
  if (response.status === 304 || init?.method === 'HEAD' || init?.method === 'OPTIONS') return result;
  const pathname = new URL(path, base).pathname;
  const match = templates.find((t) => t.pattern.test(pathname));
  if (!match) {
    // an undocumented path may only answer with a problem
    expect(contentType, `${pathname} is not in openapi.json`).toBe('application/problem+json');
    expect(
      ajv.validate({ $ref: 'openapi.json#/components/schemas/Problem' }, result.body),
      ajv.errorsText(),
    ).toBe(true);
    return result;
  }
  const documented = doc.paths[match.template]?.get.responses[String(response.status)];
  if (!documented) {
    // 405 is documented once for the whole API (info.description), as a problem
    expect([405]).toContain(response.status);
    expect(
      ajv.validate({ $ref: 'openapi.json#/components/schemas/Problem' }, result.body),
      ajv.errorsText(),
    ).toBe(true);
    return result;
  }
  expect(Object.keys(documented.content ?? {}), `${pathname} ${response.status}`).toContain(contentType);
  const ref = `openapi.json#/${pointer('paths', match.template, 'get', 'responses', String(response.status), 'content', contentType, 'schema')}`;
  const valid = ajv.validate({ $ref: ref }, result.body ?? text);
  expect(valid, `${pathname} ${response.status}: ${ajv.errorsText()}`).toBe(true);
  return result;
}
