// `npm start`: wires the whole service and listens. With nothing configured it starts a local
// devnet (anvil, deployment, seeded scenario), the embedded indexer over it, the gateway and
// the REST facade, and prints the URLs. With SUBGRAPH_URL and REGISTRY (and optionally RPC_URL)
// it serves a real network. Every piece is built by its own builder; this file wires them and
// turns what the configuration gets wrong into one line each (exit 2 before start-up, 1 during).
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { LONG_RUNNING_PERSISTED_STATES } from './devnet/anvil.ts';
import { isDefaultScenario, ScenarioConfigError, scenarioParamsFromEnv } from './devnet/scenario-params.ts';
import { DevnetDirError, startDevnet } from './devnet/start-devnet.ts';
import { summarizeLedger } from './devnet/summary.ts';
import { createGateway } from './gateway/server.ts';
import { loadRegistry } from './gateway/sources/registry.ts';
import { isUrlBase } from './gateway/sources/distributions.ts';
import {
  checkChainMatchesRegistry,
  checkDistributionsDirectory,
  checkIndexedNetwork,
  checkIndexingStatusEndpoint,
  checkSubgraphEndpoint,
  DEFAULT_UPSTREAM_WAIT,
} from './gateway/start-up-checks.ts';
import { redactRedisUrl, redactUrl } from './common/url.ts';
import { createIndexer } from './indexer/indexer.ts';
import { createRestApp } from './rest/app.ts';
import { createServiceServer } from './rest/http-server.ts';
import { connectRedis, rateLimitSummary } from './rest/rate-limit.ts';
import { problemBaseFor } from './rest/replies.ts';
import { ConfigError, loadServiceConfig } from './rest/service-config.ts';

let config;
let scenario;
try {
  config = loadServiceConfig(process.env);
  if (config.mode === 'devnet')
    scenario = scenarioParamsFromEnv(process.env, resolve(config.dataDir, 'devnet'));
} catch (error) {
  if (!(error instanceof ConfigError || error instanceof ScenarioConfigError)) throw error;
  console.error(`configuration error: ${error.message}`);
  process.exit(2);
}

/** A start-up step that failed on what the configuration names: one line, exit 1. */
class StartupError extends Error {}

/** `step`, whose failure is a StartupError saying what it was doing and the cause. */
async function starting<T>(what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw new StartupError(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
async function shutdown(code: number): Promise<never> {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(error));
  process.exit(code);
}
process.once('SIGINT', () => void shutdown(0));
process.once('SIGTERM', () => void shutdown(0));

try {
  let subgraphUrl = config.subgraphUrl;
  let subgraphStatusUrl = config.subgraphStatusUrl;
  let rpcUrl = config.rpcUrl;
  let distributionsBase = config.distributionsBase;
  if (config.mode === 'devnet' && scenario) {
    const dataDir = resolve(config.dataDir, 'devnet');
    console.log('devnet: starting anvil, deploying the protocol and seeding the scenario...');
    const { anvil, deployment, ledger, stop } = await startDevnet({
      anvil: { homeParent: dataDir, maxPersistedStates: LONG_RUNNING_PERSISTED_STATES },
      dataDir,
      // read from SCENARIO_* (with this data dir) before start-up, where a bad value exits 2
      scenario: () => scenario,
    }).catch((error: unknown) => {
      // the data dir is the configuration's; any other failure is a bug and keeps its stack
      if (error instanceof DevnetDirError)
        throw new StartupError(`cannot use DATA_DIR (${config.dataDir}): ${error.message}`);
      throw error;
    });
    cleanups.push(stop);
    console.log(summarizeLedger(deployment, ledger));
    // a fresh chain every start: an index of a previous chain would not match it
    rmSync(join(dataDir, 'indexer'), { recursive: true, force: true });
    const indexer = await createIndexer({
      rpcUrl: anvil.rpcUrl,
      network: 'devnet',
      dataDir,
      port: 0,
      log: (line) => console.log(`[indexer] ${line}`),
    });
    await indexer.start();
    cleanups.push(() => indexer.stop());
    console.log('indexer: catching up with the devnet...');
    await indexer.waitForHead();
    subgraphUrl = indexer.queryUrl;
    // the embedded indexer serves graph-node's index-node status API beside its subgraph
    subgraphStatusUrl = new URL('/graphql', indexer.queryUrl).href;
    rpcUrl = anvil.rpcUrl;
    distributionsBase ??= dataDir;
  }

  // with the limits off there is nothing to count, and an unused Redis must not stop the start
  const redisUrl = config.rateLimit ? config.redisUrl : undefined;
  const redis = redisUrl
    ? await starting(`cannot connect to REDIS_URL (${redactRedisUrl(redisUrl)})`, () =>
        connectRedis(redisUrl, (line) => console.error(line)),
      )
    : undefined;
  if (redis) cleanups.push(() => redis.close());

  const registryPath = config.registryPath;
  const registry = await starting('cannot load REGISTRY', async () => loadRegistry(registryPath));
  if (config.mode === 'network') {
    const wait = { ...DEFAULT_UPSTREAM_WAIT, log: (line: string) => console.log(line) };
    const url = subgraphUrl as string;
    const deployment = await starting(`cannot use SUBGRAPH_URL (${redactUrl(url)})`, () =>
      checkSubgraphEndpoint({ url, timeoutMs: config.subgraphTimeoutMs }, wait),
    );
    const statusUrl = subgraphStatusUrl;
    if (statusUrl) {
      const status = await starting(`cannot use SUBGRAPH_STATUS_URL (${redactUrl(statusUrl)})`, () =>
        checkIndexingStatusEndpoint(
          { url: statusUrl, timeoutMs: config.subgraphTimeoutMs },
          deployment,
          wait,
        ),
      );
      await starting(`cannot use SUBGRAPH_URL (${redactUrl(url)})`, async () =>
        checkIndexedNetwork(status, deployment as string, registry, registryPath),
      );
      // a halted indexer is no reason to refuse the start (its data is served), but it is news
      if (status.fatalError)
        console.log(
          `service: the indexer of deployment ${deployment} is ${status.health}: ${status.fatalError.message}`,
        );
    }
    if (rpcUrl)
      await starting(`cannot use RPC_URL (${redactUrl(rpcUrl)})`, () =>
        checkChainMatchesRegistry(
          { rpcUrl, timeoutMs: config.rpcTimeoutMs, maxBatch: 1 },
          registry,
          registryPath,
          wait,
        ),
      );
    if (distributionsBase === undefined) {
      console.log(
        'service: DISTRIBUTIONS_BASE is not set: dividend proofs are not served (404); rounds and their roots are',
      );
    }
  }
  // in either mode: devnet mode reads a DISTRIBUTIONS_BASE that is set instead of its own directory
  const directory = distributionsBase;
  if (directory !== undefined && !isUrlBase(directory))
    await starting(`cannot use DISTRIBUTIONS_BASE (${directory})`, () =>
      checkDistributionsDirectory(directory),
    );
  const gateway = createGateway({
    registry,
    subgraph: { url: subgraphUrl as string, timeoutMs: config.subgraphTimeoutMs, maxBatch: 1000 },
    chain: rpcUrl ? { rpcUrl, timeoutMs: config.rpcTimeoutMs, maxBatch: 500 } : undefined,
    distributions: { base: distributionsBase, timeoutMs: config.subgraphTimeoutMs, cacheSize: 64 },
    indexingStatus: subgraphStatusUrl
      ? { url: subgraphStatusUrl, timeoutMs: config.subgraphTimeoutMs }
      : undefined,
    healthMaxLagBlocks: config.healthMaxLagBlocks,
  });
  const app = createRestApp({
    gateway,
    publicBaseUrl: config.publicBaseUrl,
    problemBase: config.problemBase,
    trustProxy: config.trustProxy,
    defaultScenario: scenario === undefined || isDefaultScenario(scenario),
    rateLimit: config.rateLimit,
    redis,
    responseCacheEntries: config.responseCacheEntries,
    responseCacheBytes: config.responseCacheBytes,
  });
  // Node's refusals come before any request names a host: without a configured base, their types
  // take the address the client connected to
  const server = createServiceServer(
    app,
    problemBaseFor(config.problemBase, config.publicBaseUrl),
    config.keepAliveTimeoutMs,
  );
  await starting(
    `cannot listen on HOST ${config.host}, PORT ${config.port}`,
    () =>
      new Promise<void>((ready, fail) => {
        server.once('error', fail);
        server.listen(config.port, config.host, ready);
      }),
  );
  cleanups.push(() => new Promise((done) => server.close(done)));
  const { port } = server.address() as AddressInfo;
  // an IPv6 host (HOST=::) goes in brackets in a URL
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const base = config.publicBaseUrl ?? `http://${host}:${port}`;
  // devnet mode's upstreams are its own loopback servers, which hold no secret to hide
  const shown = (url: string) => (config.mode === 'devnet' ? url : redactUrl(url));
  console.log(`
service (${config.mode}) listening on ${base}
  REST          ${base}/v1/funds
  GraphQL       ${base}/graphql
  OpenAPI       ${base}/openapi.json
  LLM guide     ${base}/llms.txt  (full: ${base}/llms-full.txt)
  agents.json   ${base}/.well-known/agents.json
  subgraph      ${shown(subgraphUrl as string)}
  status API    ${subgraphStatusUrl ? shown(subgraphStatusUrl) : 'not configured (health cannot see a halted indexer; SUBGRAPH_STATUS_URL)'}
  chain RPC     ${rpcUrl ? shown(rpcUrl) : 'not configured (live reads answer available: false)'}
  rate limits   ${rateLimitSummary(config.rateLimit, config.redisUrl)}
Ctrl-C to stop.`);
} catch (error) {
  // what the configuration names gets one line; anything else is a bug and keeps its stack
  if (error instanceof StartupError) console.error(`start-up error: ${error.message}`);
  else console.error(error);
  await shutdown(1);
}
