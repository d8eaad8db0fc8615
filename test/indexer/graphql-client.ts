// Posts graph-node-dialect queries to an indexer endpoint in the end-to-end tests.
import { expect } from 'vitest';

/** A query's variables, by name. */
export type Variables = Record<string, unknown>;

/**
 * The whole answer to a query: its data and its errors, as the endpoint sent them. Fails the test
 * unless the endpoint answers 200, as it does every query it parses, errors or not.
 */
export async function queryAnswer<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables?: Variables,
): Promise<{ data?: T | null; errors?: { message: string }[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { data?: T | null; errors?: { message: string }[] };
}

/** The messages of the errors a query is answered with (joined by newlines); fails the test if none. */
export async function queryErrorOf(url: string, query: string, variables?: Variables): Promise<string> {
  const body = await queryAnswer(url, query, variables);
  expect(body.errors?.length).toBeGreaterThan(0);
  return body.errors!.map((e) => e.message).join('\n');
}

/** The data a query is answered with; fails the test if it is answered with errors. */
export async function queryIndexer<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables?: Variables,
): Promise<T> {
  const body = await queryAnswer<T>(url, query, variables);
  expect(body.errors).toBeUndefined();
  return body.data!;
}

/**
 * A query of `scans` filters, each reading every ProtocolEvent and matching none: slow in
 * proportion to the events stored, with an empty answer (no index serves `_contains`).
 */
export function scanningQuery(scans: number): string {
  const fields = Array.from(
    { length: scans },
    (_, i) => `s${i}: protocolEvents(where: { args_contains: "absent" }) { id }`,
  );
  return `{ ${fields.join(' ')} }`;
}

/** The ids a query's single top-level list holds. */
export async function idsOf(url: string, query: string, variables?: Variables): Promise<string[]> {
  const data = await queryIndexer(url, query, variables);
  return (Object.values(data)[0] as { id: string }[]).map((row) => row.id);
}

/**
 * The status of the deployment served beside the query endpoint `queryUrl`, from its index-node
 * status API (`/graphql`), with the fields `selection` asks for; fails the test unless there is one.
 */
export async function indexingStatusOf<T>(queryUrl: string, selection: string): Promise<T> {
  const { indexingStatuses } = await queryIndexer<{ indexingStatuses: T[] }>(
    new URL('/graphql', queryUrl).href,
    `{ indexingStatuses { ${selection} } }`,
  );
  expect(indexingStatuses).toHaveLength(1);
  return indexingStatuses[0]!;
}
