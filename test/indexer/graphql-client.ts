// Posts graph-node-dialect queries to an indexer endpoint in the end-to-end tests.
import { expect } from 'vitest';

/** The messages of the errors a query is answered with (joined by newlines); fails the test if none. */
export async function queryErrorOf(url: string, query: string): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { errors?: { message: string }[] };
  expect(body.errors?.length).toBeGreaterThan(0);
  return body.errors!.map((e) => e.message).join('\n');
}

export async function queryIndexer<T = Record<string, unknown>>(url: string, query: string): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
  expect(body.errors).toBeUndefined();
  return body.data!;
}
