// Generates /.well-known/agents.json (agents.json 0.1.0: flows chaining OpenAPI operations),
// /.well-known/ai-plugin.json, and the index at / that points a client which starts at the root to
// all of them. Operation ids come from the route table, and a test checks that every flow action
// names an operation that exists in openapi.json; another runs each flow from its inputs alone, as
// agents.json's reference executor does (test/rest/discovery-agents-flows.test.ts).
import { API_TITLE, GRAPHQL_SUMMARY } from './openapi.ts';
import { NAV_HISTORY_LIMIT } from '../gateway/inputs.ts';
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

/**
 * A link of a flow: `origin`'s value put at `target`. An origin or target whose action id is the
 * flow's own is the flow's input (`parameters.x`) or its answer (`responses.success.x`), as the
 * reference executor of agents.json keeps them; an array element is named by its index
 * (items.0.epoch), as the agents.json schema's paths are.
 */
const link = (origin: [string, string], target: [string, string]) => ({
  origin: { actionId: origin[0], fieldPath: origin[1] },
  target: { actionId: target[0], fieldPath: target[1] },
});

/** the `fund` input of both flows: a slug, which GET /v1/funds lists beside each fund's name */
const FUND_PARAMETER = {
  name: 'fund',
  type: 'string',
  required: true,
  description:
    "the fund's slug, not its name: GET /v1/funds (operation listFunds) lists each fund's slug (items[].slug) beside its name",
};

export function agentsJson(baseUrl: string): Record<string, unknown> {
  const action = (id: string, path: string) => ({
    id,
    sourceId: SOURCE_ID,
    operationId: operationIdOf(path),
  });
  const navFlow = 'fund_nav_lookup';
  const claimFlow = 'dividend_claim_proof';
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
        id: navFlow,
        title: 'Fund NAV lookup',
        description:
          "Read a fund's latest published NAV and its NAV history. The input `fund` is a fund slug, not a name: to find a fund by name, call GET /v1/funds (operation listFunds) first and take the slug beside it. navPerShare is a decimal string with 6 places.",
        actions: [
          action('get_latest_nav', '/v1/funds/{slug}/nav'),
          action('get_nav_history', '/v1/funds/{slug}/nav/history'),
        ],
        links: [
          link([navFlow, 'parameters.fund'], ['get_latest_nav', 'parameters.slug']),
          link([navFlow, 'parameters.fund'], ['get_nav_history', 'parameters.slug']),
          link(['get_latest_nav', 'responses.success.fund'], [navFlow, 'responses.success.fund']),
          link(['get_latest_nav', 'responses.success.nav'], [navFlow, 'responses.success.nav']),
          link(['get_nav_history', 'responses.success.points'], [navFlow, 'responses.success.history']),
        ],
        fields: {
          parameters: [FUND_PARAMETER],
          responses: {
            success: {
              type: 'object',
              properties: {
                fund: { type: 'string', description: 'fund slug' },
                nav: { type: 'object', description: 'latest published NAV record' },
                history: {
                  type: 'array',
                  description: `the NAV records of the last ${NAV_HISTORY_LIMIT.default} epochs, ascending by epoch`,
                },
              },
            },
          },
        },
      },
      {
        id: claimFlow,
        title: 'Dividend claim proof',
        description: `Fetch the Merkle proof of a holder's dividend in one round of a fund: the input \`fund\` is a fund slug (GET /v1/funds, operation listFunds, lists them beside each fund's name), \`epoch\` the round (GET /v1/funds/{slug}/dividends lists them, newest first; without it, the newest round). A 404 means the address has no dividend in that round. The proof's \`claim\` is the DividendDistributor transaction that pays it (${CLAIM_SIGNATURE}), \`to\` and \`data\` ready to send; simulate it (eth_call) first. ${CLAIM_SENDER}. Every round at once, in one request instead of these calls: the graphqlPost operation with the query ${claimableDividendsQuery('<fund slug>', '<holder 0x address>')}. ${CLAIMABLE_DIVIDENDS_ANSWER}.`,
        actions: [
          action('list_dividend_rounds', '/v1/funds/{slug}/dividends'),
          action('get_dividend_proof', '/v1/funds/{slug}/dividends/{epoch}/proof'),
        ],
        links: [
          link([claimFlow, 'parameters.fund'], ['list_dividend_rounds', 'parameters.slug']),
          link([claimFlow, 'parameters.fund'], ['get_dividend_proof', 'parameters.slug']),
          // the newest round, unless the flow is given one: a later link overrides an earlier one
          link(
            ['list_dividend_rounds', 'responses.success.items.0.epoch'],
            ['get_dividend_proof', 'parameters.epoch'],
          ),
          link([claimFlow, 'parameters.epoch'], ['get_dividend_proof', 'parameters.epoch']),
          link([claimFlow, 'parameters.address'], ['get_dividend_proof', 'parameters.address']),
        ],
        fields: {
          parameters: [
            FUND_PARAMETER,
            { name: 'address', type: 'string', required: true, description: "the holder's 0x address" },
            {
              name: 'epoch',
              type: 'integer',
              required: false,
              description:
                "the round's epoch, from GET /v1/funds/{slug}/dividends (items[].epoch); without it, the newest round",
            },
          ],
          responses: {
            success: {
              type: 'object',
              properties: {
                data: {
                  type: 'object',
                  description:
                    'the proof: vault, epoch, account, amount (the dividend as a decimal string in the base asset: the one to show) and amountRaw (the same in base units: the claim argument), proof, claimed, and claim (to, data, signature, selector, args): the transaction to send',
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
