// Every request the discovery documents show an agent must work against the devnet the project
// ships: each operation of the committed openapi.json called with its parameters' examples, and
// each URL of llms.txt and llms-full.txt, sent over real HTTP to the REST app over the harness's
// indexed devnet. An example meant to show an error is marked in the document itself: a
// deprecated operation documents only its 410, and that is the status expected of it.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import {
  buildSchema,
  getNullableType,
  GraphQLEnumType,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLString,
  Kind,
  parse,
  type FieldNode,
  type GraphQLOutputType,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILE } from '../../gateway/print-schema.ts';
import { buildOpenApi } from '../../rest/openapi.ts';
import { OPENAPI_FILE } from '../../rest/print-openapi.ts';
import { MAX_URL_LENGTH } from '../../rest/problems.ts';
import { restServiceForSuite } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

interface Parameter {
  name: string;
  in: 'path' | 'query';
  required?: boolean;
  example?: unknown;
}
interface Operation {
  operationId: string;
  deprecated?: boolean;
  parameters?: Parameter[];
  responses: Record<string, unknown>;
}

const openapi = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as {
  paths: Record<string, { get?: Operation }>;
};

/**
 * The requests an agent can copy from one operation: its path with the path parameters'
 * examples, then with the required query examples alone, with each optional query example
 * added, and with every query example at once.
 */
function exampleRequests(template: string, operation: Operation): string[] {
  const params = operation.parameters ?? [];
  let path = template;
  for (const p of params.filter((q) => q.in === 'path')) {
    if (p.example === undefined)
      throw new Error(`${operation.operationId}: path parameter ${p.name} has no example`);
    path = path.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
  }
  const query = params.filter((p) => p.in === 'query');
  for (const p of query) {
    if (p.required && p.example === undefined)
      throw new Error(`${operation.operationId}: required query parameter ${p.name} has no example`);
  }
  const required = query.filter((p) => p.required);
  const optional = query.filter((p) => !p.required && p.example !== undefined);
  const url = (ps: Parameter[]) =>
    ps.length
      ? `${path}?${ps.map((p) => `${p.name}=${encodeURIComponent(String(p.example))}`).join('&')}`
      : path;
  return [
    ...new Set([
      url(required),
      ...optional.map((p) => url([...required, p])),
      url([...required, ...optional]),
    ]),
  ];
}

const operations = Object.entries(openapi.paths).flatMap(([template, item]) =>
  item.get ? [{ template, operation: item.get }] : [],
);

/** the schema /graphql serves, as committed */
const schema = buildSchema(readFileSync(SCHEMA_FILE, 'utf8'));

/**
 * Where `value`, the answer to `selections` on `type`, differs from what they ask for: each field
 * selected must be there and hold a value (no null, no empty list: an example shows data), of the
 * field's type in the schema (Int an integer, String a string, an enum one of its values, an object
 * with just the fields selected of it, a list of such items); nothing else may be there. Fragments
 * are not followed.
 */
function mismatches(
  type: GraphQLOutputType,
  selections: SelectionSetNode | undefined,
  value: unknown,
  path: string,
): string[] {
  const named = getNullableType(type);
  if (value === null || value === undefined)
    return [`${path}: ${String(value)}, not of type ${String(type)}`];
  if (named instanceof GraphQLList) {
    if (!Array.isArray(value)) return [`${path}: ${JSON.stringify(value)}, not a list`];
    if (value.length === 0) return [`${path}: an empty list`];
    return value.flatMap((item, i) => mismatches(named.ofType, selections, item, `${path}[${i}]`));
  }
  if (named instanceof GraphQLObjectType || named instanceof GraphQLInterfaceType) {
    if (typeof value !== 'object' || Array.isArray(value))
      return [`${path}: ${JSON.stringify(value)}, not an object`];
    const fields = (selections?.selections ?? []).filter((s): s is FieldNode => s.kind === Kind.FIELD);
    const record = value as Record<string, unknown>;
    const keys = fields.map((field) => (field.alias ?? field.name).value);
    const extra = Object.keys(record).filter((key) => !keys.includes(key));
    return [
      ...extra.map((key) => `${path}.${key}: not asked for`),
      ...fields.flatMap((field) => {
        const key = (field.alias ?? field.name).value;
        const fieldType =
          field.name.value === '__typename' ? GraphQLString : named.getFields()[field.name.value]?.type;
        if (!fieldType) return [`${path}.${key}: no field ${field.name.value} on ${named.name}`];
        return mismatches(fieldType, field.selectionSet, record[key], `${path}.${key}`);
      }),
    ];
  }
  if (named instanceof GraphQLEnumType)
    return named.getValue(String(value))
      ? []
      : [`${path}: ${JSON.stringify(value)}, not of type ${named.name}`];
  if (!(named instanceof GraphQLScalarType))
    return [`${path}: a ${named.name}, which this check cannot read`];
  const ofType: Record<string, (v: unknown) => boolean> = {
    Int: Number.isInteger,
    Float: (v) => typeof v === 'number',
    String: (v) => typeof v === 'string',
    ID: (v) => typeof v === 'string',
    Boolean: (v) => typeof v === 'boolean',
  };
  const check = ofType[named.name];
  if (check) return check(value) ? [] : [`${path}: ${JSON.stringify(value)}, not of type ${named.name}`];
  return []; // a scalar of the schema's own (JSON): any value
}

const service = restServiceForSuite();

describe('openapi.json examples', () => {
  it.each(operations.map(({ template, operation }) => [operation.operationId, template, operation] as const))(
    '%s: every example request answers as documented',
    async (_id, template, operation) => {
      const failures: string[] = [];
      for (const path of exampleRequests(template, operation)) {
        const { status, body } = await call(service.base, path);
        const works = operation.deprecated ? status === 410 : status >= 200 && status < 300;
        // a GraphQL answer reports its failures beside a 200
        const errors = (body as { errors?: unknown[] } | undefined)?.errors ?? [];
        if (!works || errors.length) failures.push(`${path} -> ${status} ${JSON.stringify(body)}`);
      }
      expect(failures).toEqual([]);
    },
  );

  const lists = operations.filter(({ template }) =>
    ['/v1/funds/{slug}/nav/history', '/v1/funds/{slug}/dividends', '/v1/events'].includes(template),
  );
  it.each(lists.map(({ template, operation }) => [operation.operationId, template, operation] as const))(
    '%s: every example request finds data',
    async (_id, template, operation) => {
      const empty: string[] = [];
      for (const path of exampleRequests(template, operation)) {
        const { body } = await call(service.base, path);
        const items = (body?.items ?? body?.points) as unknown[] | undefined;
        if (!items?.length) empty.push(path);
      }
      expect(empty).toEqual([]);
    },
  );
});

describe('openapi.json request body examples', () => {
  const bodies = (
    openapi.paths['/graphql'] as unknown as {
      post: { requestBody: { content: Record<string, { example?: unknown }> } };
    }
  ).post.requestBody.content;
  const examples = Object.entries(bodies).filter(([, media]) => media.example !== undefined);

  it.each(examples)(
    'POST /graphql with the %s example answers every field it asks for with a value of its type',
    async (mediaType, { example }) => {
      const body = typeof example === 'string' ? example : JSON.stringify(example);
      const document = typeof example === 'string' ? example : (example as { query: string }).query;
      const { status, body: answer } = await call(service.base, '/graphql', {
        method: 'POST',
        headers: { 'content-type': mediaType },
        body,
      });
      expect(status).toBe(200);
      expect(Object.keys(answer)).toEqual(['data']);
      const operation = parse(document).definitions[0] as OperationDefinitionNode;
      expect(mismatches(schema.getQueryType()!, operation.selectionSet, answer.data, 'data')).toEqual([]);
    },
  );
});

describe('openapi.json response examples', () => {
  const example200 = (template: string) =>
    (openapi.paths[template]?.get?.responses['200'] as { content: Record<string, { example: unknown }> })
      .content['application/json']?.example;

  // what the seeded scenario wrote does not move: the example is the devnet's own answer to the
  // request made of every example parameter
  it.each([
    '/v1/policies',
    '/v1/funds/{slug}',
    '/v1/funds/{slug}/nav',
    '/v1/funds/{slug}/nav/history',
    '/v1/funds/{slug}/dividends/{epoch}',
    '/v1/funds/{slug}/dividends/{epoch}/proof',
    '/v1/strategies/{slug}',
  ])('the %s example is what the devnet answers to its example request', async (template) => {
    const operation = openapi.paths[template]?.get as Operation;
    const path = exampleRequests(template, operation).at(-1) as string;
    const { status, body } = await call(service.base, path);
    expect(status).toBe(200);
    expect(example200(template)).toEqual(body);
  });

  it('the /v1/events example event is one the devnet indexed', async () => {
    const [example] = (example200('/v1/events') as { items: { blockNumber: number }[] }).items;
    const block = example?.blockNumber;
    const { body } = await call(service.base, `/v1/events?fromBlock=${block}&toBlock=${block}&limit=100`);
    expect(body.items).toContainEqual(example);
  });

  it('the /v1/contracts example is one of the contracts the devnet lists', async () => {
    const { body } = await call(service.base, '/v1/contracts');
    const [example] = (example200('/v1/contracts') as { items: unknown[] }).items;
    expect(body.items).toContainEqual(example);
  });
});

describe('openapi.json problem examples', () => {
  interface Problem {
    type: string;
    detail: string;
    instance: string;
    parameter?: string;
  }
  interface ProblemExample {
    operation: Operation;
    status: string;
    example: Problem;
  }

  /**
   * Every problem example of the document this service serves (its base in `type`), built from the
   * route table as it is now rather than read from the committed openapi.json, of GET operations
   * (POST /graphql shares GET's).
   */
  function problemExamples(): ProblemExample[] {
    const served = buildOpenApi(service.base, `${service.base}/problems`) as unknown as {
      paths: Record<string, { get: Operation }>;
    };
    return Object.values(served.paths).flatMap(({ get: operation }) =>
      Object.entries(operation.responses).flatMap(([status, response]) => {
        const content = (response as { content?: Record<string, { example?: Problem }> }).content;
        const example = content?.['application/problem+json']?.example;
        return example ? [{ operation, status, example }] : [];
      }),
    );
  }

  /** `path` with the operation's required query parameters, but `except`, at their examples */
  function withRequiredQuery(path: string, operation: Operation, except?: string): string {
    const query = (operation.parameters ?? [])
      .filter((p) => p.in === 'query' && p.required && p.name !== except)
      .map((p) => `${p.name}=${encodeURIComponent(String(p.example))}`);
    return query.length ? `${path}?${query.join('&')}` : path;
  }

  /** where what the service answers to each request differs from the example it documents */
  async function differences(requests: [string, Problem][]): Promise<string[]> {
    const found: string[] = [];
    for (const [request, example] of requests) {
      const body = (await (await fetch(`${service.base}${request}`)).json()) as Problem;
      if (!isDeepStrictEqual(body, example))
        found.push(`${request}: ${JSON.stringify(body)} documented as ${JSON.stringify(example)}`);
    }
    return found;
  }

  it('every 404 example is what the service answers to the path in its instance', async () => {
    const requests = problemExamples()
      .filter(({ status }) => status === '404')
      .map(({ operation, example }): [string, Problem] => [
        withRequiredQuery(example.instance, operation),
        example,
      ]);
    expect(requests.length).toBe(26);
    expect(await differences(requests)).toEqual([]);
  });

  it('every invalid-parameter example is what the service answers to its parameter at x', async () => {
    const requests = problemExamples()
      .filter(({ status, example }) => status === '400' && example.parameter !== undefined)
      .map(({ operation, example }): [string, Problem] => {
        const { instance, parameter } = example;
        const inPath = instance.split('/').includes('x');
        const request = withRequiredQuery(instance, operation, parameter);
        return [inPath ? request : `${request}${request.includes('?') ? '&' : '?'}${parameter}=x`, example];
      });
    expect(requests.length).toBe(16);
    expect(await differences(requests)).toEqual([]);
  });

  it('every 414 example is what the service answers to a URL one character over the limit', async () => {
    const requests = problemExamples()
      .filter(({ status }) => status === '414')
      .map(({ example }): [string, Problem] => {
        const url = `${example.instance}?pad=`;
        return [`${url}${'x'.repeat(MAX_URL_LENGTH + 1 - url.length)}`, example];
      });
    expect(requests.length).toBe(26);
    expect(await differences(requests)).toEqual([]);
  });

  it('every malformed-request example is what the service answers to a Host that is no host', async () => {
    const examples = problemExamples().filter(({ example }) => example.type.endsWith('/malformed-request'));
    expect(examples.length).toBe(10);
    const { port } = new URL(service.base);
    for (const { example } of examples) {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, path: example.instance, headers: { host: 'api example.com' } },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve(text));
          },
        );
        req.on('error', reject);
        req.end();
      });
      // refused before the Host can name a base, its type names the address connected to
      // (rest/request-guards.ts): the base the examples are built for here
      expect(JSON.parse(body), example.instance).toEqual(example);
    }
  });
});

describe('llms.txt and llms-full.txt links', () => {
  it.each(['/llms.txt', '/llms-full.txt'])('every URL of %s answers 2xx', async (document) => {
    const text = await (await fetch(`${service.base}${document}`)).text();
    // a URL ends at a space, a closing parenthesis or quote; a trailing colon or full stop is prose
    const found = text.match(new RegExp(`${service.base}[^\\s)\`"]*`, 'g')) ?? [];
    const urls = [...new Set(found.map((url) => url.replace(/[.,:;]+$/, '')))].filter(
      // llms-full.txt names the base URL itself as the base, not as a request
      (url) => url !== service.base,
    );
    expect(urls.length).toBeGreaterThan(16);
    const failures: string[] = [];
    for (const url of urls) {
      const response = await fetch(url);
      if (response.status < 200 || response.status >= 300)
        failures.push(`${url} -> ${response.status} ${(await response.text()).slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });
});
