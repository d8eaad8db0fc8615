// openapi.json must document the GraphQL request as /graphql reads it: the parameters of a GET (and
// the fields of a JSON or form body) are those the service takes, `extensions` included, which
// llms-full.txt names too; checked against the service over real HTTP and the registry alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi, DEFAULT_BASE_URL, GRAPHQL_EXTENSIONS } from '../../rest/openapi.ts';
import { llmsFullTxt } from '../../rest/llms.ts';
import { listen, registryOnlyRestApp } from '../harness/stack.ts';

let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await listen(registryOnlyRestApp());
});
afterAll(() => server.close());

type Schema = { properties: Record<string, { description: string }> };
const graphql = (
  buildOpenApi(DEFAULT_BASE_URL, `${DEFAULT_BASE_URL}/problems`).paths as Record<
    string,
    Record<
      string,
      { parameters?: { name: string }[]; requestBody?: { content: Record<string, { schema: Schema }> } }
    >
  >
)['/graphql']!;
const QUERY = encodeURIComponent('{ protocol { version } }');

describe('the GraphQL request openapi.json documents', () => {
  it('takes query, variables, operationName and extensions in a GET, a JSON body and a form', () => {
    const names = ['query', 'variables', 'operationName', 'extensions'];
    expect(graphql.get!.parameters!.map((p) => p.name)).toEqual(names);
    const bodies = graphql.post!.requestBody!.content;
    for (const type of ['application/json', 'application/graphql+json', 'application/x-www-form-urlencoded'])
      expect(Object.keys(bodies[type]!.schema.properties), type).toEqual(names);
    expect(bodies['application/json']!.schema.properties.extensions!.description).toBe(GRAPHQL_EXTENSIONS);
  });

  it('names in a GET only parameters the service reads as GraphQL parameters: each given twice is refused by name', async () => {
    for (const { name } of graphql.get!.parameters!) {
      const response = await fetch(`${server.url}/graphql?query=${QUERY}&${name}={}&${name}={}`);
      expect(response.status, name).toBe(400);
      expect(((await response.json()) as { parameter: string }).parameter).toBe(name);
    }
  });

  it('says extensions leave the answer as it is, as they do, in openapi.json and llms-full.txt', async () => {
    const plain = await fetch(`${server.url}/graphql?query=${QUERY}`);
    const extended = await fetch(
      `${server.url}/graphql?query=${QUERY}&extensions=${encodeURIComponent('{"trace":true}')}`,
    );
    expect(extended.status).toBe(200);
    expect(await extended.json()).toEqual(await plain.json());
    expect(GRAPHQL_EXTENSIONS).toBe(
      'request extensions (GraphQL over HTTP), a JSON object: accepted, and none changes the answer; a persisted query (extensions.persistedQuery without query) is refused with PERSISTED_QUERY_NOT_SUPPORTED: send the document itself',
    );
    expect(llmsFullTxt(DEFAULT_BASE_URL, `${DEFAULT_BASE_URL}/problems`)).toContain(
      `GET /graphql?query=<document>&variables=<JSON object>&operationName=<name>&extensions=<JSON object>, or POST /graphql`,
    );
  });
});
