// The harness as the gateway, REST and reliability suites use it: the devnet (anvil with the
// seeded scenario) indexed by the harness's embedded indexer, and builders for a gateway and
// a REST app over it.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, inject } from 'vitest';
import type { Express } from 'express';
import type { DevnetFixture } from './devnet.ts';
import { createGateway, type Gateway, type GatewayConfig } from '../../gateway/server.ts';
import { loadRegistry, type Registry } from '../../gateway/sources/registry.ts';
import { createRestApp, type RestConfig } from '../../rest/app.ts';

export const REGISTRY_FILE = 'registry/devnet.json';

export interface IndexedStack {
  devnet: DevnetFixture;
  subgraphUrl: string;
  registry: Registry;
}

export async function indexedStack(): Promise<IndexedStack> {
  const devnet = inject('devnet');
  const { queryUrl } = inject('indexer');
  return { devnet, registry: loadRegistry(REGISTRY_FILE), subgraphUrl: queryUrl };
}

export function gatewayConfig(stack: IndexedStack, overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return {
    registry: stack.registry,
    subgraph: { url: stack.subgraphUrl, timeoutMs: 10_000, maxBatch: 1000 },
    chain: { rpcUrl: stack.devnet.rpcUrl, timeoutMs: 10_000, maxBatch: 200 },
    distributions: { base: stack.devnet.dataDir, timeoutMs: 5_000, cacheSize: 16 },
    // the embedded indexer's index-node status API, as npm start's devnet mode asks it
    indexingStatus: { url: new URL('/graphql', stack.subgraphUrl).href, timeoutMs: 10_000 },
    logError: () => {},
    ...overrides,
  };
}

export function testGateway(stack: IndexedStack, overrides: Partial<GatewayConfig> = {}): Gateway {
  return createGateway(gatewayConfig(stack, overrides));
}

/**
 * A gateway whose only working source is the registry (the devnet's unless `registry` is given):
 * enough for /v1/contracts and the discovery documents, so that no upstream takes part in the
 * requests of the suites that use it.
 */
export function registryOnlyGateway(
  options: { registry?: Registry; logError?: (error: unknown) => void } = {},
): Gateway {
  const { registry = loadRegistry(REGISTRY_FILE), logError = () => {} } = options;
  return createGateway({
    registry,
    subgraph: { url: 'http://127.0.0.1:9/unused', timeoutMs: 1_000, maxBatch: 10 },
    chain: undefined,
    distributions: { base: undefined, timeoutMs: 1_000, cacheSize: 1 },
    logError,
  });
}

export interface GraphQLResponse {
  data?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  errors?: {
    message: string;
    path?: (string | number)[];
    extensions?: { code?: string; argument?: string };
  }[];
}

/** POSTs a query to the gateway's Yoga server in-process (armor, masking and all). */
export async function graphql(
  gateway: Gateway,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<GraphQLResponse> {
  const response = await gateway.yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as GraphQLResponse;
}

/** Listens on an OS-assigned loopback port. */
export async function listen(app: Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The REST service of startRestService for the suite that calls this at its top level: started
 * before its tests and stopped after them. Its stack and base are read inside the tests.
 */
export function restServiceForSuite(options: Partial<Omit<RestConfig, 'gateway'>> = {}): {
  readonly stack: IndexedStack;
  readonly base: string;
} {
  let service: Awaited<ReturnType<typeof startRestService>> | undefined;
  beforeAll(async () => {
    service = await startRestService(options);
  });
  afterAll(async () => {
    await service?.stop();
  });
  const started = () => {
    if (!service) throw new Error('the REST service is read before the suite started it');
    return service;
  };
  return {
    get stack() {
      return started().stack;
    },
    get base() {
      return started().base;
    },
  };
}

/**
 * The REST app over `gateway` as the suites run it: no proxy trusted, no rate limits, no server
 * cache, nothing logged; `options` changes any of that.
 */
export function testRestApp(gateway: Gateway, options: Partial<Omit<RestConfig, 'gateway'>> = {}): Express {
  return createRestApp({
    gateway,
    trustProxy: false,
    rateLimit: false,
    responseCacheEntries: 0,
    logError: () => {},
    ...options,
  });
}

/** testRestApp over `gateway`, listening on an OS-assigned loopback port. */
export function listenRest(
  gateway: Gateway,
  options: Partial<Omit<RestConfig, 'gateway'>> = {},
): Promise<{ url: string; close(): Promise<void> }> {
  return listen(testRestApp(gateway, options));
}

/**
 * The REST service over the shared indexed stack, on loopback, as the REST suites run it: the
 * server cache on, else as testRestApp; `options` changes any of that. stop() closes it.
 */
export async function startRestService(
  options: Partial<Omit<RestConfig, 'gateway'>> = {},
): Promise<{ stack: IndexedStack; base: string; stop(): Promise<void> }> {
  const stack = await indexedStack();
  const { url, close } = await listenRest(testGateway(stack), { responseCacheEntries: 1000, ...options });
  return {
    stack,
    base: url,
    async stop() {
      await close();
    },
  };
}

/**
 * The REST app over a registry alone (registryOnlyGateway; the devnet's unless `registry` is given),
 * as testRestApp: for the suites whose answers need no upstream.
 */
export function registryOnlyRestApp(
  options: Partial<Omit<RestConfig, 'gateway'>> & { registry?: Registry } = {},
): Express {
  const { registry, ...config } = options;
  return testRestApp(registryOnlyGateway({ registry }), config);
}
