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

/** The whole answer to a query: its data and its errors, as the endpoint sent them. */
export async function queryAnswer<T = Record<string, unknown>>(
  url: string,
  query: string,
): Promise<{ data?: T | null; errors?: { message: string }[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as { data?: T | null; errors?: { message: string }[] };
}

export async function queryIndexer<T = Record<string, unknown>>(url: string, query: string): Promise<T> {
  const body = await queryAnswer<T>(url, query);
  expect(body.errors).toBeUndefined();
  return body.data!;
}

/** The ids a query's single top-level list holds. */
export async function idsOf(url: string, query: string): Promise<string[]> {
  const data = await queryIndexer(url, query);
  return (Object.values(data)[0] as { id: string }[]).map((row) => row.id);
}
