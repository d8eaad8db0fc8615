// The discovery documents of the REST app (openapi.json, llms.txt, the agent manifests, the
// GraphQL schema, the service index and the logo). They depend only on the base URL (and the
// registry and rate limits): each is built once per base and served with an ETag. Without
// PUBLIC_BASE_URL the base comes from each request's Host header, which any client may forge, so
// they are kept for a few bases only (openapi.json alone is some 200 KB).
import type { Express, RequestHandler } from 'express';
import { printedSchema } from '../gateway/print-schema.ts';
import type { Registry } from '../gateway/sources/registry.ts';
import { agentsJson, aiPluginJson, serviceIndex } from './agents.ts';
import { DISCOVERY_DOCUMENTS, LOGO_PATH, type DocumentName } from './document-table.ts';
import type { DocumentExamples } from './examples.ts';
import { llmsFullTxt, llmsTxt } from './llms.ts';
import { buildOpenApi } from './openapi.ts';
import type { RateLimitConfig } from './rate-limit.ts';
import type { Replies } from './replies.ts';
import { etagOf, ResponseCache } from './response-cache.ts';
import { CACHE_TIERS } from './routes.ts';
import { sendCached } from './send-cached.ts';

/** the documents that describe the service (the logo aside), built from the route table and registry */
export const DOCUMENT_PATHS: string[] = Object.values(DISCOVERY_DOCUMENTS).map((document) => document.path);
/** base URLs whose discovery documents (DOCUMENT_PATHS and the logo) are kept built, and their bytes */
const DOCUMENT_BASES_KEPT = 8;
const DOCUMENT_CACHE_BYTES = 8 * 2 ** 20;
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1d4ed8"/><path d="M8 22V10h12M8 16h9" stroke="#fff" stroke-width="3" fill="none"/></svg>\n';

/** what the documents describe */
interface DocumentSources {
  /** the examples of the registry served (rest/examples.ts) */
  examples: DocumentExamples;
  registry: Registry;
  rateLimit: RateLimitConfig | false;
}

type Build = (base: string, problemBase: string) => string;

/** Adds a GET route to `app` for each discovery document, all kept in one cache. */
export function serveDocuments(app: Express, replies: Replies, sources: DocumentSources): void {
  const { examples, registry, rateLimit } = sources;
  const documents = new ResponseCache(
    DOCUMENT_BASES_KEPT * (DOCUMENT_PATHS.length + 1),
    DOCUMENT_CACHE_BYTES,
  );
  const serve = (name: string, contentType: string, build: Build) =>
    app.get(name, documentHandler(documents, replies, name, contentType, build));
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const builds: Record<DocumentName, Build> = {
    serviceIndex: (base) => json(serviceIndex(base)),
    openapi: (base, pb) => json(buildOpenApi(base, pb, examples, rateLimit)),
    llms: (base) => llmsTxt(base, examples, rateLimit),
    llmsFull: (base, pb) => llmsFullTxt(base, pb, examples, rateLimit),
    aiPlugin: (base) => json(aiPluginJson(base, registry)),
    agents: (base) => json(agentsJson(base)),
    graphqlSchema: () => printedSchema(),
  };
  for (const [name, { path, mediaType }] of Object.entries(DISCOVERY_DOCUMENTS))
    serve(path, `${mediaType}; charset=utf-8`, builds[name as DocumentName]);
  serve(LOGO_PATH, 'image/svg+xml', () => LOGO);
}

/** Serves document `name` for the request's base, built on the first request for that base. */
function documentHandler(
  documents: ResponseCache,
  replies: Replies,
  name: string,
  contentType: string,
  build: Build,
): RequestHandler {
  return (req, res) => {
    const base = replies.baseOf(req);
    const key = `${name} ${base}`;
    let entry = documents.get(key, performance.now());
    if (!entry) {
      const body = Buffer.from(build(base, replies.problemBaseOf(req)));
      entry = {
        body,
        etag: etagOf(body),
        headers: {},
        storedAt: performance.now(),
        maxAgeSeconds: CACHE_TIERS.reference.maxAge,
        basis: { indexed: null, chainHead: null },
      };
      documents.set(key, entry);
    }
    sendCached(req, res, { ...entry, storedAt: performance.now() }, contentType);
  };
}
