// The discovery documents served beside the routes, described once: where each is served, its
// media type, and the operation openapi.json documents it as. rest/documents.ts serves them,
// rest/openapi.ts documents them and GET / (serviceIndex, rest/agents.ts) links them; what each one
// says is built by its own module (openapi.ts, llms.ts, agents.ts, gateway/print-schema.ts).

export interface DiscoveryDocument {
  path: string;
  /** its operation in openapi.json */
  operationId: string;
  summary: string;
  /** served with `; charset=utf-8`; openapi.json gives a JSON one an object schema, a text one a string */
  mediaType: 'application/json' | 'text/plain';
}

// in this order openapi.json lists them, after the routes
export const DISCOVERY_DOCUMENTS = {
  serviceIndex: {
    path: '/',
    operationId: 'getServiceIndex',
    summary: 'Where everything is: links to the discovery documents, /graphql and its schema',
    mediaType: 'application/json',
  },
  openapi: {
    path: '/openapi.json',
    operationId: 'getOpenApi',
    summary: 'This OpenAPI 3.1 document',
    mediaType: 'application/json',
  },
  llms: {
    path: '/llms.txt',
    operationId: 'getLlmsTxt',
    summary: 'Short guide for LLMs (llmstxt.org)',
    mediaType: 'text/plain',
  },
  llmsFull: {
    path: '/llms-full.txt',
    operationId: 'getLlmsFullTxt',
    summary: 'Full reference for LLMs: every endpoint, field, error and limit',
    mediaType: 'text/plain',
  },
  aiPlugin: {
    path: '/.well-known/ai-plugin.json',
    operationId: 'getAiPlugin',
    summary: 'AI plugin manifest',
    mediaType: 'application/json',
  },
  agents: {
    path: '/.well-known/agents.json',
    operationId: 'getAgentsJson',
    summary: 'agents.json 0.1.0 flows',
    mediaType: 'application/json',
  },
  graphqlSchema: {
    path: '/schema.graphql',
    operationId: 'getGraphqlSchema',
    summary: 'The GraphQL schema of /graphql as SDL, every type, field, argument and enum value described',
    mediaType: 'text/plain',
  },
} as const satisfies Record<string, DiscoveryDocument>;

export type DocumentName = keyof typeof DISCOVERY_DOCUMENTS;

/** the service's logo, served beside the documents, which ai-plugin.json links */
export const LOGO_PATH = '/logo.svg';
