// `npm run indexer`'s environment: INDEXER_TRANSACTIONS chooses what handlers get in
// event.transaction, INDEXER_GET_LOGS_MAX_ADDRESSES how many addresses one eth_getLogs names,
// IPFS_URL, ARWEAVE_URL and INDEXER_FILE_* where file data sources read files, INDEXER_HISTORY_BLOCKS
// and INDEXER_REORG_THRESHOLD how much history the store keeps, INDEXER_DISABLE_FAIL_FAST whether
// handler errors pause indexing before the first sync, and a value any of them does not take stops
// start-up with a message naming it. Numbers are decimal digits only, NETWORK must be in networks.json,
// the RPC URL is never shown beyond its scheme and host, and without RPC_URL the devnet's
// deployment.json is read where `npm run devnet` writes it (DEVNET_DATA_DIR).
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../../common/url.ts';
import { devnetDataDir, indexerConfigFromEnv } from '../../indexer/config.ts';
import { tempDirs } from './child-indexer.ts';

const base = { RPC_URL: 'http://127.0.0.1:8545', NETWORK: 'sepolia' };

describe('the indexer configuration', () => {
  it('fetches whole transactions unless INDEXER_TRANSACTIONS says otherwise', () => {
    expect(indexerConfigFromEnv(base).transactions).toBe('full');
    expect(indexerConfigFromEnv({ ...base, INDEXER_TRANSACTIONS: 'hash-only' }).transactions).toBe(
      'hash-only',
    );
  });

  it("keeps an idle query connection open for Node's 5 s unless HTTP_KEEP_ALIVE_TIMEOUT_MS says otherwise", () => {
    expect(indexerConfigFromEnv(base).keepAliveTimeoutMs).toBe(5_000);
    expect(indexerConfigFromEnv({ ...base, HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000' }).keepAliveTimeoutMs).toBe(
      65_000,
    );
  });

  it('refuses an HTTP_KEEP_ALIVE_TIMEOUT_MS of 0, which would keep idle connections forever', () => {
    expect(() => indexerConfigFromEnv({ ...base, HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' })).toThrow(
      'HTTP_KEEP_ALIVE_TIMEOUT_MS must be an integer from 1000 to 3600000 in decimal digits, got "0"',
    );
  });

  it('refuses an INDEXER_TRANSACTIONS it does not know, naming the values it takes', () => {
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_TRANSACTIONS: 'none' })).toThrow(
      'INDEXER_TRANSACTIONS must be full or hash-only, got "none"',
    );
  });

  it('keeps the history the manifest asks for unless INDEXER_HISTORY_BLOCKS says otherwise', () => {
    expect(indexerConfigFromEnv(base).historyBlocks).toBeUndefined();
    expect(indexerConfigFromEnv({ ...base, INDEXER_HISTORY_BLOCKS: '1000' }).historyBlocks).toBe(1000);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_HISTORY_BLOCKS: '0' })).toThrow(
      'INDEXER_HISTORY_BLOCKS must be an integer from 1 to 2147483647 in decimal digits, got "0"',
    );
  });

  it("counts on reverting reorgs of 250 blocks, graph-node's threshold, unless INDEXER_REORG_THRESHOLD says otherwise", () => {
    expect(indexerConfigFromEnv(base).reorgThreshold).toBe(250);
    expect(indexerConfigFromEnv({ ...base, INDEXER_REORG_THRESHOLD: '64' }).reorgThreshold).toBe(64);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_REORG_THRESHOLD: '-1' })).toThrow(
      'INDEXER_REORG_THRESHOLD must be an integer from 0 to 1000000 in decimal digits, got "-1"',
    );
  });

  it('pauses at handler errors before the first sync, as graph-node fails fast, unless INDEXER_DISABLE_FAIL_FAST is true', () => {
    expect(indexerConfigFromEnv(base).disableFailFast).toBe(false);
    expect(indexerConfigFromEnv({ ...base, INDEXER_DISABLE_FAIL_FAST: 'true' }).disableFailFast).toBe(true);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_DISABLE_FAIL_FAST: 'yes' })).toThrow(
      'INDEXER_DISABLE_FAIL_FAST must be true or false, got "yes"',
    );
  });

  it('names at most 2,000 addresses in one eth_getLogs unless INDEXER_GET_LOGS_MAX_ADDRESSES says otherwise', () => {
    expect(indexerConfigFromEnv(base).getLogsMaxAddresses).toBe(2_000);
    expect(indexerConfigFromEnv({ ...base, INDEXER_GET_LOGS_MAX_ADDRESSES: '500' }).getLogsMaxAddresses).toBe(
      500,
    );
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_GET_LOGS_MAX_ADDRESSES: '0' })).toThrow(
      'INDEXER_GET_LOGS_MAX_ADDRESSES must be an integer from 1 to 100000 in decimal digits, got "0"',
    );
  });

  it('asks for template events from any address past 10,000 data sources unless INDEXER_STATIC_FILTERS_THRESHOLD says otherwise', () => {
    expect(indexerConfigFromEnv(base).staticFiltersThreshold).toBe(10_000);
    expect(
      indexerConfigFromEnv({ ...base, INDEXER_STATIC_FILTERS_THRESHOLD: '500' }).staticFiltersThreshold,
    ).toBe(500);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_STATIC_FILTERS_THRESHOLD: '-1' })).toThrow(
      'INDEXER_STATIC_FILTERS_THRESHOLD must be an integer of at least 0 in decimal digits, got "-1"',
    );
  });

  it("reads files from no IPFS server unless IPFS_URL names one, from arweave.net, within graph-node's bounds by default", () => {
    expect(indexerConfigFromEnv(base).files).toEqual({
      ipfsUrl: undefined,
      arweaveUrl: 'https://arweave.net',
      timeoutMs: 60_000,
      maxFileBytes: 25 * 1024 * 1024,
      maxRetryMs: 600_000,
    });
    expect(indexerConfigFromEnv({ ...base, IPFS_URL: 'http://127.0.0.1:5001' }).files.ipfsUrl).toBe(
      'http://127.0.0.1:5001',
    );
  });

  it('refuses a file server URL that is not http(s) and a file bound out of range, naming the variable', () => {
    expect(() => indexerConfigFromEnv({ ...base, IPFS_URL: 'ipfs://bafy' })).toThrow(
      'IPFS_URL must be an http(s) URL (an IPFS gateway or kubo RPC API), got "ipfs://bafy"',
    );
    expect(() => indexerConfigFromEnv({ ...base, ARWEAVE_URL: 'ar://x' })).toThrow(
      'ARWEAVE_URL must be an http(s) URL (an Arweave gateway), got "ar://x"',
    );
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_FILE_TIMEOUT_MS: '5' })).toThrow(
      'INDEXER_FILE_TIMEOUT_MS must be an integer from 100 to 3600000 in decimal digits, got "5"',
    );
  });
});

describe('the indexer configuration: numbers, network, RPC URL and the devnet deployment', () => {
  const dirs = tempDirs();
  afterAll(() => dirs.removeAll());

  it('reads a PORT of blanks as unset (8000), never as 0, which would pick a random port', () => {
    expect(indexerConfigFromEnv({ ...base, PORT: ' ' }).port).toBe(8000);
    expect(indexerConfigFromEnv({ ...base, PORT: ' 8081\r\n' }).port).toBe(8081);
    expect(() => indexerConfigFromEnv({ ...base, PORT: ' 80 81 ' })).toThrow(
      'PORT must be an integer from 0 to 65535 in decimal digits, got "80 81"',
    );
  });

  it('refuses hexadecimal and exponent notations of a number', () => {
    expect(() => indexerConfigFromEnv({ ...base, PORT: '0x1F40' })).toThrow('got "0x1F40"');
    expect(() => indexerConfigFromEnv({ ...base, PORT: '1e3' })).toThrow('got "1e3"');
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_POLL_INTERVAL_MS: '1e3' })).toThrow(
      'INDEXER_POLL_INTERVAL_MS must be an integer from 10 to 600000 in decimal digits, got "1e3"',
    );
  });

  it('takes a PORT of decimal digits, and 8000 when it is unset or empty', () => {
    expect(indexerConfigFromEnv({ ...base, PORT: '8081' }).port).toBe(8081);
    expect(indexerConfigFromEnv({ ...base, PORT: '' }).port).toBe(8000);
    expect(indexerConfigFromEnv(base).port).toBe(8000);
  });

  it('refuses a NETWORK that networks.json lacks, listing the networks it has', () => {
    expect(() => indexerConfigFromEnv({ ...base, NETWORK: 'nosuch' })).toThrow(
      'NETWORK must be a network of subgraph/networks.json (devnet, sepolia), got "nosuch"',
    );
  });

  it('shows only the scheme and host of an RPC URL', () => {
    expect(redactUrl('https://mainnet.infura.io/v3/MYAPIKEY123')).toBe('https://mainnet.infura.io/…');
    expect(redactUrl('http://user:secret@127.0.0.1:1/v3/MYAPIKEY123')).toBe('http://127.0.0.1:1/…');
    expect(redactUrl('http://127.0.0.1:8545/?key=abc')).toBe('http://127.0.0.1:8545/…');
    expect(redactUrl('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
  });

  it('shows a Redis URL without path or credentials whole, and hides its database and password', () => {
    expect(redactUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redactUrl('redis://:secret@127.0.0.1:6379/2')).toBe('redis://127.0.0.1:6379/…');
  });

  it('refuses an RPC_URL that is not http(s) without echoing its credentials or key', () => {
    let message = '';
    try {
      indexerConfigFromEnv({ ...base, RPC_URL: 'ftp://user:secret@node.example/v3/MYAPIKEY123' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('RPC_URL must be an http(s) URL');
    expect(message).toContain('ftp://node.example/…');
    expect(message).not.toMatch(/secret|MYAPIKEY123|user/);
  });

  it("looks for the devnet's deployment.json where npm run devnet writes it, not under DATA_DIR", () => {
    expect(devnetDataDir({ DATA_DIR: '/srv/indexer-data' })).toBe(resolve('data', 'devnet'));
    expect(devnetDataDir({ DEVNET_DATA_DIR: '/srv/devnet' })).toBe('/srv/devnet');
  });

  it('takes the RPC URL from the deployment.json in DEVNET_DATA_DIR when RPC_URL is unset', () => {
    const dir = dirs.make('indexer-config-');
    writeFileSync(join(dir, 'deployment.json'), JSON.stringify({ rpcUrl: 'http://127.0.0.1:34567' }));
    const config = indexerConfigFromEnv({ DEVNET_DATA_DIR: dir, DATA_DIR: dirs.make('indexer-config-') });
    expect(config.rpcUrl).toBe('http://127.0.0.1:34567');
  });

  it('says where it looked for deployment.json and how to point at it when there is none', () => {
    const dir = dirs.make('indexer-config-');
    expect(() => indexerConfigFromEnv({ DEVNET_DATA_DIR: dir })).toThrow(
      `RPC_URL is not set and there is no devnet deployment at ${join(dir, 'deployment.json')} (DEVNET_DATA_DIR=${dir}): start \`npm run devnet\`, set DEVNET_DATA_DIR`,
    );
  });

  it('names a malformed deployment.json', () => {
    const dir = dirs.make('indexer-config-');
    const file = join(dir, 'deployment.json');
    writeFileSync(file, '{ "rpcUrl": ');
    expect(() => indexerConfigFromEnv({ DEVNET_DATA_DIR: dir })).toThrow(
      `RPC_URL is not set and the devnet deployment ${file} cannot be read`,
    );
    writeFileSync(file, '{ "chainId": 31337 }');
    expect(() => indexerConfigFromEnv({ DEVNET_DATA_DIR: dir })).toThrow(
      `the devnet deployment ${file} has no "rpcUrl" string`,
    );
  });

  it('requires RPC_URL for a network other than devnet', () => {
    expect(() => indexerConfigFromEnv({ NETWORK: 'sepolia' })).toThrow(
      'RPC_URL is required with NETWORK=sepolia',
    );
  });
});
