// The discovery documents are generated from the route table; these tests keep the committed
// openapi.json in step with it, check it is valid OpenAPI 3.1, and check that the other
// documents only name operations that exist.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { printSchema, type GraphQLEnumType } from 'graphql';
import { schema } from '../../gateway/schema.ts';
import { CLAIM_SENDER } from '../../gateway/types/claim-call.ts';
import { agentsJson, aiPluginJson } from '../../rest/agents.ts';
import { DEVNET_EXAMPLES, documentExamples } from '../../rest/examples.ts';
import { GRAPHQL_REQUEST_TYPES } from '../../rest/graphql-http.ts';
import { claimableDividendsQuery, llmsFullTxt, llmsTxt } from '../../rest/llms.ts';
import { DISCOVERY_DOCUMENTS } from '../../rest/document-table.ts';
import { buildOpenApi, DEFAULT_BASE_URL } from '../../rest/openapi.ts';
import { OPENAPI_FILE, printedOpenApi } from '../../rest/print-openapi.ts';
import { ROUTES } from '../../rest/routes.ts';

type Doc = {
  paths: Record<
    string,
    { get: { operationId: string; responses: Record<string, unknown>; parameters?: unknown[] } }
  >;
};
const base = DEFAULT_BASE_URL;
const doc = buildOpenApi(base, `${base}/problems`) as unknown as Doc;

describe('openapi.json', () => {
  it('is committed exactly as the route table prints it (run npm run openapi:print after a change)', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(printedOpenApi());
  });

  it('validates as an OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(printedOpenApi()));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents all sixteen endpoints with 200 and every problem response they can give', () => {
    expect(ROUTES).toHaveLength(16);
    for (const route of ROUTES) {
      const responses = doc.paths[route.path]?.get.responses ?? {};
      // only a path naming a resource (a slug, an epoch) can name none
      const notFound = route.params.some((p) => p.in === 'path') ? ['404'] : [];
      expect(Object.keys(responses).sort(), route.path).toEqual(
        ['200', '304', '400', ...notFound, '414', '429', '500', '503'].sort(),
      );
    }
  });

  it('documents the 304, 414 and 429 of every discovery document', () => {
    for (const path of [
      '/',
      '/openapi.json',
      '/llms.txt',
      '/llms-full.txt',
      DISCOVERY_DOCUMENTS.graphqlSchema.path,
    ]) {
      const responses = doc.paths[path]?.get.responses ?? {};
      expect(Object.keys(responses).sort(), path).toEqual(['200', '304', '414', '429']);
    }
  });

  it("gives each 400 example the request whose parameter it refuses, and each 410 the service's words", () => {
    type Example = { content: Record<string, { example: { instance: string; detail: string } }> };
    const example = (path: string, status: string) =>
      (doc.paths[path]!.get.responses[status] as Example).content['application/problem+json']!.example;
    expect(example('/v1/funds/{slug}/dividends/{epoch}', '400')).toMatchObject({
      instance: '/v1/funds/harbor-stable-yield/dividends/x',
      detail: expect.stringContaining("got 'x'"),
    });
    expect(example('/v1/events', '400').instance).toBe('/v1/events?contract=x');
    expect(example('/v1/nav/{slug}', '410').detail).toBe(
      '/v1/nav/{slug} was removed in 1.0.0; use GET /v1/funds/harbor-stable-yield/nav.',
    );
  });

  it('documents every request body /graphql parses, and says /graphql takes POST', () => {
    const graphql = doc.paths['/graphql'] as unknown as {
      post: { requestBody: { content: Record<string, unknown> } };
    };
    expect(Object.keys(graphql.post.requestBody.content).sort()).toEqual([...GRAPHQL_REQUEST_TYPES].sort());
    const info = (doc as unknown as { info: { description: string } }).info.description;
    expect(info).not.toMatch(/^Every endpoint is GET/);
    expect(info).toContain('/graphql takes GET and POST');
    expect(info).toContain(`GET ${DISCOVERY_DOCUMENTS.graphqlSchema.path}`);
  });

  it('states the NAV history bounds and default from SPEC.md', () => {
    const params = doc.paths['/v1/funds/{slug}/nav/history']?.get.parameters as {
      name: string;
      schema: Record<string, number>;
    }[];
    expect(params.find((p) => p.name === 'limit')?.schema).toMatchObject({
      minimum: 1,
      maximum: 500,
      default: 90,
    });
    expect(params.find((p) => p.name === 'from')?.schema).toMatchObject({ minimum: 0 });
    expect(params.find((p) => p.name === 'to')?.schema).toMatchObject({ minimum: 0 });
  });
});

describe('agents.json and llms documents', () => {
  it('agents.json flows name only operations of openapi.json', () => {
    const operationIds = new Set(Object.values(doc.paths).map((p) => p.get.operationId));
    const agents = agentsJson(base) as { flows: { title: string; actions: { operationId: string }[] }[] };
    expect(agents.flows.map((f) => f.title)).toEqual(['Fund NAV lookup', 'Dividend claim proof']);
    for (const flow of agents.flows) {
      for (const action of flow.actions)
        expect(operationIds.has(action.operationId), action.operationId).toBe(true);
    }
  });

  it('llms-full.txt, llms.txt, agents.json and the plugin manifest point to GraphQL and its schema', () => {
    const full = llmsFullTxt(base, `${base}/problems`);
    expect(full).toContain('\n## GraphQL\n');
    for (const document of [
      full,
      llmsTxt(base),
      JSON.stringify(agentsJson(base)),
      JSON.stringify(aiPluginJson(base, DEVNET_EXAMPLES.registry)),
    ]) {
      expect(document).toContain('/graphql');
      expect(document).toContain(DISCOVERY_DOCUMENTS.graphqlSchema.path);
    }
  });

  it("the plugin manifest keeps the plugin format's field limits", () => {
    const plugin = aiPluginJson(base, DEVNET_EXAMPLES.registry) as Record<string, string>;
    expect(plugin.name_for_human!.length).toBeLessThanOrEqual(20);
    expect(plugin.name_for_model).toMatch(/^[a-zA-Z0-9_]{1,50}$/);
    expect(plugin.description_for_human!.length).toBeLessThanOrEqual(100);
    expect(plugin.description_for_model!.length).toBeLessThanOrEqual(8000);
    expect(plugin).toMatchObject({ auth: { type: 'none' }, api: { is_user_authenticated: false } });
  });

  it('llms.txt links every endpoint and llms-full.txt documents each one', () => {
    const short = llmsTxt(base);
    const full = llmsFullTxt(base, `${base}/problems`);
    expect(short.startsWith('# ')).toBe(true);
    for (const route of ROUTES) {
      expect(short).toContain(`GET ${route.path}]`);
      expect(full).toContain(`### GET ${route.path}\n`);
    }
  });

  it('word who sends a claim the one way the contract allows, in every document', () => {
    for (const [name, document] of Object.entries({
      'llms.txt': llmsTxt(base),
      'llms-full.txt': llmsFullTxt(base, `${base}/problems`),
      'agents.json': JSON.stringify(agentsJson(base)),
      'ai-plugin.json': JSON.stringify(aiPluginJson(base, DEVNET_EXAMPLES.registry)),
      'openapi.json': JSON.stringify(doc),
      'schema.graphql': printSchema(schema),
    })) {
      expect(document, name).toContain(CLAIM_SENDER);
      expect(document, name).not.toMatch(/own wallet|signed by any wallet|from any wallet/);
    }
  });

  it("llms.txt states the rate limits and the one-request GraphQL recipe for a holder's dividends", () => {
    const short = llmsTxt(base, DEVNET_EXAMPLES, { perMinute: 30, burst: 7, burstWindowSeconds: 10 });
    expect(short).toContain(
      'Rate limits: 30 requests per minute per IP sustained, and a burst of 7 requests per 10 seconds',
    );
    const { fund, scenario } = DEVNET_EXAMPLES;
    expect(short).toContain(
      `POST /graphql with the query \`${claimableDividendsQuery(fund.slug, scenario!.proof.account)}\``,
    );
    expect(llmsTxt(base, DEVNET_EXAMPLES, false)).toContain(
      'Rate limits: This deployment enforces no rate limit.',
    );
  });

  it('llms-full.txt gives the stall rule, and calls the devnet clock synthetic only on the devnet', () => {
    const devnet = llmsFullTxt(base, `${base}/problems`);
    expect(devnet).toMatch(
      /across polls of GET \/v1\/health indexer\.maxIndexedBlock stays the same while indexer\.chainHeadBlock advances/,
    );
    expect(devnet).toContain("This deployment's chain is the local devnet, whose clock is synthetic");
    const registry = {
      ...DEVNET_EXAMPLES.registry,
      network: 'sepolia',
      chain: { id: 11155111, name: 'Sepolia', explorer: 'https://sepolia.etherscan.io', isTestnet: true },
    };
    const sepolia = llmsFullTxt(base, `${base}/problems`, documentExamples(registry));
    expect(sepolia).toContain('indexer.chainHeadBlock advances');
    expect(sepolia).not.toContain('clock is synthetic');
  });

  it("say what a closed fund is in the GraphQL enum's words, in openapi.json and llms-full.txt: closed to subscriptions, redemptions going on", () => {
    const closed = (schema.getType('FundStatus') as GraphQLEnumType).getValue('closed')?.description;
    expect(closed).toBe(
      'closed to new subscriptions for good (FundClosed), whatever is paused; redemptions and settlement go on so holders can exit',
    );
    const { components } = doc as unknown as {
      components: { schemas: Record<string, { description: string }> };
    };
    expect(components.schemas.FundStatus?.description).toContain(`closed: ${closed}.`);
    expect(llmsFullTxt(base, `${base}/problems`)).toContain(`closed (${closed}).`);
  });

  it('llms-full.txt says how old a cached fund status or claimed may be and how to revalidate', () => {
    const full = llmsFullTxt(base, `${base}/problems`);
    expect(full).toContain('the fund `status` of GET /v1/protocol (reference tier, up to 3600 s old;');
    expect(full).toContain("a proof's `claimed` (history tier, up to 300 s old)");
    expect(full).toContain(
      'send If-None-Match with the ETag you hold (304 if it is still current, else the new body), or Cache-Control: no-cache',
    );
  });
});
