// The service's configuration, read from environment variables and validated at start-up:
// a bad value stops the start with a message naming the variable. With nothing set the
// service runs on a local devnet (main.ts starts chain, indexer, gateway and REST); with
// SUBGRAPH_URL and REGISTRY (and optionally RPC_URL) it serves a real network.
// Every variable is documented in README.md and .env.example. Values are read by the rule every
// process shares (common/env.ts): surrounding whitespace trimmed, a blank value unset.
import { fileURLToPath } from 'node:url';
import express from 'express';
import { envInteger, envValue, urlRefusal, type Env } from '../common/env.ts';
import { keepAliveTimeoutFromEnv } from '../common/http-server-limits.ts';
import { DEFAULT_HEALTH_MAX_LAG_BLOCKS } from '../gateway/context.ts';
import { isUrlBase } from '../gateway/sources/distributions.ts';
import { DEFAULT_RATE_LIMIT, type RateLimitConfig } from './rate-limit.ts';
import { DEFAULT_RESPONSE_CACHE_BYTES } from './response-cache.ts';

// resolved from this file, so `npm start` works from any working directory
export const DEVNET_REGISTRY_PATH = fileURLToPath(new URL('../registry/devnet.json', import.meta.url));

export interface ServiceConfig {
  mode: 'devnet' | 'network';
  host: string;
  port: number;
  publicBaseUrl: string | undefined;
  problemBase: string | undefined;
  /** network mode: the subgraph's GraphQL URL */
  subgraphUrl: string | undefined;
  /** network mode: the index-node status API of the indexer behind subgraphUrl, if it is reachable */
  subgraphStatusUrl: string | undefined;
  rpcUrl: string | undefined;
  registryPath: string;
  distributionsBase: string | undefined;
  /** devnet mode: deployment, distributions and the indexer store go to <dataDir>/devnet */
  dataDir: string;
  trustProxy: TrustProxy;
  redisUrl: string | undefined;
  rateLimit: RateLimitConfig | false;
  responseCacheEntries: number;
  /** bytes of the bodies held in the server cache */
  responseCacheBytes: number;
  subgraphTimeoutMs: number;
  rpcTimeoutMs: number;
  /** health reports `degraded` when the indexed block is more than this many blocks behind the head */
  healthMaxLagBlocks: number;
  /** how long an idle keep-alive connection stays open (longer than a load balancer's idle timeout) */
  keepAliveTimeoutMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  return envInteger(env, name, fallback, { min, max }, ConfigError);
}

/** Throws a ConfigError naming `name` unless `raw` is a URL of one of `protocols`. */
function refuseUnlessUrl(name: string, raw: string, protocols: string[]): void {
  const refusal = urlRefusal(name, raw, protocols);
  if (refusal) throw new ConfigError(refusal);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = envValue(env, name);
  if (raw === undefined) return undefined;
  refuseUnlessUrl(name, raw, protocols);
  return raw.replace(/\/$/, '');
}

/** what TRUST_PROXY accepts: Express's `trust proxy` setting, less `true` */
const TRUST_PROXY_FORMS =
  'false, a hop count (1 behind one load balancer), or a comma-separated list of proxy addresses, CIDR ranges (10.0.0.0/8) and the names loopback, linklocal and uniquelocal';

/**
 * Express's `trust proxy` as TRUST_PROXY gives it: false, a hop count, or a list of proxies
 * (TRUST_PROXY_FORMS); never true
 */
export type TrustProxy = number | string | false;

function trustProxy(env: Env): TrustProxy {
  const raw = envValue(env, 'TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  // Express would take the leftmost X-Forwarded-For address, which the client writes itself
  if (raw === 'true') {
    throw new ConfigError(
      'TRUST_PROXY=true would let every client choose the address its rate limits count (X-Forwarded-For is written by the client): give the number of proxies in front of the service (e.g. 1) or their addresses',
    );
  }
  if (/^\d+$/.test(raw)) return Number(raw);
  // Express reads a number in a list as an address (1 is 0.0.0.1), never as a hop count
  const number = raw.split(',').find((item) => /^\d+$/.test(item.trim()));
  if (number !== undefined)
    throw new ConfigError(
      `TRUST_PROXY lists "${number.trim()}", which Express would read as an address, not a hop count: give a hop count alone, or addresses only, got "${raw}"`,
    );
  try {
    // Express compiles the setting as it is set (proxy-addr), and throws on an item it cannot
    // read; unchecked here, that throw came at createRestApp, after the upstream checks
    express().set('trust proxy', raw);
  } catch (error) {
    throw new ConfigError(
      `TRUST_PROXY must be ${TRUST_PROXY_FORMS}, got "${raw}" (${(error as Error).message})`,
    );
  }
  return raw;
}

export function loadServiceConfig(env: Env): ServiceConfig {
  const subgraphUrl = url(env, 'SUBGRAPH_URL', ['http:', 'https:']);
  const rpcUrl = url(env, 'RPC_URL', ['http:', 'https:']);
  const registry = envValue(env, 'REGISTRY');
  const mode = subgraphUrl || rpcUrl || registry ? 'network' : 'devnet';
  const subgraphStatusUrl = url(env, 'SUBGRAPH_STATUS_URL', ['http:', 'https:']);
  if (subgraphStatusUrl && mode === 'devnet')
    throw new ConfigError(
      "SUBGRAPH_STATUS_URL is for network mode, beside SUBGRAPH_URL and REGISTRY: devnet mode asks its own embedded indexer's status API",
    );
  if (mode === 'network') {
    if (!subgraphUrl) throw new ConfigError('SUBGRAPH_URL is required when RPC_URL or REGISTRY is set');
    if (!registry)
      throw new ConfigError('REGISTRY (path of the registry JSON) is required when SUBGRAPH_URL is set');
  }
  const perMinute = integer(env, 'RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT.perMinute, 0, 1_000_000);
  const burst = integer(env, 'RATE_LIMIT_BURST', DEFAULT_RATE_LIMIT.burst, 1, 1_000_000);
  // a directory or a base URL, kept as written: a URL's trailing slash does not change how a
  // round's uri resolves against it (gateway/sources/distributions.ts)
  const distributions = envValue(env, 'DISTRIBUTIONS_BASE');
  if (distributions !== undefined && isUrlBase(distributions))
    refuseUnlessUrl('DISTRIBUTIONS_BASE', distributions, ['http:', 'https:']);
  return {
    mode,
    host: envValue(env, 'HOST') ?? '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']),
    problemBase: url(env, 'PROBLEM_BASE', ['http:', 'https:']),
    subgraphUrl,
    subgraphStatusUrl,
    rpcUrl,
    registryPath: registry ?? DEVNET_REGISTRY_PATH,
    distributionsBase: distributions,
    dataDir: envValue(env, 'DATA_DIR') ?? 'data',
    trustProxy: trustProxy(env),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    // RATE_LIMIT_PER_MINUTE=0 turns rate limiting off (benchmarks, trusted deployments)
    rateLimit:
      perMinute === 0
        ? false
        : { perMinute, burst, burstWindowSeconds: DEFAULT_RATE_LIMIT.burstWindowSeconds },
    responseCacheEntries: integer(env, 'RESPONSE_CACHE_ENTRIES', 10_000, 0, 10_000_000),
    responseCacheBytes:
      integer(env, 'RESPONSE_CACHE_MB', DEFAULT_RESPONSE_CACHE_BYTES / 2 ** 20, 0, 65_536) * 2 ** 20,
    subgraphTimeoutMs: integer(env, 'SUBGRAPH_TIMEOUT_MS', 5_000, 100, 120_000),
    rpcTimeoutMs: integer(env, 'RPC_TIMEOUT_MS', 5_000, 100, 120_000),
    healthMaxLagBlocks: integer(
      env,
      'HEALTH_MAX_LAG_BLOCKS',
      DEFAULT_HEALTH_MAX_LAG_BLOCKS,
      0,
      1_000_000_000,
    ),
    keepAliveTimeoutMs: keepAliveTimeoutFromEnv(env, ConfigError),
  };
}
