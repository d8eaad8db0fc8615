// `npm start`: wires the whole service and listens. With nothing configured it starts a local
// devnet (anvil, deployment, seeded scenario), the embedded indexer over it, the gateway and
// the REST facade, and prints the URLs. With SUBGRAPH_URL and REGISTRY (and optionally RPC_URL)
// it serves a real network. Every piece is built by its own builder; this file wires them and
// turns what the configuration gets wrong into one line each (exit 2 before start-up, 1 during).
import { rmSync } from 'node:fs';
import type { Express } from 'express';
import type { Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { LONG_RUNNING_PERSISTED_STATES } from './devnet/anvil.ts';
import {
  isDefaultScenario,
  ScenarioConfigError,
  scenarioParamsFromEnv,
  type ScenarioParams,
} from './devnet/scenario-params.ts';
import { DevnetDirError, startDevnet } from './devnet/start-devnet.ts';
import { summarizeLedger } from './devnet/summary.ts';
import { createGateway } from './gateway/server.ts';
import { loadRegistry, type Registry } from './gateway/sources/registry.ts';
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
import { createIndexer, type Indexer } from './indexer/indexer.ts';
import { createRestApp } from './rest/app.ts';
import { createServiceServer } from './rest/http-server.ts';
import { connectRedis, rateLimitSummary, type RedisConnection } from './rest/rate-limit.ts';
import { problemBaseFor } from './rest/replies.ts';
import { ConfigError, loadServiceConfig, type ServiceConfig } from './rest/service-config.ts';

/** The configuration, and devnet mode's scenario; what is wrong in them exits 2 with one line. */
function readConfiguration(): { config: ServiceConfig; scenario: ScenarioParams | undefined } {
  try {
    const config = loadServiceConfig(process.env);
    const scenario =
      config.mode === 'devnet'
        ? scenarioParamsFromEnv(process.env, resolve(config.dataDir, 'devnet'))
        : undefined;
    return { config, scenario };
  } catch (error) {
    if (!(error instanceof ConfigError || error instanceof ScenarioConfigError)) throw error;
    console.error(`configuration error: ${error.message}`);
    process.exit(2);
  }
}
const { config, scenario } = readConfiguration();

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
/** set once shutdown began: what fails as it takes things down (a start-up step waiting on them) is no news */
let stopping = false;
async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(error));
  process.exit(code);
}
process.once('SIGINT', () => void shutdown(0));
process.once('SIGTERM', () => void shutdown(0));

/** What the service reads: a network's configured upstreams, or the embedded devnet's. */
interface Upstreams {
  subgraphUrl: string;
  /** the index-node status API of the indexer behind subgraphUrl */
  subgraphStatusUrl: string | undefined;
  rpcUrl: string | undefined;
  /** a directory or an http(s) base URL; undefined when proofs are not served */
  distributionsBase: string | undefined;
}

/** Devnet mode: anvil with the protocol deployed and `params`' scenario seeded, and the indexer caught up with it. */
async function startEmbeddedDevnet(params: ScenarioParams): Promise<Upstreams> {
  const dataDir = resolve(config.dataDir, 'devnet');
  console.log('devnet: starting anvil, deploying the protocol and seeding the scenario...');
  const { anvil, deployment, ledger, stop } = await startDevnet({
    anvil: { homeParent: dataDir, maxPersistedStates: LONG_RUNNING_PERSISTED_STATES },
    dataDir,
    // read from SCENARIO_* (with this data dir) before start-up, where a bad value exits 2
    scenario: () => params,
    // a claim an agent sends, say, is mined and indexed without anyone mining by hand
    automine: true,
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
    // a query the gateway has stopped waiting for is ended with it, freeing its worker
    queryTimeoutMs: config.subgraphTimeoutMs,
    log: (line) => console.log(`[indexer] ${line}`),
  });
  await indexer.start();
  cleanups.push(() => indexer.stop());
  console.log('indexer: catching up with the devnet...');
  await caughtUpUnlessStoreFails(indexer);
  return {
    subgraphUrl: indexer.queryUrl,
    // the embedded indexer serves graph-node's index-node status API beside its subgraph
    subgraphStatusUrl: new URL('/graphql', indexer.queryUrl).href,
    rpcUrl: anvil.rpcUrl,
    distributionsBase: config.distributionsBase ?? dataDir,
  };
}

/**
 * Resolves once the indexer has caught up with the devnet; rejects once it reports its store cannot
 * be written (a full disk, say): indexing would wait for that to change, but the devnet is new at
 * every start, so the start is refused instead. The store is checked only meanwhile: a check after
 * a stop has begun would ask a stopped indexer.
 */
async function caughtUpUnlessStoreFails(indexer: Indexer): Promise<void> {
  let check: NodeJS.Timeout | undefined;
  const storeFailure = new Promise<never>((_, fail) => {
    check = setInterval(() => {
      if (stopping) return;
      const { storeError } = indexer.status();
      if (storeError === null) return;
      fail(
        new StartupError(
          `cannot use DATA_DIR (${config.dataDir}): the indexer's store cannot be written (${storeError}); make it writable with room to spare, or set DATA_DIR to another directory`,
        ),
      );
    }, STORE_CHECK_MS);
    check.unref();
  });
  try {
    await Promise.race([indexer.waitForHead(), storeFailure]);
  } finally {
    clearInterval(check);
  }
}
const STORE_CHECK_MS = 250;

/** Network mode's upstreams as configured (loadServiceConfig requires SUBGRAPH_URL there). */
function configuredUpstreams(): Upstreams {
  return {
    subgraphUrl: config.subgraphUrl as string,
    subgraphStatusUrl: config.subgraphStatusUrl,
    rpcUrl: config.rpcUrl,
    distributionsBase: config.distributionsBase,
  };
}

/** The Redis the rate limits are counted in, if one is configured and the limits are on. */
async function connectRateLimitCounters(): Promise<RedisConnection | undefined> {
  // with the limits off there is nothing to count, and an unused Redis must not stop the start
  const redisUrl = config.rateLimit ? config.redisUrl : undefined;
  if (!redisUrl) return undefined;
  const redis = await starting(`cannot connect to REDIS_URL (${redactRedisUrl(redisUrl)})`, () =>
    connectRedis(redisUrl, (line) => console.error(line)),
  );
  cleanups.push(() => redis.close());
  return redis;
}

/**
 * Network mode: the subgraph is served, its indexer (when SUBGRAPH_STATUS_URL is given) indexes it
 * on REGISTRY's network, and the RPC node serves REGISTRY's chain, each waited for a while.
 */
async function checkNetworkUpstreams(upstreams: Upstreams, registry: Registry): Promise<void> {
  const { subgraphUrl: url, subgraphStatusUrl: statusUrl, rpcUrl } = upstreams;
  const registryPath = config.registryPath;
  const wait = { ...DEFAULT_UPSTREAM_WAIT, log: (line: string) => console.log(line) };
  const deployment = await starting(`cannot use SUBGRAPH_URL (${redactUrl(url)})`, () =>
    checkSubgraphEndpoint({ url, timeoutMs: config.subgraphTimeoutMs }, wait),
  );
  if (statusUrl) {
    const status = await starting(`cannot use SUBGRAPH_STATUS_URL (${redactUrl(statusUrl)})`, () =>
      checkIndexingStatusEndpoint({ url: statusUrl, timeoutMs: config.subgraphTimeoutMs }, deployment, wait),
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
  if (upstreams.distributionsBase === undefined) {
    console.log(
      'service: DISTRIBUTIONS_BASE is not set: dividend proofs are not served (404); rounds and their roots still are',
    );
  }
}

/**
 * A DISTRIBUTIONS_BASE that is a directory can be read, in either mode: devnet mode reads one that
 * is set instead of its own directory.
 */
async function checkDistributionsBase(base: string | undefined): Promise<void> {
  if (base !== undefined && !isUrlBase(base))
    await starting(`cannot use DISTRIBUTIONS_BASE (${base})`, () => checkDistributionsDirectory(base));
}

/** The REST app over the gateway to `upstreams`, counting its rate limits in `redis` if given. */
function createApp(upstreams: Upstreams, registry: Registry, redis: RedisConnection | undefined): Express {
  const { subgraphUrl, subgraphStatusUrl, rpcUrl, distributionsBase } = upstreams;
  const gateway = createGateway({
    registry,
    subgraph: { url: subgraphUrl, timeoutMs: config.subgraphTimeoutMs, maxBatch: 1000 },
    chain: rpcUrl ? { rpcUrl, timeoutMs: config.rpcTimeoutMs, maxBatch: 500 } : undefined,
    distributions: { base: distributionsBase, timeoutMs: config.subgraphTimeoutMs, cacheSize: 64 },
    indexingStatus: subgraphStatusUrl
      ? { url: subgraphStatusUrl, timeoutMs: config.subgraphTimeoutMs }
      : undefined,
    healthMaxLagBlocks: config.healthMaxLagBlocks,
  });
  return createRestApp({
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
}

const CANNOT_LISTEN = `cannot listen on HOST ${config.host}, PORT ${config.port}`;

/**
 * Devnet mode seeds and indexes for a while before it listens: a PORT another process holds is
 * refused before that, not after (the listen itself still refuses one taken meanwhile).
 */
async function checkPortFree(): Promise<void> {
  if (config.port === 0) return;
  const probe = createNetServer();
  await starting(
    CANNOT_LISTEN,
    () =>
      new Promise<void>((free, fail) => {
        probe.once('error', fail);
        probe.listen(config.port, config.host, () => probe.close(() => free()));
      }),
  );
}

/** The server of `app`, listening on HOST and PORT. */
async function listen(app: Express): Promise<Server> {
  // Node's refusals come before any request names a host: without a configured base, their types
  // take the address the client connected to
  const server = createServiceServer(
    app,
    problemBaseFor(config.problemBase, config.publicBaseUrl),
    config.keepAliveTimeoutMs,
  );
  await starting(
    CANNOT_LISTEN,
    () =>
      new Promise<void>((ready, fail) => {
        server.once('error', fail);
        server.listen(config.port, config.host, ready);
      }),
  );
  cleanups.push(() => closeServer(server));
  return server;
}

/**
 * How long a stop waits for the answers under way before it closes their connections: every
 * upstream read is bounded by its own timeout, but a client that stops reading its answer is not.
 */
const SHUTDOWN_GRACE_MS = 5_000;

/** Stops `server` taking connections and ends the ones left once SHUTDOWN_GRACE_MS has passed. */
async function closeServer(server: Server): Promise<void> {
  const closed = new Promise((done) => server.close(done));
  const grace = setTimeout(() => {
    console.log(`service: closing the connections still open ${SHUTDOWN_GRACE_MS / 1000} s after the stop`);
    server.closeAllConnections();
  }, SHUTDOWN_GRACE_MS);
  await closed;
  clearTimeout(grace);
}

/** The lines saying where the service answers and what it reads. */
function printWhereServed(server: Server, upstreams: Upstreams): void {
  const { subgraphUrl, subgraphStatusUrl, rpcUrl } = upstreams;
  const { port } = server.address() as AddressInfo;
  // an IPv6 host (HOST=::) goes in brackets in a URL
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const local = `http://${host}:${port}`;
  const base = config.publicBaseUrl ?? local;
  // devnet mode's upstreams are its own loopback servers, which hold no secret to hide
  const shown = (url: string) => (config.mode === 'devnet' ? url : redactUrl(url));
  // the public URL is where clients reach it, through a proxy; the operator also needs the socket
  const where = config.publicBaseUrl ? `${local} (public URL ${base})` : base;
  console.log(`
service (${config.mode}) listening on ${where}
  REST          ${base}/v1/funds
  GraphQL       ${base}/graphql
  OpenAPI       ${base}/openapi.json
  LLM guide     ${base}/llms.txt  (full: ${base}/llms-full.txt)
  agents.json   ${base}/.well-known/agents.json
  subgraph      ${shown(subgraphUrl)}
  status API    ${subgraphStatusUrl ? shown(subgraphStatusUrl) : 'not configured (health cannot see a halted indexer; SUBGRAPH_STATUS_URL)'}
  chain RPC     ${rpcUrl ? shown(rpcUrl) : 'not configured (live reads answer available: false)'}
  rate limits   ${rateLimitSummary(config.rateLimit, config.redisUrl)}
Ctrl-C to stop.`);
}

try {
  if (scenario) await checkPortFree();
  const upstreams = scenario ? await startEmbeddedDevnet(scenario) : configuredUpstreams();
  const redis = await connectRateLimitCounters();
  const registry = await starting('cannot load REGISTRY', async () => loadRegistry(config.registryPath));
  if (config.mode === 'network') await checkNetworkUpstreams(upstreams, registry);
  await checkDistributionsBase(upstreams.distributionsBase);
  const server = await listen(createApp(upstreams, registry, redis));
  printWhereServed(server, upstreams);
} catch (error) {
  // a signal's shutdown stops what the start-up waits on: its failure is the stop, not news
  if (!stopping) {
    // what the configuration names gets one line; anything else is a bug and keeps its stack
    if (error instanceof StartupError) console.error(`start-up error: ${error.message}`);
    else console.error(error);
    await shutdown(1);
  }
}
