// Generates /.well-known/agents.json (agents.json 0.1.0: flows chaining OpenAPI operations),
// /.well-known/ai-plugin.json, and the index at / that points a client which starts at the root to
// all of them. Operation ids come from the route table, and a test checks that every flow action
// names an operation that exists in openapi.json.
import { API_TITLE, GRAPHQL_SUMMARY } from './openapi.ts';
import { API_VERSION } from '../gateway/server.ts';
import type { Registry } from '../gateway/sources/registry.ts';
import { CLAIM_SENDER, CLAIM_SIGNATURE } from '../gateway/claim-function.ts';
import { DISCOVERY_DOCUMENTS, LOGO_PATH, type DocumentName } from './document-table.ts';
import { CLAIMABLE_DIVIDENDS_ANSWER, claimableDividendsQuery } from './llms.ts';
// operation ids are the same in every registry's route table
import { ROUTES } from './routes.ts';

const SOURCE_ID = 'fund_protocol_api';

function operationIdOf(path: string): string {
  const route = ROUTES.find((r) => r.path === path);
  if (!route) throw new Error(`agents.json names unknown path ${path}`);
  return route.operationId;
}

export function agentsJson(baseUrl: string): Record<string, unknown> {
  const action = (id: string, path: string) => ({
    id,
    sourceId: SOURCE_ID,
    operationId: operationIdOf(path),
  });
  return {
    agentsJson: '0.1.0',
    info: {
      title: API_TITLE,
      version: API_VERSION,
      description: `Read-only fund protocol data: NAV lookups and dividend claim proofs through the REST operations of the OpenAPI source. No authentication. ${GRAPHQL_SUMMARY} The source documents it as the operations graphqlGet and graphqlPost.`,
    },
    sources: [{ id: SOURCE_ID, path: `${baseUrl}${DISCOVERY_DOCUMENTS.openapi.path}` }],
    overrides: [],
    flows: [
      {
        id: 'fund_nav_lookup',
        title: 'Fund NAV lookup',
        description:
          'Find a fund by name among GET /v1/funds, then read its latest published NAV (and optionally its history). navPerShare is a decimal string with 6 places.',
        actions: [
          action('list_funds', '/v1/funds'),
          action('get_latest_nav', '/v1/funds/{slug}/nav'),
          action('get_nav_history', '/v1/funds/{slug}/nav/history'),
        ],
        links: [
          {
            origin: { actionId: 'list_funds', fieldPath: 'responses.success.items[].slug' },
            target: { actionId: 'get_latest_nav', fieldPath: 'parameters.slug' },
          },
          {
            origin: { actionId: 'list_funds', fieldPath: 'responses.success.items[].slug' },
            target: { actionId: 'get_nav_history', fieldPath: 'parameters.slug' },
          },
        ],
        fields: {
          parameters: [
            { name: 'fund', type: 'string', required: true, description: 'fund name or slug to look up' },
          ],
          responses: {
            success: {
              type: 'object',
              properties: {
                fund: { type: 'string', description: 'fund slug' },
                nav: { type: 'object', description: 'latest published NAV record' },
              },
            },
          },
        },
      },
      {
        id: 'dividend_claim_proof',
        title: 'Dividend claim proof',
        description: `List a fund's dividend rounds, then fetch the Merkle proof for the holder's address: its \`claim\` is the DividendDistributor transaction that pays it (${CLAIM_SIGNATURE}), \`to\` and \`data\` ready to send; simulate it (eth_call) first. ${CLAIM_SENDER}. Every round at once, in one request instead of these calls: the graphqlPost operation with the query ${claimableDividendsQuery('<fund slug>', '<holder 0x address>')}. ${CLAIMABLE_DIVIDENDS_ANSWER}.`,
        actions: [
          action('list_funds', '/v1/funds'),
          action('list_dividend_rounds', '/v1/funds/{slug}/dividends'),
          action('get_dividend_proof', '/v1/funds/{slug}/dividends/{epoch}/proof'),
        ],
        links: [
          {
            origin: { actionId: 'list_funds', fieldPath: 'responses.success.items[].slug' },
            target: { actionId: 'list_dividend_rounds', fieldPath: 'parameters.slug' },
          },
          {
            origin: { actionId: 'list_dividend_rounds', fieldPath: 'responses.success.fund' },
            target: { actionId: 'get_dividend_proof', fieldPath: 'parameters.slug' },
          },
          {
            origin: { actionId: 'list_dividend_rounds', fieldPath: 'responses.success.items[].epoch' },
            target: { actionId: 'get_dividend_proof', fieldPath: 'parameters.epoch' },
          },
          // the flow's own input, as agents.json links a flow's parameters: its id as the origin
          {
            origin: { actionId: 'dividend_claim_proof', fieldPath: 'parameters.address' },
            target: { actionId: 'get_dividend_proof', fieldPath: 'parameters.address' },
          },
        ],
        fields: {
          parameters: [
            { name: 'fund', type: 'string', required: true, description: 'fund name or slug' },
            { name: 'address', type: 'string', required: true, description: "the holder's 0x address" },
          ],
          responses: {
            success: {
              type: 'object',
              properties: {
                data: {
                  type: 'object',
                  description:
                    'the proof: vault, epoch, account, amountRaw and proof, claimed, and claim (to, data, signature, selector, args): the transaction to send',
                },
              },
            },
          },
        },
      },
    ],
  };
}

/** the plugin manifest; its contact is the registry's (protocol.contactEmail) */
export function aiPluginJson(baseUrl: string, registry: Registry): Record<string, unknown> {
  return {
    schema_version: 'v1',
    // the plugin format allows 20 characters
    name_for_human: 'Fund Protocol Data',
    name_for_model: 'fund_protocol_data',
    description_for_human:
      'Fund NAVs, allocations, reserves, dividends and on-chain events of a fund-vault protocol.',
    description_for_model: `Read-only API of a fund-vault protocol. Call GET /v1/funds first to learn fund slugs. Amounts are exact decimal strings. Errors are RFC 9457 problem+json whose detail says what to fix. A dividend proof carries \`claim\`, the transaction that pays it (to and data): ${CLAIM_SENDER}; never ask for keys. For fields of your choice, query GraphQL at /graphql (schema: GET ${DISCOVERY_DOCUMENTS.graphqlSchema.path}).`,
    auth: { type: 'none' },
    api: {
      type: 'openapi',
      url: `${baseUrl}${DISCOVERY_DOCUMENTS.openapi.path}`,
      is_user_authenticated: false,
    },
    logo_url: `${baseUrl}${LOGO_PATH}`,
    contact_email: registry.protocol.contactEmail,
    legal_info_url: `${baseUrl}${DISCOVERY_DOCUMENTS.llms.path}`,
  };
}

/** GET /: where everything is, for a client (or an agent) that starts at the root. */
export function serviceIndex(baseUrl: string): Record<string, unknown> {
  const link = (name: DocumentName) => `${baseUrl}${DISCOVERY_DOCUMENTS[name].path}`;
  return {
    name: API_TITLE,
    version: API_VERSION,
    description:
      'Read-only API of a fund-vault protocol: REST under /v1 and GraphQL at /graphql; no authentication.',
    links: {
      openapi: link('openapi'),
      llms: link('llms'),
      llmsFull: link('llmsFull'),
      agents: link('agents'),
      aiPlugin: link('aiPlugin'),
      graphql: `${baseUrl}/graphql`,
      graphqlSchema: link('graphqlSchema'),
      health: `${baseUrl}/v1/health`,
      funds: `${baseUrl}/v1/funds`,
    },
  };
}
