// The discovery documents are generated from the route table; these tests keep the committed
// openapi.json in step with it, check it is valid OpenAPI 3.1, and check that the other
// documents only name operations that exist.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { printSchema, type GraphQLEnumType, type GraphQLObjectType } from 'graphql';
import { schema } from '../../gateway/schema.ts';
import { CLAIM_SENDER } from '../../gateway/claim-function.ts';
import { agentsJson, aiPluginJson } from '../../rest/agents.ts';
import { DEVNET_EXAMPLES, documentExamples } from '../../rest/examples.ts';
import { GRAPHQL_REQUEST_TYPES } from '../../rest/graphql-http.ts';
import { claimableDividendsQuery, llmsFullTxt, llmsTxt } from '../../rest/llms.ts';
import { DISCOVERY_DOCUMENTS } from '../../rest/document-table.ts';
import { buildOpenApi, DEFAULT_BASE_URL } from '../../rest/openapi.ts';
import { OPENAPI_FILE, printedOpenApi } from '../../rest/print-openapi.ts';
import { DEFAULT_RATE_LIMIT } from '../../rest/rate-limit.ts';
import { ROUTES } from '../../rest/routes.ts';
import type { JsonSchema } from '../../rest/schemas.ts';

type Doc = {
  paths: Record<
    string,
    { get: { operationId: string; responses: Record<string, unknown>; parameters?: unknown[] } }
  >;
};
const base = DEFAULT_BASE_URL;
/** the devnet's registry as if it named a public test network */
const SEPOLIA_REGISTRY = {
  ...DEVNET_EXAMPLES.registry,
  network: 'sepolia',
  chain: { id: 11155111, name: 'Sepolia', explorer: 'https://sepolia.etherscan.io', isTestnet: true },
};
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
      expect(Object.keys(responses), route.path).toEqual([
        '200',
        '304',
        '400',
        '404',
        '414',
        '429',
        '500',
        '503',
      ]);
    }
  });

  it('lists 400, 404, 429 and 500 for every operation, as SPEC.md requires of every endpoint', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { responses: Record<string, unknown> }>).map(
        ([method, operation]) => ({ name: `${method} ${path}`, statuses: Object.keys(operation.responses) }),
      ),
    );
    expect(operations).toHaveLength(27);
    for (const { name, statuses } of operations)
      expect(statuses, name).toEqual(expect.arrayContaining(['400', '404', '429', '500']));
  });

  it('documents the 304, 400, 404, 414, 429 and 500 of every discovery document', () => {
    for (const { path } of Object.values(DISCOVERY_DOCUMENTS)) {
      const responses = doc.paths[path]?.get.responses ?? {};
      expect(Object.keys(responses), path).toEqual(['200', '304', '400', '404', '414', '429', '500']);
    }
  });

  it('documents the 410 of a removed route beside the 400, 404, 414, 429 and 500 of any path', () => {
    for (const path of ['/v1/nav/{slug}', '/v1/funds/{slug}/navs']) {
      const responses = doc.paths[path]?.get.responses ?? {};
      expect(Object.keys(responses), path).toEqual(['400', '404', '410', '414', '429', '500']);
    }
  });

  it('documents the 414 a long GET /graphql gets, saying to POST it, and the 404 and 500 of /graphql', () => {
    const graphql = doc.paths['/graphql'] as unknown as Record<
      'get' | 'post',
      { responses: Record<string, { content: Record<string, { example: { detail: string } }> }> }
    >;
    expect(Object.keys(graphql.get.responses)).toEqual(['200', '400', '404', '406', '414', '429', '500']);
    expect(Object.keys(graphql.post.responses)).toEqual([
      '200',
      '400',
      '404',
      '406',
      '411',
      '413',
      '414',
      '415',
      '429',
      '500',
    ]);
    expect(graphql.get.responses['414']!.content['application/problem+json']!.example.detail).toContain(
      'Send a query this long with POST /graphql',
    );
  });

  it("gives each 400 example the path of the request whose parameter it refuses, as the service does, and each 410 the service's words", () => {
    type Example = {
      content: Record<string, { example: { instance: string; detail: string; parameter: string } }>;
    };
    const example = (path: string, status: string) =>
      (doc.paths[path]!.get.responses[status] as Example).content['application/problem+json']!.example;
    expect(example('/v1/funds/{slug}/dividends/{epoch}', '400')).toMatchObject({
      instance: '/v1/funds/harbor-stable-yield/dividends/x',
      detail: expect.stringContaining("got 'x'"),
    });
    expect(example('/v1/events', '400')).toMatchObject({ instance: '/v1/events', parameter: 'contract' });
    expect(example('/v1/protocol', '400')).toMatchObject({ instance: '/v1/protocol', parameter: 'limit' });
    expect(example('/v1/nav/{slug}', '410').detail).toBe(
      '/v1/nav/{slug} was removed in 1.0.0; use GET /v1/funds/harbor-stable-yield/nav.',
    );
  });

  it("says the health example's deployment id is graph-node's, unlike the embedded indexer's, which changes with each build", () => {
    const health = doc.paths['/v1/health']!.get.responses['200'] as {
      content: Record<string, { example: { indexer: { deployment: string } } }>;
    };
    expect(health.content['application/json']!.example.indexer.deployment).toMatch(
      /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/,
    );
    const { components } = doc as unknown as {
      components: {
        schemas: Record<
          string,
          { properties: { indexer: { properties: Record<string, { description: string }> } } }
        >;
      };
    };
    expect(components.schemas.HealthRecord!.properties.indexer.properties.deployment!.description).toContain(
      "graph-node's ids are IPFS hashes (Qm…, as in the example); the embedded indexer's (devnet mode) are an L and 45 hex digits, a hash of its build and network addresses, so they change with every build of the subgraph",
    );
  });

  it('gives no problem example a query string in its instance, which is the request path', () => {
    const instances = [...JSON.stringify(doc).matchAll(/"instance":"([^"]*)"/g)].map(
      ([, instance]) => instance,
    );
    expect(instances.length).toBeGreaterThan(100);
    expect(instances.filter((instance) => instance!.includes('?'))).toEqual([]);
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

  it('llms-full.txt lists for each endpoint the problem statuses openapi.json documents', () => {
    for (const rateLimit of [DEFAULT_RATE_LIMIT, false] as const) {
      const full = llmsFullTxt(base, `${base}/problems`, DEVNET_EXAMPLES, rateLimit);
      const documented = buildOpenApi(base, `${base}/problems`, DEVNET_EXAMPLES, rateLimit) as unknown as Doc;
      for (const route of ROUTES) {
        const section = full.slice(full.indexOf(`### GET ${route.path}\n`));
        const errors = /^Errors: (.*)$/m.exec(section)?.[1] ?? '';
        const listed = [...errors.matchAll(/(?:^|, )(\d{3}) /g)].map(([, status]) => status);
        const problems = Object.keys(documented.paths[route.path]!.get.responses).filter(
          (status) => status >= '400',
        );
        expect(listed, `${route.path} ${rateLimit ? 'limited' : 'unlimited'}`).toEqual(problems);
      }
    }
  });

  it('llms-full.txt says what a 404 of an endpoint that names no resource is: a path below it', () => {
    const full = llmsFullTxt(base, `${base}/problems`);
    expect(full).toContain(
      'Errors: 400 invalid-parameter, 404 not-found (a path below it, such as /v1/protocol/x, is no endpoint), 414 uri-too-long, 429 rate-limited, 500 internal-error, 503 upstream-unavailable.',
    );
    expect(full).toContain('404 not-found (a path below it, such as /v1/funds/x/x, is no endpoint)');
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
    const sepolia = llmsFullTxt(base, `${base}/problems`, documentExamples(SEPOLIA_REGISTRY));
    expect(sepolia).toContain('indexer.chainHeadBlock advances');
    expect(sepolia).not.toContain('clock is synthetic');
  });

  it("openapi.json says to judge freshness by blocks, and that the devnet's synthetic clock makes X-Data-Lag-Seconds meaningless only on the devnet", () => {
    const lagHeader = (document: JsonSchema) =>
      (document.components as { headers: Record<string, { description: string }> }).headers[
        'X-Data-Lag-Seconds'
      ]!.description;
    const freshness = (document: JsonSchema) =>
      ((document.info as { description: string }).description.split('\n\n') as string[]).find((p) =>
        p.startsWith('Freshness: '),
      );
    const devnet = buildOpenApi(base, `${base}/problems`);
    const sepolia = buildOpenApi(base, `${base}/problems`, documentExamples(SEPOLIA_REGISTRY));
    const rule =
      'Judge freshness by blocks: X-Indexed-Block-Lag (the chain head minus X-Indexed-Block) and GET /v1/health indexer.lagBlocks';
    for (const document of [devnet, sepolia]) {
      expect(lagHeader(document)).toBe(
        `server time minus X-Indexed-At when the answer was sent, in seconds: how old the block's timestamp is, not how far the index is behind (a quiet chain's last block is old however current the index, and on a devnet with synthetic block timestamps it says nothing about staleness). ${rule}`,
      );
      expect(freshness(document)).toContain(
        `${rule}. X-Data-Lag-Seconds is wall-clock time minus the indexed block's timestamp: on a quiet chain it grows while the index is current`,
      );
    }
    expect(freshness(devnet)).toContain(
      "on this deployment's chain, the local devnet, whose block timestamps are synthetic (they start at 2025-01-01), it is hundreds of days whatever the state of the index: here it says nothing about staleness.",
    );
    expect(freshness(sepolia)).toMatch(/current, so by itself it says nothing about staleness\.$/);
  });

  it('tell which amount of a proof to show, and that a null proof beside another error than NOT_FOUND is no answer, in llms.txt, llms-full.txt and agents.json', () => {
    const { account } = DEVNET_EXAMPLES.scenario!.proof;
    expect(claimableDividendsQuery(DEVNET_EXAMPLES.fund.slug, account)).toContain(
      `proof(address: "${account}") { amount amountRaw claimed claim { to data } }`,
    );
    for (const [name, document] of Object.entries({
      'llms.txt': llmsTxt(base),
      'llms-full.txt': llmsFullTxt(base, `${base}/problems`),
      'agents.json': JSON.stringify(agentsJson(base)),
    })) {
      expect(document, name).toContain(
        "Show a person `amount`, the dividend as a decimal string in the fund's base asset (its decimals applied); `amountRaw` is the same dividend as an integer in base units (amount times 10^decimals: 10^6 for USDC), the value the claim call takes: never show or add up amountRaw as an amount.",
      );
      expect(document, name).toContain(
        'A proof (or dividends) that is null beside any other error (UPSTREAM_UNAVAILABLE, INTERNAL) means not known for now, never that there is no dividend: ask again later.',
      );
    }
  });

  it('open by saying where the chain is: the local devnet, or the registry’s public test network', () => {
    const opening = (text: string) => text.split('\n').find((line) => line.startsWith('> '));
    expect(opening(llmsTxt(base))).toMatch(
      /^> Anonymous, read-only JSON API over a fund-vault protocol on a local development chain \(the devnet\): funds/,
    );
    expect(opening(llmsFullTxt(base, `${base}/problems`, documentExamples(SEPOLIA_REGISTRY)))).toMatch(
      /^> Anonymous, read-only JSON API over a fund-vault protocol on a public test network \(Sepolia\): funds/,
    );
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

  it("say what a rejection does to a NAV record in the GraphQL enum's words, in openapi.json and llms-full.txt: back to Draft, to be re-drafted", () => {
    const navStatus = schema.getType('NavStatus') as GraphQLEnumType;
    const lifecycle =
      'Draft -> PendingVerification (submit) -> Verified (verify) -> Published (publish); a rejection from PendingVerification or Verified returns the record to Draft; Published is final';
    const draft =
      'drafted by the NAV operator (NavDrafted), or sent back by a rejection (NavRejected), where it may be re-drafted';
    expect(navStatus.description).toBe(`${lifecycle}.`);
    expect(navStatus.getValue('Draft')?.description).toBe(draft);
    const { components } = doc as unknown as {
      components: { schemas: Record<string, { properties: Record<string, { description: string }> }> };
    };
    const rest = components.schemas.NavRecord?.properties.status?.description;
    expect(rest).toBe(
      `${lifecycle}. Draft: ${draft}; PendingVerification: submitted for verification (NavSubmitted); Verified: approved by a verifier (NavVerified), waiting to be published; Published: published (NavPublished), in epoch order after the fund's previous epoch; final.`,
    );
    expect(llmsFullTxt(base, `${base}/problems`)).toContain(`- NAV record status: ${rest}\n`);
  });

  it("describe each policy parameter in the GraphQL type's words in openapi.json", () => {
    const { components } = doc as unknown as {
      components: {
        schemas: Record<string, { description: string; properties: Record<string, { description: string }> }>;
      };
    };
    for (const name of ['FixedPlusFloatParams', 'FractionalKellyParams']) {
      const graphqlType = schema.getType(name) as GraphQLObjectType;
      const restType = components.schemas[name]!;
      expect(restType.description, name).toBe(graphqlType.description);
      const described = Object.fromEntries(
        Object.entries(restType.properties).map(([field, p]) => [field, p.description]),
      );
      expect(described, name).toEqual(
        Object.fromEntries(Object.values(graphqlType.getFields()).map((f) => [f.name, f.description])),
      );
    }
    expect(components.schemas.FractionalKellyParams?.properties.varianceBps?.description).toBe(
      'annual variance of the return (400 = 0.04)',
    );
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
