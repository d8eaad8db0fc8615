// The one rule every process reads its environment by (common/env.ts): a value's surrounding
// whitespace is removed, and a value that is blank after that is unset. The same input must mean the
// same in the service (rest/service-config.ts), the indexer (indexer/config.ts), the devnet scenario
// (devnet/scenario-params.ts), the benchmarks (bench/settings.ts) and the deploy plan
// (subgraph/scripts/deploy-plan.ts); only the defaults and the wording of refusals are theirs.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { benchSetting } from '../../bench/settings.ts';
import { decimalInteger, envInteger, envValue, urlRefusal } from '../../common/env.ts';
import { scenarioParamsFromEnv } from '../../devnet/scenario-params.ts';
import { indexerConfigFromEnv } from '../../indexer/config.ts';
import { loadServiceConfig } from '../../rest/service-config.ts';
import { planDeployment } from '../../subgraph/scripts/deploy-plan.ts';

/** a network the indexer takes without a devnet deployment to read */
const indexerBase = { NETWORK: 'sepolia', RPC_URL: 'http://127.0.0.1:8545' };

describe('the environment rule (common/env.ts)', () => {
  it('removes surrounding whitespace and reads a blank value as unset', () => {
    expect(envValue({ A: ' x y\t\r\n' }, 'A')).toBe('x y');
    expect(envValue({ A: '' }, 'A')).toBeUndefined();
    expect(envValue({ A: ' \t\r\n' }, 'A')).toBeUndefined();
    expect(envValue({}, 'A')).toBeUndefined();
  });

  it('takes integers in decimal digits only, within their bounds, and refuses others naming the bounds and the value as read', () => {
    expect(decimalInteger('0042')).toBe(42);
    for (const text of ['1e3', '0x10', '-1', '+1', '1.0', '1_000', '', '9007199254740992']) {
      expect(decimalInteger(text), text).toBeUndefined();
    }
    class Refusal extends Error {}
    expect(envInteger({ N: ' 7 ' }, 'N', 3, { min: 1, max: 9 }, Refusal)).toBe(7);
    expect(envInteger({ N: '  ' }, 'N', 3, { min: 1, max: 9 }, Refusal)).toBe(3);
    expect(() => envInteger({ N: ' 10 ' }, 'N', 3, { min: 1, max: 9 }, Refusal)).toThrow(
      new Refusal('N must be an integer from 1 to 9 in decimal digits, got "10"'),
    );
    expect(() => envInteger({ N: '0' }, 'N', 3, { min: 1 }, Refusal)).toThrow(
      new Refusal('N must be an integer of at least 1 in decimal digits, got "0"'),
    );
  });
});

describe('the same value means the same to every process', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.each([' 8081 ', '\t8081\r\n', '8081'])('PORT=%j is 8081 to the service and to the indexer', (port) => {
    expect(loadServiceConfig({ PORT: port }).port).toBe(8081);
    expect(indexerConfigFromEnv({ ...indexerBase, PORT: port }).port).toBe(8081);
  });

  it.each(['', ' ', ' \t\r\n'])('PORT=%j is unset: each takes its default, never 0', (port) => {
    expect(loadServiceConfig({ PORT: port }).port).toBe(8080);
    expect(indexerConfigFromEnv({ ...indexerBase, PORT: port }).port).toBe(8000);
  });

  it('a PORT that is no decimal integer once trimmed is refused by both in the same words, naming PORT and the value', () => {
    const refusal = 'PORT must be an integer from 0 to 65535 in decimal digits, got "1e3"';
    expect(() => loadServiceConfig({ PORT: ' 1e3 ' })).toThrow(refusal);
    expect(() => indexerConfigFromEnv({ ...indexerBase, PORT: ' 1e3 ' })).toThrow(refusal);
  });

  it.each(['', '  ', '\t\r\n'])('RPC_URL=%j is unset to the service and to the indexer', (rpcUrl) => {
    const service = loadServiceConfig({ RPC_URL: rpcUrl });
    expect(service.rpcUrl).toBeUndefined();
    expect(service.mode).toBe('devnet');
    // the indexer says what it says when RPC_URL is not set at all
    expect(() => indexerConfigFromEnv({ NETWORK: 'sepolia', RPC_URL: rpcUrl })).toThrow(
      'RPC_URL is required with NETWORK=sepolia',
    );
  });

  it('an RPC_URL with whitespace around it is the URL within, to both', () => {
    const service = loadServiceConfig({
      RPC_URL: ' https://rpc.example/v3/key ',
      SUBGRAPH_URL: 'https://sg.example',
      REGISTRY: 'registry/sepolia.json',
    });
    expect(service.rpcUrl).toBe('https://rpc.example/v3/key');
    expect(indexerConfigFromEnv({ NETWORK: 'sepolia', RPC_URL: ' https://rpc.example/v3/key ' }).rpcUrl).toBe(
      'https://rpc.example/v3/key',
    );
  });

  it('DATA_DIR is trimmed, and blank is the default, for both', () => {
    expect(loadServiceConfig({ DATA_DIR: ' /srv/data ' }).dataDir).toBe('/srv/data');
    expect(indexerConfigFromEnv({ ...indexerBase, DATA_DIR: ' /srv/data ' }).dataDir).toBe('/srv/data');
    expect(loadServiceConfig({ DATA_DIR: ' ' }).dataDir).toBe('data');
    expect(indexerConfigFromEnv({ ...indexerBase, DATA_DIR: ' ' }).dataDir).toBe(
      indexerConfigFromEnv(indexerBase).dataDir,
    );
  });

  it('the indexer reads its words and names trimmed too', () => {
    const config = indexerConfigFromEnv({
      NETWORK: ' sepolia ',
      RPC_URL: 'http://127.0.0.1:8545',
      INDEXER_TRANSACTIONS: ' hash-only ',
      INDEXER_DISABLE_FAIL_FAST: 'true\n',
      INDEXER_SUBGRAPH_NAME: ' fund/x ',
      INDEXER_HISTORY_BLOCKS: ' ',
    });
    expect(config).toMatchObject({
      network: 'sepolia',
      transactions: 'hash-only',
      disableFailFast: true,
      subgraphName: 'fund/x',
      historyBlocks: undefined,
    });
  });

  it('the scenario and the benchmarks read numbers by the same rule', () => {
    const scenario = scenarioParamsFromEnv({ SCENARIO_EPOCHS: ' 30 ', SCENARIO_INVESTORS: '  ' }, '/tmp/x');
    expect(scenario.epochs).toBe(30);
    expect(scenario.investorsPerFund).toBe(240);
    expect(() => scenarioParamsFromEnv({ SCENARIO_EPOCHS: ' 1e3 ' }, '/tmp/x')).toThrow(
      'SCENARIO_EPOCHS must be an integer of at least 20 in decimal digits, got "1e3"',
    );
    vi.stubEnv('BENCH_TEST_SETTING', ' 12 ');
    expect(benchSetting('BENCH_TEST_SETTING', 5)).toBe(12);
    vi.stubEnv('BENCH_TEST_SETTING', ' ');
    expect(benchSetting('BENCH_TEST_SETTING', 5)).toBe(5);
    vi.stubEnv('BENCH_TEST_SETTING', '0x10');
    expect(() => benchSetting('BENCH_TEST_SETTING', 5)).toThrow(
      'BENCH_TEST_SETTING must be an integer of at least 1 in decimal digits, got "0x10"',
    );
  });

  it('the deploy plan reads a blank variable as not set', () => {
    expect(() =>
      planDeployment('studio', { SUBGRAPH_NETWORK: ' ', SUBGRAPH_NAME: '\t', GRAPH_DEPLOY_KEY: '' }),
    ).toThrow(/SUBGRAPH_NETWORK is not set[^]*SUBGRAPH_NAME is not set[^]*GRAPH_DEPLOY_KEY is not set/);
  });

  it('every process refuses a URL showing only its scheme and host, never the key or password it carries', () => {
    const value = 'wss://user:pw@mainnet.example/v3/SECRETKEY?apikey=K2';
    const service = (() => {
      try {
        loadServiceConfig({ SUBGRAPH_URL: 'http://sg.example', REGISTRY: 'r.json', RPC_URL: value });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    const deploy = (() => {
      try {
        planDeployment('node', { SUBGRAPH_NETWORK: 'sepolia', SUBGRAPH_NAME: 'x', GRAPH_NODE_URL: value });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(service).toBe('RPC_URL must be an http(s) URL, got "wss://mainnet.example/…"');
    expect(deploy).toContain('GRAPH_NODE_URL must be an http(s) URL, got "wss://mainnet.example/…"');
    expect(`${service}${deploy}`).not.toMatch(/user|pw|SECRETKEY|K2/);
  });
});

describe('urlRefusal', () => {
  it('accepts a URL of one of the protocols given', () => {
    expect(urlRefusal('REDIS_URL', 'rediss://cache.example:6380/1', ['redis:', 'rediss:'])).toBeUndefined();
  });

  it('names the protocols and what the URL should point at', () => {
    expect(urlRefusal('REDIS_URL', 'http://cache.example', ['redis:', 'rediss:'], 'the counters')).toBe(
      'REDIS_URL must be a redis:// or rediss:// URL (the counters), got "http://cache.example"',
    );
  });

  it('does not show a value that is not a URL at all, which may be a bare key', () => {
    expect(urlRefusal('RPC_URL', 'abc123secret', ['http:', 'https:'])).toBe(
      'RPC_URL must be an http(s) URL, got a value that is not a URL (not shown: it may hold a key)',
    );
  });
});
