// Shared checks of the reliability suites: what every error answer of the REST surface must be
// (an RFC 9457 problem with the status it claims) and what it must never contain (a stack trace,
// an upstream's own words, an internal address or file path).
import { expect } from 'vitest';

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
}

export async function get(base: string, path: string, init?: RequestInit): Promise<RawResponse> {
  const response = await fetch(`${base}${path}`, init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Things that only leak from inside: stack frames, Node error codes, module paths, upstream URLs. */
export const LEAK_PATTERNS: RegExp[] = [
  /\bat [\w$.<>]+ \(/, // stack frame "at fn (file:line)"
  /\.ts:\d+:\d+/,
  /node_modules/,
  /\/work\/|\/tmp\//,
  /E(CONNREFUSED|CONNRESET|TIMEDOUT|PIPE)\b/,
  /TypeError|SyntaxError|ReferenceError|RangeError/,
  /fetch failed|socket hang up|HTTP request failed/i,
  /127\.0\.0\.1:\d+/,
];

export function expectNoLeak(text: string, secrets: string[] = []): void {
  for (const pattern of LEAK_PATTERNS) expect(text, `leaks ${pattern}`).not.toMatch(pattern);
  for (const secret of secrets) expect(text).not.toContain(secret);
}

/** An error answer: problem+json, members per RFC 9457, status equal to the HTTP status. */
export function expectProblem(response: RawResponse, status: number, kind?: string): Record<string, unknown> {
  expect(response.status, response.text.slice(0, 300)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(response.text) as Record<string, unknown>;
  expect(body.status).toBe(status);
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(String(body.type)).toMatch(/^https?:\/\/.+\/problems\/[a-z-]+$/);
  if (kind) expect(String(body.type).endsWith(`/problems/${kind}`)).toBe(true);
  expectNoLeak(response.text);
  return body;
}
