// Start-up configuration: defaults select the devnet, and each malformed variable stops the
// start with a message naming it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadServiceConfig } from '../../rest/service-config.ts';

describe('loadServiceConfig', () => {
  it('runs the devnet with the SPEC limits when nothing is set', () => {
    const config = loadServiceConfig({});
    expect(config.mode).toBe('devnet');
    expect(config.rateLimit).toEqual({ perMinute: 60, burst: 20, burstWindowSeconds: 20 });
    expect(config.trustProxy).toBe(false);
    expect(config.healthMaxLagBlocks).toBe(50);
  });

  it('turns rate limiting off when RATE_LIMIT_PER_MINUTE is 0', () => {
    expect(loadServiceConfig({ RATE_LIMIT_PER_MINUTE: '0' }).rateLimit).toBe(false);
    expect(loadServiceConfig({ RATE_LIMIT_PER_MINUTE: '1' }).rateLimit).toEqual({
      perMinute: 1,
      burst: 20,
      burstWindowSeconds: 20,
    });
  });

  it("keeps an idle connection open for Node's 5 s unless HTTP_KEEP_ALIVE_TIMEOUT_MS says otherwise", () => {
    expect(loadServiceConfig({}).keepAliveTimeoutMs).toBe(5_000);
    expect(loadServiceConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000' }).keepAliveTimeoutMs).toBe(65_000);
  });

  it('refuses an HTTP_KEEP_ALIVE_TIMEOUT_MS of 0, which would keep idle connections forever', () => {
    expect(() => loadServiceConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' })).toThrow(
      'HTTP_KEEP_ALIVE_TIMEOUT_MS must be an integer from 1000 to 3600000 in decimal digits, got "0"',
    );
  });

  it('finds the devnet registry whatever the working directory', () => {
    const { registryPath } = loadServiceConfig({});
    expect(registryPath).toBe(fileURLToPath(new URL('../../registry/devnet.json', import.meta.url)));
    expect(existsSync(registryPath)).toBe(true);
  });

  it('takes a DISTRIBUTIONS_BASE with a scheme for a base URL, as written, and one without for a directory', () => {
    expect(loadServiceConfig({ DISTRIBUTIONS_BASE: 'https://files.example/rounds/' }).distributionsBase).toBe(
      'https://files.example/rounds/',
    );
    expect(loadServiceConfig({ DISTRIBUTIONS_BASE: 'data/rounds' }).distributionsBase).toBe('data/rounds');
  });

  it('refuses a DISTRIBUTIONS_BASE of a scheme with digits (s3://), which would be read as a relative directory', () => {
    expect(() => loadServiceConfig({ DISTRIBUTIONS_BASE: 's3://bucket/rounds' })).toThrow(
      'DISTRIBUTIONS_BASE must be an http(s) URL, got "s3://bucket/…"',
    );
  });

  it('serves a network when SUBGRAPH_URL and REGISTRY are set', () => {
    const config = loadServiceConfig({
      SUBGRAPH_URL: 'https://api.example/subgraphs/name/fund',
      REGISTRY: 'registry/sepolia.json',
      RPC_URL: 'https://rpc.example',
      TRUST_PROXY: '1',
    });
    expect(config).toMatchObject({ mode: 'network', registryPath: 'registry/sepolia.json', trustProxy: 1 });
  });

  it.each([
    ['1', 1],
    ['loopback', 'loopback'],
    ['loopback, 10.0.0.0/8, fd00::/8', 'loopback, 10.0.0.0/8, fd00::/8'],
    ['10.0.0.0/255.0.0.0', '10.0.0.0/255.0.0.0'],
  ])('takes TRUST_PROXY=%s, a form Express reads', (raw, trustProxy) => {
    expect(loadServiceConfig({ TRUST_PROXY: raw }).trustProxy).toBe(trustProxy);
  });

  it.each([
    ['yes', 'invalid IP address: yes'],
    ['abc', 'invalid IP address: abc'],
    ['1.2.3.4/99', 'invalid range on address: 1.2.3.4/99'],
    ['10.0.0.1,', 'invalid IP address: '],
  ])(
    'refuses TRUST_PROXY=%s, which Express cannot read, as a configuration error naming the accepted forms',
    (raw, reason) => {
      const load = () => loadServiceConfig({ TRUST_PROXY: raw });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(
        `TRUST_PROXY must be false, a hop count (1 behind one load balancer), or a comma-separated list of proxy addresses, CIDR ranges (10.0.0.0/8) and the names loopback, linklocal and uniquelocal, got "${raw}" (${reason})`,
      );
    },
  );

  it('refuses a TRUST_PROXY list holding a number, which Express would read as an address, not a hop count', () => {
    expect(() => loadServiceConfig({ TRUST_PROXY: '1, loopback' })).toThrow(
      'TRUST_PROXY lists "1", which Express would read as an address, not a hop count: give a hop count alone, or addresses only, got "1, loopback"',
    );
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ RPC_URL: 'localhost:8545' }, 'RPC_URL'],
    [{ RPC_URL: 'http://rpc.example' }, 'SUBGRAPH_URL'],
    [{ SUBGRAPH_URL: 'http://sg.example' }, 'REGISTRY'],
    [{ REDIS_URL: 'http://cache' }, 'REDIS_URL'],
    [{ RATE_LIMIT_BURST: '0' }, 'RATE_LIMIT_BURST'],
    [{ TRUST_PROXY: 'yes please!' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY=true would let every client choose'],
    [{ HEALTH_MAX_LAG_BLOCKS: '-1' }, 'HEALTH_MAX_LAG_BLOCKS'],
    [{ SUBGRAPH_STATUS_URL: 'http://graph-node:8030/graphql' }, 'SUBGRAPH_STATUS_URL is for network mode'],
    [
      { SUBGRAPH_URL: 'http://sg.example', REGISTRY: 'r.json', SUBGRAPH_STATUS_URL: 'graph-node:8030' },
      'SUBGRAPH_STATUS_URL',
    ],
  ])('names the variable at fault (%o)', (env, name) => {
    expect(() => loadServiceConfig(env)).toThrow(name);
  });
});
