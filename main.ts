// `npm start`: wires the whole service and listens. With nothing configured it starts a local
// devnet (anvil, deployment, seeded scenario), the embedded indexer over it, the gateway and
// the REST facade, and prints the URLs. With SUBGRAPH_URL and REGISTRY (and optionally RPC_URL)
// it serves a real network. Every piece is built by its own builder; only this file listens.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { createClient } from 'redis';
import { startAnvil } from './devnet/anvil.ts';
import { deployProtocol } from './devnet/deploy.ts';
import { runScenario } from './devnet/scenario.ts';
import { scenarioParamsFromEnv } from './devnet/scenario-params.ts';
import { summarizeLedger } from './devnet/summary.ts';
import { createGateway } from './gateway/server.ts';
import { loadRegistry } from './gateway/sources/registry.ts';
import { createIndexer } from './indexer/indexer.ts';
import { createRestApp } from './rest/app.ts';
import { ConfigError, loadServiceConfig } from './rest/service-config.ts';

let config;
try {
  config = loadServiceConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`configuration error: ${error.message}`);
  process.exit(2);
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
  let rpcUrl = config.rpcUrl;
  let distributionsBase = config.distributionsBase;
  if (config.mode === 'devnet') {
    const dataDir = resolve(config.dataDir, 'devnet');
    const scenario = scenarioParamsFromEnv(process.env, dataDir);
    console.log('devnet: starting anvil, deploying the protocol and seeding the scenario...');
    mkdirSync(dataDir, { recursive: true });
    const anvil = await startAnvil({ homeParent: dataDir });
    cleanups.push(() => anvil.stop());
    const deployment = await deployProtocol(anvil.rpcUrl);
    const ledger = await runScenario(anvil.rpcUrl, deployment, scenario);
    writeFileSync(join(dataDir, 'deployment.json'), `${JSON.stringify(deployment, null, 2)}\n`);
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
    rpcUrl = anvil.rpcUrl;
    distributionsBase ??= dataDir;
  }

  let redis: ReturnType<typeof createClient> | undefined;
  if (config.redisUrl) {
    redis = createClient({ url: config.redisUrl });
    await redis.connect();
    const client = redis;
    cleanups.push(() => client.quit());
  }

  const gateway = createGateway({
    registry: loadRegistry(config.registryPath),
    subgraph: { url: subgraphUrl as string, timeoutMs: config.subgraphTimeoutMs, maxBatch: 1000 },
    chain: rpcUrl ? { rpcUrl, timeoutMs: config.rpcTimeoutMs, maxBatch: 500 } : undefined,
    distributions: { base: distributionsBase, timeoutMs: config.subgraphTimeoutMs, cacheSize: 64 },
    healthMaxLagBlocks: config.healthMaxLagBlocks,
  });
  const app = createRestApp({
    gateway,
    publicBaseUrl: config.publicBaseUrl,
    problemBase: config.problemBase,
    trustProxy: config.trustProxy,
    rateLimit: config.rateLimit,
    redis: redis
      ? { sendCommand: (args) => (redis as NonNullable<typeof redis>).sendCommand(args) }
      : undefined,
    responseCacheEntries: config.responseCacheEntries,
    responseCacheBytes: config.responseCacheBytes,
  });
  const server: Server = await new Promise((ready, fail) => {
    const s = app.listen(config.port, config.host, () => ready(s));
    s.once('error', fail);
  });
  cleanups.push(() => new Promise((done) => server.close(done)));
  const { port } = server.address() as AddressInfo;
  const base = config.publicBaseUrl ?? `http://${config.host}:${port}`;
  console.log(`
service (${config.mode}) listening on ${base}
  REST          ${base}/v1/funds
  GraphQL       ${base}/graphql
  OpenAPI       ${base}/openapi.json
  LLM guide     ${base}/llms.txt  (full: ${base}/llms-full.txt)
  agents.json   ${base}/.well-known/agents.json
  subgraph      ${subgraphUrl}
  chain RPC     ${rpcUrl ?? 'not configured (live reads answer available: false)'}
Ctrl-C to stop.`);
} catch (error) {
  console.error(error);
  await shutdown(1);
}
